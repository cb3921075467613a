#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-helper.sh - a rank that computes for three times PME_PEER_TIMEOUT_MS without calling
# MPI, while the others wait for it in MPI_Recv and MPI_Barrier with messages to it in
# flight, is not taken for dead: its liveness helper (on by default in MPI) acknowledges
# their frames and answers their probes. The control: with PME_HELPER=0 the same job
# fails with the peer-timeout error, so the test can tell the two apart.
# Runs on a 4-node virtual cluster, one rank per node.
# pme-test: tier=default cpu=130 time=21 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/compute" "$pme_repo/test/mpi/pme_compute.c"
pme_cluster_name nmhelp; name=$REPLY
pme_cluster_up "$name" --nodes 4
timeout_ms=2000
compute_s=6 # three timeouts

rc=0
PME_MPIEXEC_TIMEOUT=90 pme_mpiexec "$name" -n 4 -ppn 1 -genv PME_PEER_TIMEOUT_MS $timeout_ms \
    "$work/compute" $compute_s >"$work/on" 2>&1 || rc=$?
oks=$(grep -c ': ok$' "$work/on" || true)
if [ $rc != 0 ] || [ "$oks" != 4 ]; then
    sed 's/^/    | /' "$work/on" | head -30
    pme_fail "with the helper, a rank computing ${compute_s}s (timeout ${timeout_ms} ms) broke the job (exit $rc, $oks of 4 ranks ok)"
fi
echo "ok   with the helper: rank 0 computed ${compute_s}s without MPI, all 4 ranks finished with the right data"

rc=0
PME_MPIEXEC_TIMEOUT=90 pme_mpiexec "$name" -n 4 -ppn 1 -genv PME_PEER_TIMEOUT_MS $timeout_ms \
    -genv PME_HELPER 0 "$work/compute" $compute_s >"$work/off" 2>&1 || rc=$?
if [ $rc = 0 ] || ! grep -q 'stopped answering' "$work/off"; then
    sed 's/^/    | /' "$work/off" | head -30
    pme_fail "without the helper the job should have failed with the peer timeout (exit $rc)"
fi
echo "ok   without the helper (PME_HELPER=0): the peers took rank 0 for dead, as they must"
