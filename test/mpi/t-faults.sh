#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-faults.sh - MPI over ch4:pme on a 4-node switched cluster whose data links drop,
# duplicate, corrupt, delay and reorder PME's frames (maint/faults, the eBPF fault
# injector): under each kind of fault a checked ping-pong from 0 bytes to 4 MiB (ranks
# on different nodes) completes with correct data; the injector's counters show that
# the faults happened. MPICH's own tests under the same faults: t-faults-suite.sh. The
# injector's seed is printed (PME_FAULT_SEED=N repeats a run; fixed in the full tier).
# pme-test: tier=default cpu=120 time=33 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faults-lib.sh"
pme_faults_begin
pme_compile "$work/pingpong" "$pme_repo/test/mpi/pingpong.c"
echo "injector seed $seed (PME_FAULT_SEED=$seed repeats this run)"

# pingpong_under KIND: the checked ping-pong with that fault on every data link.
pingpong_under() {
    local kind=$1 name out totals n
    pme_cluster_name "nmf$(counter_of "$kind" | cut -c1-2)"; name=$REPLY
    pme_cluster_up "$name"
    "$faults" apply --name "$name" clear reset "$kind" "seed=$seed" >/dev/null ||
        pme_fail "maint/faults apply $kind failed"
    out=$work/pingpong.$kind.out
    PME_MPIEXEC_TIMEOUT=300 pme_mpiexec "$name" -n 2 -ppn 1 "$work/pingpong" -n 20 >"$out" 2>&1 ||
        { cat "$out"; pme_fail "pingpong under $kind failed"; }
    grep -q '^pingpong: OK' "$out" || { cat "$out"; pme_fail "pingpong under $kind: no OK"; }
    totals=$("$faults" totals --name "$name")
    n=$(kv "$(counter_of "$kind")" "$totals")
    [ "${n:-0}" -gt 0 ] || pme_fail "pingpong under $kind: the injector did nothing ($totals)"
    echo "pingpong 0 B to 4 MiB under $kind: data intact ($(counter_of "$kind") $n frames)"
    "$pme_vc" down --name "$name" >/dev/null
}

for kind in "${kinds[@]}"; do pingpong_under "$kind"; done
