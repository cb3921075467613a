#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-rma.sh - one-sided communication over ch4:pme (test/mpi/pme_rma.c): put, get,
# accumulate, fetch-and-op and compare-and-swap checked value by value under lock/unlock,
# lock_all, fence and post/start/complete/wait, and a target that computes without
# calling MPI while the others lock, put, get, accumulate and unlock its window:
#   4 ranks on 4 nodes  every operation PME's own; the origins finish their epochs
#                       within half of the target's computation;
#   4 ranks on 2 nodes  ranks sharing a node: puts, gets and locks PME's, accumulates
#                       MPIDIG's (atomicity across shared memory), the same values (the
#                       rank sharing the target's node reaches it through shared memory
#                       and MPIDIG, which waits for the target: no timing check);
#   rails-4x1           as native-4x1 on nodes of two NICs each (one-sided requests and
#                       answers take the primary rail, in order, with the rest);
#   control             MPIR_CVAR_CH4_PME_RMA=0 (all MPIDIG): the same values, and the
#                       origins wait for the computing target, as they must without PME
#                       answering for it: the timing check can tell the two apart.
# Every run also checks that fence, complete and flush_all wait for a get and a fetch
# issued after the target entered its side of the synchronization (late_answers).
# pme-test: tier=default cpu=130 time=23 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/rma" "$pme_repo/test/mpi/pme_rma.c"
pme_cluster_name nmrma; name=$REPLY
pme_cluster_up "$name" --nodes 4
pme_cluster_name nmrmar; rails=$REPLY
pme_cluster_up "$rails" --nodes 4 --nics 2
compute_s=3

run() { # cluster, label, expectation, mpiexec args...
    local cluster=$1 label=$2 expect=$3 rc=0 out
    shift 3
    out=$work/$label
    PME_MPIEXEC_TIMEOUT=100 pme_mpiexec "$cluster" "$@" "$work/rma" "$expect" $compute_s \
        >"$out" 2>&1 || rc=$?
    local oks
    oks=$(grep -c ': ok$' "$out" || true)
    if [ $rc != 0 ] || [ "$oks" != 4 ]; then
        sed 's/^/    | /' "$out" | head -40
        pme_fail "$label: exit $rc, $oks of 4 ranks ok"
    fi
    echo "ok   $label: $(grep -m1 'epochs on' "$out" | sed 's/^rank [0-9]*: //')"
}

run "$name" native-4x1 native -n 4 -ppn 1
run "$name" mixed-2x2 any -n 4 -ppn 2
run "$rails" rails-4x1 native -n 4 -ppn 1
run "$name" control blocked -n 4 -ppn 1 -genv MPIR_CVAR_CH4_PME_RMA 0
