# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# describe.sh - the cluster's description files, which programs read to learn the
# cluster without asking vcluster: cluster.json (schema vcluster/1, documented in the
# doc/vcluster.md) and cluster.tsv (the same facts, one record a line, for
# C programs without a JSON parser).
#
# Owns: SCHEMA, the formats of cluster.json and cluster.tsv; write_json, write_tsv,
# print_description.
# Expects: base.sh, topology.sh; the settings of state.sh as globals, DIR and IFN.
# Writes each file beside itself first and renames it, so a reader never sees half.

readonly SCHEMA=vcluster/1

jstr_or_null() { if [ -n "$1" ]; then printf '"%s"' "$1"; else printf null; fi; }
jbool() { if [ "$1" = 1 ]; then echo true; else echo false; fi; }

write_json() {
    local f=$DIR/cluster.json.tmp
    {
        json_settings
        json_switches
        json_links
        json_nodes
        printf '}\n'
    } >"$f"
    mv "$f" "$DIR/cluster.json"
}

# json_settings: the cluster's settings, the files it has and its management network.
json_settings() {
    local is_switch=0
    [ "$TOPO" != switch ] || is_switch=1
    printf '{\n  "schema": "%s",\n  "name": "%s",\n  "topology": "%s",\n  "spec": "%s",\n' "$SCHEMA" "$NAME" "$TOPO" "$SPEC"
    printf '  "dims": [%s],\n' "$(IFS=,; echo "${DIMS[*]}")"
    printf '  "wraparound": %s,\n' "$(jbool $((1 - is_switch)))"
    printf '  "node_count": %s,\n  "nics": %s,\n  "mtu": %s,\n' "$NODES" "$NICS" "$MTU"
    printf '  "rate": %s,\n  "rate_bps": %s,\n  "burst_bytes": %s,\n' "$(jstr_or_null "$RATE")" "${RATE_BPS:-null}" "${BURST:-null}"
    printf '  "loss_percent": %s,\n  "data_ip": %s,\n' "$LOSS" "$(jbool "$DATA_IP")"
    printf '  "state_dir": "%s",\n  "hostfile": "%s",\n  "launcher": "%s",\n  "env_file": "%s",\n' "$DIR" "$DIR/hostfile" "$DIR/launcher" "$DIR/env"
    printf '  "mgmt": {"bridge": "%s", "subnet": "10.%s.0.0/24", "host_ip": "10.%s.0.254", "iface": "mgmt0"},\n' "$NAME-mgmt" "$NET" "$NET"
}

# json_switches: one switch per rail (switch topology; empty otherwise), with its members.
json_switches() {
    local i k
    printf '  "switches": ['
    if [ "$TOPO" = switch ]; then
        for ((k = 0; k < NICS; k++)); do
            ((k == 0)) || printf ','
            printf '\n    {"rail": %s, "bridge": "r%s", "netns": "%s-sw", "members": [' "$k" "$k" "$NAME"
            for ((i = 0; i < NODES; i++)); do
                ((i == 0)) || printf ', '
                mac "$MT_RAIL" "$i" "$k"
                printf '{"node": "%s", "index": %s, "iface": "eth%s", "mac": "%s", "port": "n%sr%s"}' "$(node_ns "$i")" "$i" "$k" "$REPLY" "$i" "$k"
            done
            printf ']}'
        done
        printf '\n  '
    fi
    printf '],\n'
}

# json_links: every cable, once (a torus link from its "+" end).
json_links() {
    local i k d sep=
    printf '  "links": ['
    for ((i = 0; i < NODES; i++)); do
        if [ "$TOPO" = switch ]; then
            for ((k = 0; k < NICS; k++)); do
                printf '%s\n    {"a": {"node": "%s", "iface": "eth%s"}, "b": {"switch": "r%s", "netns": "%s-sw", "port": "n%sr%s"}, "rail": %s}' \
                    "$sep" "$(node_ns "$i")" "$k" "$k" "$NAME" "$i" "$k" "$k"
                sep=,
            done
        else
            for ((d = 0; d < ${#DIMS[@]}; d++)); do
                neighbour "$i" "$d" 1
                printf '%s\n    {"a": {"node": "%s", "iface": "%sp"}, "b": {"node": "%s", "iface": "%sm"}, "dim": %s}' \
                    "$sep" "$(node_ns "$i")" "${LETTERS[d]}" "$(node_ns "$NB")" "${LETTERS[d]}" "$d"
                sep=,
            done
        fi
    done
    printf '\n  ],\n'
}

# json_nodes: every node, its management interface and its data interfaces.
json_nodes() {
    local i j ns
    printf '  "nodes": ['
    for ((i = 0; i < NODES; i++)); do
        ns=$(node_ns "$i")
        ((i == 0)) || printf ','
        coords "$i"
        mac "$MT_MGMT" "$i" 0
        printf '\n    {"index": %s, "name": "%s", "hostname": "%s", "netns": "%s", "uts": "%s",\n' "$i" "$ns" "$ns" "$ns" "$DIR/uts/$ns"
        printf '     "coords": [%s],\n' "$(IFS=,; echo "${C[*]}")"
        printf '     "mgmt": {"iface": "mgmt0", "ip": "10.%s.0.%s", "mac": "%s"},\n' "$NET" $((i + 1)) "$REPLY"
        printf '     "ifaces": ['
        for ((j = 0; j < ${#IFN[@]}; j++)); do
            ((j == 0)) || printf ','
            json_iface "$i" "$j"
        done
        printf '\n     ]}'
    done
    printf '\n  ]\n'
}

# json_iface I J: node I's J-th data interface and the interfaces it reaches.
json_iface() {
    local i=$1 j=$2 k sep ip=null me dir
    if [ "$DATA_IP" = 1 ]; then data_ip "$i" "$j"; ip="\"$REPLY\""; fi
    if [ "$TOPO" = switch ]; then
        mac "$MT_RAIL" "$i" "$j"
        printf '\n       {"name": "%s", "mac": "%s", "mtu": %s, "ip": %s, "rail": %s, "switch": "r%s", "dim": null, "dir": null,\n        "peers": [' \
            "${IFN[j]}" "$REPLY" "$MTU" "$ip" "$j" "$j"
        sep=
        for ((k = 0; k < NODES; k++)); do
            ((k == i)) && continue
            mac "$MT_RAIL" "$k" "$j"
            printf '%s{"node": "%s", "index": %s, "iface": "eth%s", "mac": "%s"}' "$sep" "$(node_ns "$k")" "$k" "$j" "$REPLY"
            sep=', '
        done
        printf ']}'
    else
        mac "$MT_LINK" "$i" "$j"; me=$REPLY
        peer_of "$i" "$j"
        mac "$MT_LINK" "$PNODE" "$PIF"
        if ((j % 2 == 0)); then dir=1; else dir=-1; fi
        printf '\n       {"name": "%s", "mac": "%s", "mtu": %s, "ip": %s, "rail": null, "switch": null, "dim": %s, "dir": %s,\n        "peers": [{"node": "%s", "index": %s, "iface": "%s", "mac": "%s"}]}' \
            "${IFN[j]}" "$me" "$MTU" "$ip" $((j / 2)) "$dir" "$(node_ns "$PNODE")" "$PNODE" "${IFN[PIF]}" "$REPLY"
    fi
}

# write_tsv: the same facts as cluster.json, sscanf-friendly ("-" stands for "none"):
#   cluster NAME TOPO SPEC NODES NICS MTU RATE LOSS MGMT-SUBNET
#   node INDEX NAME MGMT-IP COORDS
#   iface NODE IFACE MAC (RAIL|IFACE) PEER-NODE PEER-IFACE PEER-MAC   (one a peer)
write_tsv() {
    local i j k me cs f=$DIR/cluster.tsv.tmp
    {
        echo "# $SCHEMA cluster description (see doc/vcluster.md); fields are separated by one tab"
        printf 'cluster\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t10.%s.0.0/24\n' "$NAME" "$TOPO" "$SPEC" "$NODES" "$NICS" "$MTU" "${RATE:--}" "$LOSS" "$NET"
        for ((i = 0; i < NODES; i++)); do
            coords "$i"
            cs=$(IFS=,; echo "${C[*]}")
            printf 'node\t%s\t%s\t10.%s.0.%s\t%s\n' "$i" "$(node_ns "$i")" "$NET" $((i + 1)) "${cs:--}"
        done
        for ((i = 0; i < NODES; i++)); do
            for ((j = 0; j < ${#IFN[@]}; j++)); do
                if [ "$TOPO" = switch ]; then
                    mac "$MT_RAIL" "$i" "$j"; me=$REPLY
                    for ((k = 0; k < NODES; k++)); do
                        ((k == i)) && continue
                        mac "$MT_RAIL" "$k" "$j"
                        printf 'iface\t%s\t%s\t%s\trail%s\t%s\t%s\t%s\n' "$i" "${IFN[j]}" "$me" "$j" "$k" "${IFN[j]}" "$REPLY"
                    done
                else
                    mac "$MT_LINK" "$i" "$j"; me=$REPLY
                    peer_of "$i" "$j"
                    mac "$MT_LINK" "$PNODE" "$PIF"
                    printf 'iface\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "${IFN[j]}" "$me" "${IFN[j]}" "$PNODE" "${IFN[PIF]}" "$REPLY"
                fi
            done
        done
    } >"$f"
    mv "$f" "$DIR/cluster.tsv"
}

# print_description json|tsv|path: what `describe` prints of a complete cluster.
print_description() {
    [ "$COMPLETE" = 1 ] || die "$E_FAIL" "cluster $NAME is incomplete (an up failed or is running)"
    case $1 in
    path) echo "$DIR/cluster.json" ;;
    tsv) cat "$DIR/cluster.tsv" ;;
    json) cat "$DIR/cluster.json" ;;
    esac
}
