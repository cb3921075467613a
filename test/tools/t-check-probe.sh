#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pme_info --check --probe --hostfile on a virtual cluster (three nodes on a switch, MTU
# 9000), run inside node 0 with the cluster's hostfile and ssh stand-in: PME frames of
# minimum size and of the full MTU between every pair, as a matrix.
#   - healthy: every pair ok, exit 0;
#   - node 2's switch port at MTU 1500 (the nodes keep 9000, so comparing MTUs sees
#     nothing): the pairs with node 2 pass small frames only, the cause names the MTU,
#     exit 1;
#   - the switch drops EtherType 0x88B5 to and from node 1 (nftables, bridge family):
#     the pairs with node 1 pass nothing, the cause names the filter (the control
#     EtherType passes), the pair 0-2 stays ok, exit 1; and a pme_perf client on node 0
#     whose server is on node 1 fails after PME_HELLO_TIMEOUT_MS (1 s here), long before
#     the peer timeout, saying the handshake went unanswered and naming the probe;
#   - a ring of 4 with PME's routes (and the forwarder on every link): neighbours are
#     ok, the others "-" (their frames are forwarded; the probe's frames pass the
#     forwarder to the node), exit 0.
# Root only (namespaces).
# pme-test: tier=default cpu=40 time=25
set -euo pipefail
. "$srcdir/test/tools/lib.sh"
. "$srcdir/test/mpi/lib.sh"
pme_require_root
PME_INFO=$builddir/src/tools/pme_info
PME_PERF=$builddir/src/tools/pme_perf
[ -x "$PME_INFO" ] || tools_fail "$PME_INFO not built"
command -v nft >/dev/null || tools_fail "nft not installed (apt-get install nftables)"
pme_cluster_name prb
NAME=$REPLY
pme_cluster_up "$NAME" --nodes 3 --topology switch --mtu 9000
dir=/run/vcluster/$NAME
# port I: the switch side of node I's cable, from the cluster's description.
port() { python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
print([m["port"] for m in c["switches"][0]["members"] if m["index"]==int(sys.argv[2])][0])' \
    "$dir/cluster.json" "$1"; }
swns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["switches"][0]["netns"])' \
    "$dir/cluster.json")
out=$(mktemp /tmp/pme-check-probe.XXXXXX)
spid=
trap 'rm -f "$out" "$out.addr"; [ -z "$spid" ] || kill "$spid" 2>/dev/null
      ip netns exec "$swns" nft delete table bridge pmeprobe 2>/dev/null; pme_cleanup' EXIT

# probe RC: the probe from node 0 over every node of the hostfile, output in $out.
probe() {
    local rc=0
    "$pme_vc" exec --name "$NAME" 0 env HYDRA_LAUNCHER_EXEC="$dir/launcher" PME_RAWSOCK=0 \
        "$PME_INFO" --check --probe --probe-time 2000 --hostfile "$dir/hostfile" >"$out" 2>&1 || rc=$?
    [ "$rc" = "$1" ] || { cat "$out"; tools_fail "the probe exited $rc, not $1"; }
}
has() { grep -qE -- "$1" "$out" || { cat "$out"; tools_fail "no line matching '$1'"; }; }
hasnt() { ! grep -qE -- "$1" "$out" || { cat "$out"; tools_fail "a line matches '$1'"; }; }
# row I CELLS: node I's row of the matrix.
row() { has "^ +$1 +$2 +$NAME-n$1\$"; }

echo "== healthy"
probe 0
row 0 '\. +ok +ok'
row 1 'ok +\. +ok'
row 2 'ok +ok +\.'
has "every pair that meets passes small and full-MTU PME frames both ways"

echo "== node 2's switch port at MTU 1500"
ip -n "$swns" link set "$(port 2)" mtu 1500
probe 1
has "^  ok +every host answering uses MTU 9000"
row 0 '\. +ok +small'
row 2 'small +small +\.'
has "^  BLOCKS $NAME-n0 eth0 - $NAME-n2 eth0: small frames only \(9000-byte frames are lost\)"
has "why: something on the way has a smaller MTU"
hasnt "BLOCKS $NAME-n0 eth0 - $NAME-n1"
ip -n "$swns" link set "$(port 2)" mtu 9000

echo "== the switch drops EtherType 0x88B5 to and from node 1"
p1=$(port 1)
ip netns exec "$swns" nft -f - <<NFT
table bridge pmeprobe {
  chain through {
    type filter hook forward priority 0;
    iifname "$p1" ether type 0x88b5 drop
    oifname "$p1" ether type 0x88b5 drop
  }
}
NFT
probe 1
row 0 '\. +none +ok'
row 1 'none +\. +none'
has "^  BLOCKS $NAME-n1 eth0 - $NAME-n2 eth0: no PME frame passes \(EtherType 0x88B5 filtered\)"
has "a filter drops EtherType 0x88B5"
hasnt "BLOCKS $NAME-n0 eth0 - $NAME-n2"

echo "== a job across the filter: the unanswered handshake's own error"
"$pme_vc" exec --name "$NAME" 1 env PME_RAWSOCK=0 "$PME_PERF" server -i eth0 \
    --addr-file "$out.addr" >/dev/null 2>&1 &
spid=$!
for _ in $(seq 100); do [ -s "$out.addr" ] && break; sleep 0.05; done
[ -s "$out.addr" ] || tools_fail "the pme_perf server on node 1 did not start"
start=$(date +%s%N)
rc=0
"$pme_vc" exec --name "$NAME" 0 env PME_RAWSOCK=0 PME_HELLO_TIMEOUT_MS=1000 \
    PME_PEER_TIMEOUT_MS=60000 timeout 30 "$PME_PERF" client -i eth0 --peer "$(cat "$out.addr")" \
    -t pingpong -s 8 --seconds 5 >"$out" 2>&1 || rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$rc" != 0 ] && [ "$rc" != 124 ] || { cat "$out"; tools_fail "the client exited $rc"; }
has "never answered the handshake in 1000 ms \(PME_HELLO_TIMEOUT_MS\)"
has "drops EtherType 0x88b5.*pme_info --check --probe"
[ "$took" -lt 10000 ] || tools_fail "the client took $took ms to fail"
echo "the client failed after $took ms (PME_HELLO_TIMEOUT_MS=1000, peer timeout 60000)"

echo "== a ring of 4 with routes"
pme_cluster_name prr
RING=$REPLY
PME_ROUTE=$builddir/src/tools/pme_route pme_cluster_up "$RING" --topology ring:4 --mtu 9000 --routes
rc=0
"$pme_vc" exec --name "$RING" 0 env HYDRA_LAUNCHER_EXEC="/run/vcluster/$RING/launcher" \
    PME_RAWSOCK=0 "$PME_INFO" --check --probe --probe-time 2000 \
    --hostfile "/run/vcluster/$RING/hostfile" >"$out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$out"; tools_fail "the probe on the ring exited $rc, not 0"; }
has "^ +0 +\. +ok +- +ok +$RING-n0\$"
has "^ +1 +ok +\. +ok +- +$RING-n1\$"
echo "pme_info --check --probe tells a lowered MTU on the way and a filter of 0x88B5 from a healthy cluster, and a job across the filter fails early, naming the probe"
