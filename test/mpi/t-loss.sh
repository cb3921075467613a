#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-loss.sh - with 1% of the frames dropped on every data link (maint/vcluster --loss 1,
# before the nodes' packet sockets see them), MPI over ch4:pme still delivers everything: the pt2pt and coll lines of the
# CI subset pass, and a checked ping-pong from 0 bytes to 4 MiB (eager and rendezvous)
# completes with correct data while the loss rules really drop frames.
# pme-test: tier=default cpu=140 time=54 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/pingpong" "$pme_repo/test/mpi/pingpong.c"
pme_cluster_name nmloss; name=$REPLY
"$pme_repo/maint/mpich-tests" --impl pme --set loss --loss 1 --name "$name" || exit 1
pme_cluster_up "$name" --nodes 2 --loss 1
out=$work/pingpong.out
PME_MPIEXEC_TIMEOUT=300 pme_mpiexec "$name" -n 2 -ppn 1 "$work/pingpong" -n 50 >"$out" 2>&1 ||
    { cat "$out"; pme_fail "pingpong with 1% loss failed"; }
grep -q '^pingpong: OK' "$out" || { cat "$out"; pme_fail "pingpong with 1% loss: no OK"; }
tail -4 "$out"
# shellcheck source=maint/lib/linkloss.sh
. "$pme_repo/maint/lib/linkloss.sh"
linkloss_tool "$pme_repo" || pme_fail "no linkloss program"
dropped=0
for node in 0 1; do
    n=$("$pme_vc" exec --name "$name" $node "$LINKLOSS" show eth0 | awk '{print $6}')
    dropped=$((dropped + ${n:-0}))
done
[ "$dropped" -gt 0 ] || pme_fail "the 1% loss rules dropped no frame: the test proved nothing"
echo "pingpong with 1% frame loss: data intact ($dropped frames dropped on the data links)"
