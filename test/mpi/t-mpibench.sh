#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-mpibench.sh - mpibench's one-sided benchmarks (test/perf/rma.c, which maint/bench's
# rma scenario and maint/rma-bench run) over ch4:pme on a 2-node cluster: `mpibench -l`
# lists them, and put, get, putbw, getbw, acc and the lock/unlock epochs, each at a
# small and a large size and briefly, pass their checks (what the origin put is in every
# slot of the target's window, the target's pattern in every slot a get filled, the exact
# sums of the accumulates):
#   native    PME's own one-sided path, one rank per node;
#   am        MPIDIG's active messages (MPIR_CVAR_CH4_PME_RMA=0), which need the
#             target's progress: the target waits in MPI_Recv, not in a sleep;
#   idle      4 ranks, 2 per node: the pair is rank 0 and rank 2, the others only take
#             part in the window's creation and the driver's collectives.
# pme-test: tier=default cpu=130 time=14 needs=mpich
set -u
# shellcheck source=test/mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
srcs=("$pme_repo"/test/perf/*.c)
# (GCC 12 warns about MPI_STATUSES_IGNORE with MPICH's headers: shown only on a failure)
"$MPICC" -O2 -o "$work/mpibench" "${srcs[@]}" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; pme_fail "building mpibench failed"; }
pme_cluster_name nmbench; name=$REPLY
pme_cluster_up "$name" --nodes 2

pme_mpiexec "$name" -n 2 -ppn 1 "$work/mpibench" -l >"$work/list" 2>&1 ||
    { cat "$work/list"; pme_fail "mpibench -l failed"; }
for b in put get putbw getbw acc epochput epochget epochacc; do
    grep -q "^$b " "$work/list" || { cat "$work/list"; pme_fail "mpibench -l does not list $b"; }
done
echo "ok   mpibench -l lists the one-sided benchmarks"

# run LABEL WANT MPIEXEC-ARGS... -- BENCH...: WANT results, every one verified.
run() {
    local label=$1 want=$2 out=$work/$1 rc=0 args=()
    shift 2
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    PME_MPIEXEC_TIMEOUT=100 pme_mpiexec "$name" "${args[@]}" "$work/mpibench" -t 0.05 -W 0.02 \
        "$@" >"$out" 2>&1 || rc=$?
    local got fails
    got=$(grep -c '^[a-z0-9]*,[0-9]*,.*,ok$' "$out" || true)
    fails=$(grep -c ',FAIL:[0-9]*$' "$out" || true)
    if [ "$rc" != 0 ] || [ "$got" != "$want" ] || [ "$fails" != 0 ] ||
        ! grep -q '^# end errors=0$' "$out"; then
        sed 's/^/    | /' "$out" | head -40
        pme_fail "$label: exit $rc, $got of $want results verified, $fails failed"
    fi
    echo "ok   $label: $got results verified ($(grep -m1 '^put,8,' "$out" | cut -d, -f3) us for an 8 B put)"
}

# (BENCH@SIZES: the commas separate sizes)
# shellcheck disable=SC2054
every=(put@8,1m get@8,1m putbw@8,1m getbw@8,1m acc@8,64k epochput@8,64k epochget@8,64k epochacc@8,64k)
run native 16 -n 2 -ppn 1 -- "${every[@]}"
run am 16 -n 2 -ppn 1 -genv MPIR_CVAR_CH4_PME_RMA 0 -- "${every[@]}"
run idle 5 -n 4 -ppn 2 -- put@8 get@64k putbw@64k getbw@8 acc@8
