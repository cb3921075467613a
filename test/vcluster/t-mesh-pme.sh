#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# PME's transport on a mesh: on a ring:4 cluster that `vcluster up` gave routes (its
# default on a ring or torus), a pme_perf client on node 0 and its server on node 2,
# two links apart, both with no interface named: each endpoint spans its node's data
# interfaces from the route file (pme_info lists them), takes its node id from it, and
# reaches the other through node 1's or node 3's in-kernel forwarder. The ping-pong and
# the stream (eager and rendezvous sizes) are checked byte for byte, and the forwarder
# on the way counts the frames it forwarded. PME_IFACE as a list (xm,xp) or a pattern
# (*p) makes an endpoint span exactly those interfaces (pme_info), and clients with a
# pattern (x*) or a list reach it; a pattern that matches nothing (y*) is refused with a
# message quoting it. An endpoint limited to the interface the
# route does not leave by (PME_IFACE=xm) fails with a message naming the interface and
# the fix; a node whose route file lacks the destination fails naming pme_route. A link
# taken down during a stream, at the sender's end or the far end, fails the sender within
# seconds (PME_LINK_DOWN_MS), with a message naming both nodes, the interface and its state.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=70 time=35
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/vcluster/faults-lib.sh
. "$(dirname "$0")/faults-lib.sh"
vc_init vms
B=${builddir:-$VC_SRCDIR/build}
PERF=$B/src/tools/pme_perf ROUTE=$B/src/tools/pme_route INFO=$B/src/tools/pme_info
[ -x "$PERF" ] && [ -x "$ROUTE" ] && [ -x "$INFO" ] || fail "pme_perf, pme_route or pme_info is not built"
PME_ROUTE=$ROUTE VC_DEFAULT_ROUTES=1 vc_up "$NAME" --topology ring:4 >/dev/null
grep -q "routes:" <("$VC" status --name "$NAME") || fail "vcluster up gave a ring no routes by default"
export PME_RUNTIME_DIR=$TMPD/run
mkdir -p "$PME_RUNTIME_DIR"

# forwarded NODE: the frames node NODE's forwarder has forwarded so far.
forwarded() {
    vc_in "$NAME" "$NAME-n$1" "$ROUTE" show --kv | tr ' ' '\n' | awk -F= '$1 == "forwarded" { print $2 }'
}
before1=$(forwarded 1) before3=$(forwarded 3)
[ -n "$before1" ] && [ -n "$before3" ] || fail "pme_route show --kv gives no forwarded count"

vc_serve "$NAME" 2 "$PERF" server --verify
[[ $ADDR == pme3:00000002/* ]] || fail "the server on node 2 is not node 2 (its route file's id): $ADDR"
ifaces=$(vc_in "$NAME" "$NAME-n2" "$INFO" -c | awk '/^  pid / { print; exit }')
grep -q "xp,xm" <<<"$ifaces" || fail "pme_info does not list both interfaces of the endpoint: $ifaces"
say "ok: the server on node 2 spans xp,xm from the route file ($ADDR)"

out=$(vc_in "$NAME" "$NAME-n0" "$PERF" client --peer "$ADDR" --verify -s 8,1000,9000,100000,1m \
    -n 100 --seconds 0.2 2>&1) || { echo "$out"; cat "$TMPD/server.out"; fail "pme_perf across two links failed"; }
grep -q "all data verified" <<<"$out" || { echo "$out"; fail "pme_perf did not verify its data"; }
wait "$SERVER" || { cat "$TMPD/server.out"; fail "the server failed"; }
grep "half-RTT" <<<"$out" | sed 's/^/  /'
moved=$(($(forwarded 1) - before1 + $(forwarded 3) - before3))
[ "$moved" -gt 1000 ] || fail "the forwarders of nodes 1 and 3 forwarded only $moved frames"
say "ok: node 0 to node 2 (two links): ping-pong and stream verified, $moved frames forwarded on the way"

# PME_IFACE as a list or a pattern overrides the route file's interfaces: a list keeps
# its order, a pattern takes every match in name order and nothing else. Each server has
# its own runtime directory so that pme_info lists its endpoint alone.
# spans SPEC WANT NODE CLIENT_SPEC: a server on node 2 with PME_IFACE=SPEC spans exactly
# WANT (pme_info), and a client on node NODE with PME_IFACE=CLIENT_SPEC reaches it, data
# verified. (An endpoint receives only on its interfaces: one on xp alone is reached
# from node 3, whose frames arrive there, not from node 0, whose arrive on xm.)
spans() {
    local spec=$1 want=$2 node=$3 cspec=$4 rd=$TMPD/run-$RANDOM got
    mkdir -p "$rd"
    vc_serve "$NAME" 2 env PME_RUNTIME_DIR="$rd" PME_IFACE="$spec" "$PERF" server --verify
    got=$(vc_in "$NAME" "$NAME-n2" env PME_RUNTIME_DIR="$rd" "$INFO" -c | awk '/^  pid / { print $4; exit }')
    [ "$got" = "$want" ] || { kill "$SERVER"; fail "PME_IFACE='$spec': the endpoint spans '$got', not $want"; }
    out=$(vc_in "$NAME" "$NAME-n$node" env PME_IFACE="$cspec" "$PERF" client --peer "$ADDR" --verify \
        -s 8,100000 -n 20 --seconds 0.05 2>&1) ||
        { echo "$out"; kill "$SERVER"; fail "PME_IFACE='$cspec' to PME_IFACE='$spec' failed"; }
    grep -q "all data verified" <<<"$out" || { echo "$out"; fail "PME_IFACE='$cspec': data not verified"; }
    wait "$SERVER" || { cat "$TMPD/server.out"; fail "the server with PME_IFACE='$spec' failed"; }
    say "ok: PME_IFACE='$spec' spans $want; a client on node $node with PME_IFACE='$cspec' reached it"
}
spans 'xm,xp' xm,xp 0 'x*'
spans '*p' xp 3 'xp,xm'
# A pattern that matches no interface of the node: the endpoint is refused, saying which.
if out=$(vc_in "$NAME" "$NAME-n0" env PME_IFACE='y*' "$PERF" client --peer "$ADDR" \
    -s 8 -n 10 --seconds 0.01 2>&1); then
    fail "a client with PME_IFACE='y*' on a ring node started"
fi
grep -q 'no network interface matches "y\*"' <<<"$out" || fail "no clear error for PME_IFACE='y*': $out"
say "ok: PME_IFACE='y*': $(grep -o 'no network interface matches.*' <<<"$out" | head -n 1)"

# The route to node 2 leaves node 0 by xp ("+" on a tie): an endpoint on xm alone cannot
# use it, and says so.
vc_serve "$NAME" 2 "$PERF" server
if out=$(vc_in "$NAME" "$NAME-n0" env PME_IFACE=xm "$PERF" client --peer "$ADDR" \
    -s 8 -n 10 --seconds 0.01 2>&1); then
    fail "a client without the route's interface reached node 2"
fi
grep -q "leaves by interface xp, which this endpoint does not use" <<<"$out" && grep -q PME_IFACE <<<"$out" ||
    fail "no clear error for a route over an interface not used: $out"
say "ok: PME_IFACE=xm: $(grep -o 'the route to node.*' <<<"$out" | head -n 1)"

# A route file without the destination (as if installed for another topology).
file=$(vc_in "$NAME" "$NAME-n0" "$ROUTE" path)
grep -v '^route 2 ' "$file" >"$TMPD/partial"
if out=$(vc_in "$NAME" "$NAME-n0" env PME_ROUTES="$TMPD/partial" "$PERF" client \
    --peer "$ADDR" -s 8 -n 10 --seconds 0.01 2>&1); then
    fail "a client without a route to node 2 reached it"
fi
grep -q "no route to node 2 in $TMPD/partial" <<<"$out" && grep -q "pme_route install" <<<"$out" ||
    fail "no clear error for a missing route: $out"
say "ok: no route to node 2: $(grep -o 'no route to node 2.*' <<<"$out" | head -n 1)"
kill "$SERVER" 2>/dev/null || true

# A link taken down during a stream, at either end: the sender fails within seconds
# (PME_LINK_DOWN_MS, default 2000 ms), not after the peer timeout (60 s), saying which
# nodes, which interface and its state.
link_down() { # NODE IFACE STATE: take NODE's IFACE down while node 0 streams to node 1
    local node=$1 ifc=$2 state=$3 t0
    vc_serve "$NAME" 1 "$PERF" server
    (sleep 1; vc_in "$NAME" "$NAME-n$node" ip link set "$ifc" down) &
    t0=$SECONDS
    if out=$(vc_in "$NAME" "$NAME-n0" timeout 50 "$PERF" client --peer "$ADDR" \
        -t stream -s 1m --seconds 30 2>&1); then
        fail "the stream went on over a link that was down"
    fi
    wait
    vc_in "$NAME" "$NAME-n$node" ip link set "$ifc" up
    kill "$SERVER" 2>/dev/null || true
    local want="the link from node 0 to node 1 is down: interface xp is $state"
    grep -q "$want" <<<"$out" || fail "no clear error when $NAME-n$node's $ifc went down: $out"
    [ $((SECONDS - t0)) -lt 20 ] || fail "the link-down error took $((SECONDS - t0)) s"
    say "ok: node $node's $ifc down: failed in $((SECONDS - t0)) s: $(grep -o 'the link from.*' <<<"$out" | cut -c1-100)..."
}
link_down 0 xp down
link_down 1 xm "up without carrier"
