#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-shmwake.sh - one wake-up source for shared memory and PME: a rank that sleeps on
# PME's device while it waits is woken by its doorbell when a rank of its own node sends
# it a message through shared memory (src/mpid/ch4/netmod/pme/shm_wake.c).
# Two ranks on one node of a 2-node virtual cluster run pme_shmwake: 40 rounds in which
# rank 1 leaves MPI alone for 5 ms (rank 0 waits in MPI_Recv) and then sends.
#   - PME_WAIT=block (waits sleep): every round's message is right; rank 1 rang rank 0's
#     doorbell and rank 0's sleeps were ended by it in at least half of the rounds;
#   - MPIR_CVAR_CH4_PME_SHM_WAKE=0: still right, and no doorbell at all;
#   - PME_WAIT=spin (nobody sleeps): still right, and no doorbell rung.
# The latency each way is printed for the reader (maint/shmwake-bench measures it).
# pme-test: tier=default cpu=80 time=7 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/shmwake" "$pme_repo/test/mpi/pme_shmwake.c"
pme_cluster_name nmshmw; name=$REPLY
pme_cluster_up "$name" --nodes 2
rounds=40 gap_us=5000

# run LABEL [mpiexec args]: the job, both ranks on node 0; checks both said ok.
run() {
    local label=$1; shift
    local rc=0
    PME_MPIEXEC_TIMEOUT=90 pme_mpiexec "$name" -n 2 -ppn 2 "$@" "$work/shmwake" $rounds $gap_us \
        >"$work/$label" 2>&1 || rc=$?
    if [ $rc != 0 ] || [ "$(grep -c ': ok ' "$work/$label")" != 2 ]; then
        sed 's/^/    | /' "$work/$label" | head -30
        pme_fail "$label: the job failed or a message was wrong (exit $rc)"
    fi
}
# field LABEL RANK KEY: rank RANK's counter KEY (rings or wakeups) in run LABEL.
field() {
    sed -n "s/^rank $2: ok .*\\b$3=\\(-\\{0,1\\}[0-9]*\\).*/\\1/p" "$work/$1"
}
latency() { grep '^latency_us' "$work/$1" | sed 's/^latency_us //'; }

run block -genv PME_WAIT block
rings=$(field block 1 rings) wakeups=$(field block 0 wakeups)
if [ -z "$rings" ] || [ -z "$wakeups" ] || [ "$rings" -lt $((rounds / 2)) ] ||
    [ "$wakeups" -lt $((rounds / 2)) ]; then
    sed 's/^/    | /' "$work/block"
    pme_fail "PME_WAIT=block: rank 1 rang ${rings:-?} times and rank 0 was woken ${wakeups:-?} times by the doorbell in $rounds rounds (want at least $((rounds / 2)) each)"
fi
echo "ok   PME_WAIT=block: $rings doorbells rung, $wakeups sleeps ended by them in $rounds rounds; latency $(latency block)"

run off -genv PME_WAIT block -genv MPIR_CVAR_CH4_PME_SHM_WAKE 0
for r in 0 1; do
    for k in rings wakeups; do
        v=$(field off $r $k)
        [ "$v" = 0 ] || { sed 's/^/    | /' "$work/off"; pme_fail "MPIR_CVAR_CH4_PME_SHM_WAKE=0: rank $r's $k is '${v}', not 0"; }
    done
done
echo "ok   MPIR_CVAR_CH4_PME_SHM_WAKE=0: no doorbell, messages right; latency $(latency off)"

run spin -genv PME_WAIT spin
for r in 0 1; do
    v=$(field spin $r rings)
    [ "$v" = 0 ] || { sed 's/^/    | /' "$work/spin"; pme_fail "PME_WAIT=spin: rank $r rang $v doorbells for ranks that never sleep"; }
done
echo "ok   PME_WAIT=spin: nobody sleeps, no doorbell rung; latency $(latency spin)"
