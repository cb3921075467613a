#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-axes.sh - broadcast, reduce and allreduce along a torus's axes give exact results:
# pme_axes (every datatype class and operation the path takes, a non-commutative one it
# leaves to MPICH, several roots, 0 bytes to a few MiB) on torus:2x2x2 with one rank per
# node and the path taken for every size (its CVARs 0:-1), where PME's MPI_T counter
# pme_axes_colls must show it taken; with the default ranges and two ranks per node (the
# path then serves MPICH's node leaders); with the path switched off by its CVARs (the
# counter stays 0); and on a switch, where it must stay off.
# pme-test: tier=default cpu=160 time=41 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/pme_axes" "$pme_repo/test/mpi/pme_axes.c"
out=$work/out

# axes NAME WANT MPIEXEC-ARGS...: pme_axes succeeds; WANT "some" or "none" along the axes.
axes() {
    local name=$1 want=$2 n
    shift 2
    PME_MPIEXEC_TIMEOUT=170 pme_mpiexec "$name" "$@" "$work/pme_axes" >"$out" 2>&1 ||
        { cat "$out"; pme_fail "pme_axes $* on $name failed"; }
    grep -q '^pme_axes: OK' "$out" || { cat "$out"; pme_fail "pme_axes $* gave wrong results"; }
    n=$(sed -n 's/^pme_axes: \(-*[0-9]*\) collectives along the axes$/\1/p' "$out")
    case $want in
    some) [ "${n:-0}" -gt 0 ] || { cat "$out"; pme_fail "$*: no collective went along the axes ($n)"; } ;;
    none) [ "$n" = 0 ] || { cat "$out"; pme_fail "$*: $n collectives went along the axes"; } ;;
    esac
    echo "ok: pme_axes $*: exact, $n collectives along the axes"
}

pme_cluster_name axt; torus=$REPLY
pme_cluster_up "$torus" --topology torus:2x2x2
# ranges RANGE: the mpiexec arguments that set the three CVARs to RANGE
ranges() {
    REPLY="-genv MPIR_CVAR_CH4_PME_AXES_BCAST $1 -genv MPIR_CVAR_CH4_PME_AXES_REDUCE $1"
    REPLY+=" -genv MPIR_CVAR_CH4_PME_AXES_ALLREDUCE $1"
}
ranges 0:-1
# shellcheck disable=SC2086 # the arguments split on purpose
axes "$torus" some $REPLY -n 8 -ppn 1
axes "$torus" some -n 16 -ppn 2
ranges off
# shellcheck disable=SC2086
axes "$torus" none $REPLY -n 8 -ppn 1
"$pme_vc" down --name "$torus" >/dev/null

pme_cluster_name axs; sw=$REPLY
pme_cluster_up "$sw" --nodes 4
axes "$sw" none -n 4 -ppn 1
