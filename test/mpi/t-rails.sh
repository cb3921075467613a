#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-rails.sh - MPI over two rails: a switched virtual cluster with two data NICs per node
# (vcluster up --topology switch --nics 2), nothing set but what vcluster gives:
#   - every rank's PME endpoint spans eth0 and eth1 (pme_whoami);
#   - a ping-pong checked up to 4 MiB, with frames counted on both rails of both nodes
#     (the kernel's interface counters: large messages are striped);
#   - eth1 of node 1 taken down mid-run: the job finishes, its data checked, and each
#     node prints one warning that it dropped rail 1;
#   - 9 lines of MPICH's CI subset that move large messages, on 4 nodes of two NICs each.
# pme-test: tier=default cpu=150 time=31 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY

pme_cluster_name rails; name=$REPLY
pme_cluster_up "$name" --topology switch --nodes 2 --nics 2 --mtu 9000
pme_compile "$work/pme_whoami" "$pme_repo/test/mpi/pme_whoami.c"
pme_compile "$work/pingpong" "$pme_repo/test/mpi/pingpong.c"
out=$work/out

PME_MPIEXEC_TIMEOUT=120 pme_mpiexec "$name" -n 2 -ppn 1 "$work/pme_whoami" --expect-pme >"$out" 2>&1 ||
    { cat "$out"; pme_fail "pme_whoami failed"; }
[ "$(grep -c 'MPI device ch4:pme, PME interface eth0,eth1' "$out")" = 2 ] ||
    { cat "$out"; pme_fail "the ranks do not both span eth0 and eth1"; }
echo "ok: both ranks on ch4:pme over eth0,eth1"

# tx_frames NODE IFACE: frames the node's interface sent (the kernel's count).
tx_frames() {
    "$pme_vc" exec --name "$name" "$name-n$1" cat /proc/net/dev |
        awk -v i="$2:" '$1 == i { print $11 }'
}
declare -A before
for n in 0 1; do for i in eth0 eth1; do before[$n$i]=$(tx_frames "$n" "$i"); done; done
PME_MPIEXEC_TIMEOUT=120 pme_mpiexec "$name" -n 2 -ppn 1 "$work/pingpong" -n 50 -max 4194304 >"$out" 2>&1 ||
    { cat "$out"; pme_fail "the ping-pong over two rails failed"; }
grep -q '^pingpong: OK' "$out" || { cat "$out"; pme_fail "the ping-pong did not succeed"; }
# The round trips (20 of each size from 1 MiB up, 50 below) move about 190 MiB each
# way, some 22000 frames of 9000 bytes. Messages up to the eager threshold and most
# acknowledgements take one rail; the rendezvous data of the larger ones is striped:
# each rail must carry at least a fifth of the node's frames.
for n in 0 1; do
    d0=$(($(tx_frames "$n" eth0) - before[${n}eth0]))
    d1=$(($(tx_frames "$n" eth1) - before[${n}eth1]))
    echo "node $n sent $d0 frames on eth0 and $d1 on eth1"
    [ $((d0 + d1)) -gt 15000 ] || pme_fail "node $n sent only $((d0 + d1)) frames"
    [ $((d1 * 5)) -ge $((d0 + d1)) ] && [ $((d0 * 5)) -ge $((d0 + d1)) ] ||
        pme_fail "node $n did not stripe its data over both rails"
done
echo "ok: ping-pong checked up to 4 MiB, frames on both rails of both nodes"

# Node 1's eth1 goes down once the large sizes are under way; the job must finish over
# eth0, each node warning once that it dropped rail 1 (node 1: its interface is down;
# node 0: rail 1 stopped answering while eth0 still did).
: >"$out"
(for _ in $(seq 600); do grep -Eq '^ +262144 ' "$out" && break; sleep 0.1; done
 "$pme_vc" exec --name "$name" "$name-n1" ip link set eth1 down) &
t0=$SECONDS
PME_MPIEXEC_TIMEOUT=240 pme_mpiexec "$name" -n 2 -ppn 1 "$work/pingpong" -n 400 -max 4194304 >"$out" 2>&1 ||
    { wait; tail -30 "$out"; pme_fail "the job did not survive rail 1 going down"; }
wait
grep -q '^pingpong: OK' "$out" || { tail -30 "$out"; pme_fail "the ping-pong did not succeed"; }
[ "$(grep -c 'pme: warning: .* dropped rail 1 (eth1)' "$out")" = 2 ] ||
    { tail -30 "$out"; pme_fail "expected one warning from each node that it dropped rail 1"; }
grep -q 'dropped rail 1 (eth1) to node .*: interface eth1 is down' "$out" ||
    { grep 'pme:' "$out"; pme_fail "no warning names eth1 as down"; }
echo "ok: eth1 of node 1 down mid-run: finished in $((SECONDS - t0)) s over eth0, warnings:"
grep 'pme: warning' "$out" | cut -c1-140 | sed 's/^/    /'
"$pme_vc" exec --name "$name" "$name-n1" ip link set eth1 up

# MPICH's CI lines that move large messages (rendezvous, striped) between many ranks, on
# 4 nodes of two NICs each (the whole subset runs on one NIC in t-mpich-pt2pt.sh).
grep -E '^(basic/pme-srtest|pt2pt/(sendall|isendirecv|manylmt|huge_ssend|pt2pt_large)|coll/(alltoallv|bcasttest|coll_large)) ' \
    "$pme_repo/test/mpi/ci-tests.txt" >"$work/tests"
[ "$(wc -l <"$work/tests")" = 9 ] || pme_fail "ci-tests.txt no longer has the 9 lines this test runs"
pme_cluster_name railsci; ci=$REPLY
pme_clusters+=("$ci")
"$pme_repo/maint/mpich-tests" --tests "$work/tests" --nics 2 --name "$ci" ||
    pme_fail "MPICH's tests over two rails failed"
echo "ok: 9 of MPICH's CI lines with large messages on 4 nodes of two rails each"
