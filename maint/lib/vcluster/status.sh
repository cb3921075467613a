# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# status.sh - what vcluster tells a person about clusters: the summary `up` prints, the
# table of `status` (every interface with its MAC, MTU, state, rate, loss rule, peer and
# counters, read from the kernel), and the one-line-a-cluster `list`.
#
# Owns: the formats of those three outputs; summary, show_status, status_ns,
# list_clusters.
# Expects: base.sh, topology.sh, state.sh (load_state, healthy), slurm.sh (slurm_port);
# the settings as
# globals, DIR and IFN (load_state sets them); reads what links.sh made (tbf qdiscs,
# and the loss programs' settings and counters through links.sh's loss_tool).

summary() {
    local nics_what
    if [ "$TOPO" = switch ]; then nics_what="$NICS rail(s)"; else nics_what="${#IFN[@]} links/node (${IFN[*]})"; fi
    echo "  topology:    $SPEC, $NODES nodes ($NAME-n0 .. $NAME-n$((NODES - 1))), $nics_what"
    local ipv4=", no IP addresses"
    [ "$DATA_IP" = 0 ] || ipv4=", IPv4 addresses (--data-ip)"
    echo "  data links:  mtu $MTU, rate ${RATE:-unshaped}${BURST:+ (burst $BURST bytes)}, loss ${LOSS}%$ipv4"
    [ "$ROUTES" = 0 ] || echo "  routes:      PME's routes and forwarder on every node (pme_route install; --routes)"
    echo "  management:  bridge $NAME-mgmt 10.$NET.0.254/24, node i = 10.$NET.0.(i+1)"
    echo "  description: $DIR/cluster.json"
    echo "  hostfile:    $DIR/hostfile    launcher: $DIR/launcher"
    if [ "$SLURM" = 1 ]; then
        slurm_port
        echo "  slurm:       slurmctld 10.$NET.0.254:$REPLY, a slurmd per node; SLURM_CONF=$DIR/slurm/slurm.conf"
    fi
}

# show_status: the state line, the summary and the table of the loaded cluster.
show_status() {
    local state=up
    [ "$COMPLETE" = 1 ] || state="INCOMPLETE (an up failed or is running; 'down' removes it)"
    healthy "$NAME" || state="DAMAGED (parts are missing; 'up --rebuild' or 'down')"
    echo "cluster $NAME: $state"
    summary
    echo
    local i j peers
    printf '%-10s %-7s %-17s %-5s %-5s %-9s %-7s %-14s %9s %7s %9s %7s %9s\n' \
        NODE IFACE MAC MTU STATE RATE LOSS PEER RX_PKTS RX_DROP TX_PKTS TX_DROP LOSS_DROP
    for ((i = 0; i < NODES; i++)); do
        peers="mgmt0=$NAME-mgmt"
        for ((j = 0; j < ${#IFN[@]}; j++)); do
            if [ "$TOPO" = switch ]; then
                peers+=" ${IFN[j]}=switch:r$j"
            else
                peer_of "$i" "$j"
                peers+=" ${IFN[j]}=$(node_ns "$PNODE")/${IFN[PIF]}"
            fi
        done
        status_ns "$(node_ns "$i")" "$peers" "mgmt0 ${IFN[*]}"
    done
    if [ "$TOPO" = switch ]; then
        local ports="" k
        peers=
        for ((k = 0; k < NICS; k++)); do
            ports+=" r$k"; peers+=" r$k=rail$k"
            for ((i = 0; i < NODES; i++)); do ports+=" n${i}r$k"; peers+=" n${i}r$k=$(node_ns "$i")/eth$k"; done
        done
        status_ns "$NAME-sw" "$peers" "$ports"
    fi
}

# status_ns NS PEERS IFACES: one table row per interface of namespace NS, from one visit.
status_ns() {
    local ns=$1 linkloss=
    if [ "$LOSS_THR" != 0 ] && loss_tool; then linkloss=$LINKLOSS; fi
    if [ ! -e "/run/netns/$ns" ]; then
        printf '%-10s (namespace missing)\n' "$ns"
        return 0
    fi
    nsenter --net="/run/netns/$ns" sh -c '
        echo @dev; cat /proc/net/dev
        echo @link; ip -o link show
        echo @tc; tc qdisc show
        echo @loss
        [ -z "$1" ] || for d in $2; do echo "$d $("$1" show "$d" 2>/dev/null)"; done' _ "$linkloss" "$3" |
        awk -v ns="$ns" -v peers="$2" -v order="$3" '
        BEGIN { n = split(peers, p, " "); for (i = 1; i <= n; i++) { split(p[i], kv, "="); peer[kv[1]] = kv[2] } }
        /^@/ { sec = $1; next }
        sec == "@dev" && /:/ {
            sub(/^ */, ""); split($0, a, ":"); d = a[1]; split(a[2], f, " ")
            rxp[d] = f[2]; rxd[d] = f[4]; txp[d] = f[10]; txd[d] = f[12]; next }
        sec == "@link" {
            d = $2; sub(/:$/, "", d); sub(/@.*/, "", d)
            for (i = 1; i <= NF; i++) { if ($i == "mtu") mtu[d] = $(i+1); if ($i == "state") st[d] = $(i+1); if ($i == "link/ether") mac[d] = $(i+1) }
            next }
        sec == "@tc" && $1 == "qdisc" && $2 == "tbf" {
            for (i = 1; i <= NF; i++) { if ($i == "dev") d = $(i+1); if ($i == "rate") rate[d] = $(i+1) }
            next }
        sec == "@loss" && $2 == "threshold" { loss[$1] = sprintf("%g%%", $3 / 1000); ldrop[$1] = $7; next }
        END {
            m = split(order, o, " ")
            for (i = 1; i <= m; i++) {
                d = o[i]
                printf "%-10s %-7s %-17s %-5s %-5s %-9s %-7s %-14s %9s %7s %9s %7s %9s\n", (i == 1 ? ns : ""), d,
                    (d in mac ? mac[d] : "MISSING"), mtu[d], st[d], (d in rate ? rate[d] : "-"),
                    (d in loss ? loss[d] : "-"), (d in peer ? peer[d] : "-"),
                    rxp[d], rxd[d], txp[d], txd[d], (d in ldrop ? ldrop[d] : "-")
            }
        }'
}

# list_clusters: one line per cluster of VC_RUN, or a line saying there is none.
list_clusters() {
    local s found=0
    for s in "$VC_RUN"/*/state; do
        [ -f "$s" ] || continue
        (
            load_state "$(basename "$(dirname "$s")")"
            local st=up
            [ "$COMPLETE" = 1 ] || st=incomplete
            healthy "$NAME" || st=damaged
            printf '%-9s %-10s %-14s %4s nodes  10.%s.0.0/24  %s\n' "$NAME" "$st" "$SPEC" "$NODES" "$NET" "$DIR/cluster.json"
        )
        found=1
    done
    [ "$found" = 1 ] || echo "no vclusters (state directory $VC_RUN)"
}
