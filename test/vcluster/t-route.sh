#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Mesh forwarding in the kernel (pme_route install, src/bpf/pme_fwd.bpf.c) on ring:4,
# torus:2x2 and torus:2x2x2 clusters: every node installs its routes from the cluster's
# description, then sends a version 2 PME frame to every other node through its route
# file, as pme_core will. Each frame arrives exactly once, at its destination only, on
# the interface the dimension-order path ends on, with the Ethernet addresses of that
# last link and hops_left reduced by the number of nodes that forwarded it; the
# forwarders' counters add up to the path lengths, which are the torus distances. A
# frame with too few hops is dropped and counted where it runs out, a destination
# without a route is dropped and counted, version 1 PME frames and other EtherTypes on
# the data links pass untouched, IPv4 (ping) over data links and the management network
# works beside the forwarder, and remove takes it all away again (those clusters come
# up with --no-routes, and get none). On torus:2x2x2 the
# routes come from `vcluster up` itself (its default on a ring or torus), and `vcluster
# down` removes them.
# "test && test || fail" is these tests' idiom for checks:
# shellcheck disable=SC2015
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=50 time=22
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/vcluster/faults-lib.sh
. "$(dirname "$0")/faults-lib.sh"
vc_init vro
ROUTE=${builddir:-$VC_SRCDIR/build}/src/tools/pme_route
[ -x "$ROUTE" ] || fail "$ROUTE is not built (configure and make first)"
cc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$VC_SRCDIR/src/pme_core" -I"$VC_SRCDIR/src/tools" \
    -o "$TMPD/routeprobe" "$VC_SRCDIR/test/vcluster/routeprobe.c" "$VC_SRCDIR/src/tools/routefile.c" ||
    fail "cannot build routeprobe"
RP=$TMPD/routeprobe
ET=0x88b5
H=16

# Route files live in /run/pme, keyed by each node's network namespace: remove them
# whatever happens (the namespaces go with the cluster, files in /run would stay).
ROUTE_FILES=()
route_cleanup() {
    local rc=$?
    [ ${#ROUTE_FILES[@]} -eq 0 ] || rm -f "${ROUTE_FILES[@]}"
    (exit $rc)
    vc_cleanup
}
trap route_cleanup EXIT

# counters NAME NODE: the forwarder's counters on that node, key=value.
counters() { vc_in "$1" "$1-n$2" "$ROUTE" show --kv; }
# sum NAME NODES KEY: a counter summed over the nodes.
sum() {
    local n=$1 nodes=$2 key=$3 i s=0 v
    for ((i = 0; i < nodes; i++)); do v=$(kv "$key" "$(counters "$n" "$i")"); s=$((s + v)); done
    echo $s
}

# listen_all NAME NODES [ETHERTYPE] / collect NAME NODES: routeprobe listen on every
# node; the lines received, prefixed with the node, in $TMPD/got.
listen_all() {
    local n=$1 nodes=$2 et=${3:-$ET} i r
    LPIDS=()
    rm -f "$TMPD"/ready.* "$TMPD"/rx.*
    for ((i = 0; i < nodes; i++)); do
        vc_bg "$n" "$n-n$i" "$RP" listen "$et" "$TMPD/ready.$i" >"$TMPD/rx.$i"
        LPIDS+=("$BGPID")
    done
    for ((r = 0; r < 100; r++)); do
        [ "$(find "$TMPD" -maxdepth 1 -name 'ready.*' | wc -l)" = "$nodes" ] && break
        sleep 0.05
    done
    [ "$r" -lt 100 ] || fail "listeners did not start"
}
collect() {
    local nodes=$2 i
    sleep 0.3
    kill -TERM "${LPIDS[@]}" 2>/dev/null || true
    wait "${LPIDS[@]}" 2>/dev/null || true
    for ((i = 0; i < nodes; i++)); do sed "s/^/$i /" "$TMPD/rx.$i"; done | sort >"$TMPD/got"
}

# expected NAME: for every ordered pair, the line the destination must print:
#   <dst> <iface> <src-mac> <dst-mac> 2 1 <src> <dst> <hops_left> <src>-<dst>
# computed from the description alone: the path is dimension order with the shorter
# way round ("+" on a tie), so it ends in the last dimension where the coordinates
# differ, arriving on the "-" interface when it goes "+"; the addresses are those of
# that interface and of its peer.
expected() {
    "$VC" describe --name "$1" --tsv | awk -F'\t' -v H=$H '
        $1 == "cluster" { split($4, s, ":"); nd = split(s[2], dims, "x") }
        $1 == "node" { n = $2; nodes = n + 1; split($5, c, ","); for (d = 1; d <= nd; d++) co[n, d] = c[d] }
        $1 == "iface" { mac[$2, $3] = $4; peer[$2, $3] = $8 }
        END {
            split("x y z", L, " ")
            for (a = 0; a < nodes; a++) for (b = 0; b < nodes; b++) {
                if (a == b) continue
                dist = 0; last = 0
                for (d = 1; d <= nd; d++) {
                    k = dims[d]; f = (co[b, d] - co[a, d] + k) % k
                    if (f == 0) continue
                    m = (f <= k - f) ? f : k - f; dist += m; last = d; plus = (f <= k - f)
                }
                ifc = L[last] (plus ? "m" : "p")
                printf "%d %s %s %s 2 1 %d %d %d %d-%d\n", b, ifc, peer[b, ifc], mac[b, ifc], a, b, H - (dist - 1), a, b
                total += dist - 1
            }
            print total > "/dev/stderr"
        }' 2>"$TMPD/forwards" | sort
}

# route_topology SPEC SUFFIX [--routes]: the checks below on a cluster of that topology,
# whose routes are installed on every node by hand (`up --no-routes`) or, with --routes,
# by `vcluster up` by default (and then removed by `vcluster down`).
route_topology() {
    local spec=$1 n=${NAME:0:5}$2 by_up=${3:-} nodes i j dsts=()
    if [ "$by_up" = --routes ]; then
        PME_ROUTE=$ROUTE VC_DEFAULT_ROUTES=1 vc_up "$n" --topology "$spec" --data-ip >/dev/null
    else
        vc_up "$n" --topology "$spec" --data-ip --no-routes >/dev/null
        for ((i = 0; i < $(jq .node_count <<<"$(vc_json "$n")"); i++)); do
            [ ! -e "$(vc_in "$n" "$n-n$i" "$ROUTE" path)" ] || fail "$spec: up --no-routes installed routes"
        done
    fi
    nodes=$(jq .node_count <<<"$(vc_json "$n")")
    local tsv=/run/vcluster/$n/cluster.tsv
    for ((i = 0; i < nodes; i++)); do
        # no --node: a virtual node's hostname is its name in the description
        [ "$by_up" = --routes ] ||
            vc_in "$n" "$n-n$i" "$ROUTE" install "$tsv" >/dev/null || fail "$spec: install on node $i failed"
        ROUTE_FILES+=("$(vc_in "$n" "$n-n$i" "$ROUTE" path)")
        [ -f "${ROUTE_FILES[-1]}" ] || fail "$spec: node $i has no route file ${ROUTE_FILES[-1]}"
        grep -q "^node $i\$" "${ROUTE_FILES[-1]}" || fail "$spec: node $i's route file is not its own"
    done
    [ "$by_up" != --routes ] || say "ok: $spec: vcluster up installed every node's routes by itself"
    [ "$(printf '%s\n' "${ROUTE_FILES[@]}" | sort -u | wc -l)" = "${#ROUTE_FILES[@]}" ] ||
        fail "$spec: two nodes share a route file"

    # every node to every other node
    listen_all "$n" "$nodes"
    for ((i = 0; i < nodes; i++)); do
        dsts=()
        for ((j = 0; j < nodes; j++)); do ((i == j)) || dsts+=("$j:$i-$j"); done
        vc_in "$n" "$n-n$i" "$RP" send $ET $H "${dsts[@]}" || fail "$spec: send from $i failed"
    done
    collect "$n" "$nodes"
    local want; want=$(expected "$n")
    if [ "$(cat "$TMPD/got")" != "$want" ]; then
        diff <(echo "$want") "$TMPD/got" | head -30 >&2 || true
        fail "$spec: frames did not arrive exactly as expected ('<' expected only, '>' received only)"
    fi
    local fw; fw=$(sum "$n" "$nodes" forwarded)
    [ "$fw" = "$(cat "$TMPD/forwards")" ] ||
        fail "$spec: the forwarders forwarded $fw frames, the paths need $(cat "$TMPD/forwards")"
    say "ok: $spec: $((nodes * (nodes - 1))) frames, each once at its destination on the last link of its shortest dimension-order path ($fw forwardings)"

    # hop limit: node 0 to its farthest node, with one hop too few, with none, and with
    # just enough
    local far fard
    read -r far fard < <(awk -v H=$H '$7 == 0 { print $8, H + 1 - $9 }' <<<"$want" | sort -k2 -n | tail -1)
    if ((fard > 1)); then
        local before; before=$(sum "$n" "$nodes" hop_limit)
        listen_all "$n" "$nodes"
        vc_in "$n" "$n-n0" "$RP" send $ET $((fard - 1)) "$far:short" || fail "send failed"
        vc_in "$n" "$n-n0" "$RP" send $ET 0 "$far:none" || fail "send failed"
        vc_in "$n" "$n-n0" "$RP" send $ET "$fard" "$far:enough" || fail "send failed"
        collect "$n" "$nodes"
        ! grep -Eq " (short|none)\$" "$TMPD/got" ||
            fail "$spec: a frame with too few hops crossed $fard links: $(cat "$TMPD/got")"
        [ "$(grep -c " enough\$" "$TMPD/got")" = 1 ] && grep -q "^$far .* 1 enough\$" "$TMPD/got" ||
            fail "$spec: the frame with $fard hops did not arrive once at $far with 1 left: $(cat "$TMPD/got")"
        [ "$(sum "$n" "$nodes" hop_limit)" = $((before + 2)) ] ||
            fail "$spec: the hop limit counters did not count the two frames with too few hops"
        say "ok: $spec: to node $far ($fard links) frames with $((fard - 1)) or 0 hops are dropped and counted, $fard arrive with 1 left"
    fi

    # no route: node 0 sends to node 200 through a neighbour; version 1 frames and other
    # EtherTypes pass that neighbour untouched
    local ifc nb pif mac
    read -r ifc nb pif mac < <(awk -F'\t' '$1 == "iface" && $2 == 0 { print $3, $6, $7, $8; exit }' "$tsv")
    local nr; nr=$(kv no_route "$(counters "$n" "$nb")")
    local other; other=$(kv not_pme "$(counters "$n" "$nb")")
    listen_all "$n" "$nodes"
    vc_in "$n" "$n-n0" "$RP" sendvia $ET "$ifc" "$mac" 2 200 $H nowhere || fail "sendvia failed"
    vc_in "$n" "$n-n0" "$RP" sendvia $ET "$ifc" "$mac" 1 200 $H version1 || fail "sendvia failed"
    collect "$n" "$nodes"
    ! grep -q " nowhere\$" "$TMPD/got" || fail "$spec: a frame to a node without route arrived"
    [ "$(kv no_route "$(counters "$n" "$nb")")" = $((nr + 1)) ] ||
        fail "$spec: node $nb did not count the frame it had no route for"
    [ "$(grep -c " version1\$" "$TMPD/got")" = 1 ] && grep -q "^$nb $pif .* 1 1 0 200 $H version1\$" "$TMPD/got" ||
        fail "$spec: the version 1 frame did not reach node $nb untouched: $(cat "$TMPD/got")"
    listen_all "$n" "$nodes" 0x88b6
    vc_in "$n" "$n-n0" "$RP" sendvia 0x88b6 "$ifc" "$mac" 2 200 $H otherproto || fail "sendvia failed"
    collect "$n" "$nodes"
    [ "$(grep -c " otherproto\$" "$TMPD/got")" = 1 ] && grep -q "^$nb $pif .* $H otherproto\$" "$TMPD/got" ||
        fail "$spec: a frame of another EtherType did not pass to node $nb: $(cat "$TMPD/got")"
    [ "$(kv not_pme "$(counters "$n" "$nb")")" -gt "$other" ] || fail "$spec: not_pme did not count it"
    say "ok: $spec: no route: dropped and counted at node $nb; version 1 and other EtherTypes pass untouched"

    # IPv4 beside the forwarder: over a data link, and over the management network
    local pip
    pip=$(jq -r --argjson b "$nb" --arg f "$pif" '.nodes[$b].ifaces[] | select(.name == $f) | .ip' <<<"$(vc_json "$n")")
    vc_in "$n" "$n-n0" ping -c 2 -W 2 "${pip%/*}" >/dev/null || fail "$spec: ping over the data link to ${pip%/*} failed"
    vc_in "$n" "$n-n0" ping -c 2 -W 2 "$n-n$((nodes - 1))" >/dev/null || fail "$spec: ping over the management network failed"
    say "ok: $spec: ping over a data link (${pip%/*}) and over the management network"

    if [ "$by_up" = --routes ]; then
        "$VC" down --name "$n" >/dev/null || fail "$spec: vcluster down failed"
        for ((i = 0; i < nodes; i++)); do
            [ ! -e "${ROUTE_FILES[i]}" ] || fail "$spec: vcluster down left ${ROUTE_FILES[i]}"
        done
        ROUTE_FILES=()
        say "ok: $spec: vcluster down removed every node's route file"
        return 0
    fi

    # remove: no forwarding, no route files
    for ((i = 0; i < nodes; i++)); do
        vc_in "$n" "$n-n$i" "$ROUTE" remove >/dev/null || fail "$spec: remove on node $i failed"
        [ ! -e "${ROUTE_FILES[i]}" ] || fail "$spec: remove left ${ROUTE_FILES[i]}"
        vc_in "$n" "$n-n$i" tc filter show dev "$ifc" ingress | grep -q pme_fwd &&
            fail "$spec: remove left the forwarder on node $i"
    done
    ROUTE_FILES=()
    vc_check_down "$n"
}

route_topology ring:4 a
route_topology torus:2x2 b
route_topology torus:2x2x2 c --routes

# --routes is refused where it means nothing
"$VC" up --name "${NAME:0:5}d" --topology switch --nodes 2 --routes >"$TMPD/sw.out" 2>&1 &&
    fail "up --routes on a switch was accepted"
grep -q "ring and torus" "$TMPD/sw.out" || fail "up --routes on a switch: no clear reason: $(cat "$TMPD/sw.out")"
say "ok: --routes on a switch is refused with the reason"
