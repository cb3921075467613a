# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - helpers for the MPI tests of ch4:pme (sourced by test/mpi/t-*.sh and by
# maint/mpich-tests). They need root (virtual clusters), MPICH built with ch4:pme
# (maint/build-mpich builds it when missing, or reuses it in seconds) and maint/vcluster.
#
# Environment:
#   PME_MPICH_PREFIX, PME_CACHE_DIR   as for maint/build-mpich
#   PME_MPICH_PREBUILT=DIR            use the MPICH installed in DIR as it is, without
#                                     asking maint/build-mpich (a tree whose netmod and
#                                     pme_core are those DIR was built from)
#   PME_TEST_KEEP=1                   keep the virtual cluster and build products

pme_repo=${srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
pme_vc=$pme_repo/maint/vcluster
pme_clusters=()
pme_tmpdirs=()

pme_fail() { echo "FAIL: $*" >&2; exit 1; }
pme_skip() { echo "$*"; exit 77; }

# Tests create namespaces and raw sockets: root only.
pme_require_root() {
    [ "$(id -u)" = 0 ] || pme_skip "needs root (network namespaces, raw Ethernet frames)"
}

# Build (or reuse) MPICH with ch4:pme; sets PME_PREFIX, MPICC, MPIEXEC.
pme_need_mpich() {
    local out
    if [ -n "${PME_MPICH_PREBUILT:-}" ]; then
        PME_PREFIX=$PME_MPICH_PREBUILT
    else
        out=$("$pme_repo/maint/build-mpich" -q) || pme_fail "maint/build-mpich failed"
        PME_PREFIX=${out##*prefix: }
    fi
    MPICC=$PME_PREFIX/bin/mpicc
    MPIEXEC=$PME_PREFIX/bin/mpiexec
    [ -x "$MPICC" ] && [ -x "$MPIEXEC" ] || pme_fail "no mpicc/mpiexec in $PME_PREFIX/bin"
    "$PME_PREFIX/bin/mpichversion" | grep -q 'ch4:pme' || pme_fail "$PME_PREFIX is not ch4:pme"
}

pme_cleanup() {
    local c d
    if [ "${PME_TEST_KEEP:-0}" != 1 ]; then
        for c in "${pme_clusters[@]}"; do "$pme_vc" down --name "$c" >/dev/null 2>&1 || true; done
        for d in "${pme_tmpdirs[@]}"; do rm -rf "$d"; done
    fi
}
trap pme_cleanup EXIT
trap 'exit 130' INT TERM

# A scratch directory removed at exit (visible from inside the virtual nodes).
pme_tmpdir() {
    local d
    d=$(mktemp -d /tmp/pme-mpi.XXXXXX)
    chmod 755 "$d"
    pme_tmpdirs+=("$d")
    REPLY=$d
}

# A cluster name unique to this test run: 1 to 8 lower-case letters and digits.
pme_cluster_name() {
    REPLY=$1$(printf '%04d' $(($$ % 10000)))
    REPLY=${REPLY:0:8}
}

# pme_cluster_up NAME [vcluster up options]: a 4-node switched cluster unless the
# options say otherwise (a ring or torus gets PME's routes); torn down at exit.
pme_cluster_up() {
    local name=$1; shift
    "$pme_vc" down --name "$name" >/dev/null 2>&1 || true
    pme_clusters+=("$name")
    local args=("$@")
    # (a ring's or torus's node count follows from its shape)
    [[ " ${args[*]} " == *" --topology "* ]] || args+=(--topology switch)
    [[ " ${args[*]} " == *" --nodes "* || " ${args[*]} " != *" --topology switch "* ]] ||
        args+=(--nodes 4)
    "$pme_vc" up --name "$name" "${args[@]}" >/dev/null || pme_fail "vcluster up --name $name ${args[*]} failed"
}

# pme_mpiexec NAME [mpiexec args...]: run MPICH's hydra over cluster NAME, killed after
# $PME_MPIEXEC_TIMEOUT seconds (default 120; exit status 124 then).
pme_mpiexec() {
    local name=$1; shift
    timeout -k 5 "${PME_MPIEXEC_TIMEOUT:-120}" "$pme_vc" mpiexec --name "$name" --mpiexec "$MPIEXEC" "$@"
}

# pme_compile OUT SRC [more mpicc args]: compile with the ch4:pme mpicc (no extra flags).
pme_compile() {
    local out=$1 src=$2; shift 2
    "$MPICC" -O2 -o "$out" "$src" "$@" || pme_fail "mpicc $src failed"
}
