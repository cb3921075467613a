#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-mpich-versions.sh - ch4:pme on every MPICH that maint/build-mpich supports besides
# the default one (which the other MPI tests cover in full): for each, a lean build (C
# only, maint/build-mpich --lean, in that version's own cache), then on a 4-node virtual
# cluster MPICH's examples/cpi with 8 ranks on 4 nodes, a ping-pong between two nodes
# checked byte by byte from 0 B to 4 MiB, and the CI subset's groups basic, pt2pt and coll
# (the line of t-mpich-pt2pt.sh). Each version must build, report itself and ch4:pme,
# and pass all three. PME_MPICH_VERSIONS="V ..." picks the versions.
# A version's first build takes about 10 minutes on 2 cores (doc/mpi.md, "Versions").
# pme-test: tier=full cpu=150 time=400 timeout=3600 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
unset PME_MPICH_PREBUILT PME_MPICH_PREFIX # (each version in its own prefix)
bm=$pme_repo/maint/build-mpich
all=$("$bm" --print-versions) || pme_fail "maint/build-mpich --print-versions failed"
versions=${PME_MPICH_VERSIONS:-${all#* }}
[ -n "$versions" ] || pme_fail "no MPICH version besides the default (${all%% *})"
pme_tmpdir; work=$REPLY
pme_cluster_name nmver; name=$REPLY
pme_cluster_up "$name"

for v in $versions; do
    log=$work/build-$v.log
    start=$SECONDS
    PME_MPICH_VERSION=$v PME_MPICH_LEAN=1 "$bm" -q >"$log" 2>&1 ||
        { tail -40 "$log"; pme_fail "MPICH $v: maint/build-mpich --mpich $v --lean failed"; }
    echo "MPICH $v: built or found in $((SECONDS - start)) s"
    PME_PREFIX=$(sed -n 's/^prefix: //p' "$log" | tail -n 1)
    MPICC=$PME_PREFIX/bin/mpicc MPIEXEC=$PME_PREFIX/bin/mpiexec
    "$PME_PREFIX/bin/mpichversion" >"$work/version-$v" || pme_fail "MPICH $v: mpichversion failed"
    grep -q "Version:[[:space:]]*$v\$" "$work/version-$v" && grep -q 'Device:[[:space:]]*ch4:pme' "$work/version-$v" ||
        { cat "$work/version-$v"; pme_fail "MPICH $v: mpichversion names another version or device"; }

    tree=$(PME_MPICH_VERSION=$v "$bm" --print-srcdir)
    pme_compile "$work/cpi-$v" "$tree/examples/cpi.c" -lm
    out=$work/cpi-$v.out
    pme_mpiexec "$name" -n 8 -ppn 2 "$work/cpi-$v" >"$out" 2>&1 ||
        { cat "$out"; pme_fail "MPICH $v: cpi failed"; }
    grep -q '^pi is approximately 3.14159' "$out" || { cat "$out"; pme_fail "MPICH $v: cpi printed no pi"; }
    nodes=$(grep -o 'Process [0-9] of 8 is on [a-z0-9-]*' "$out" | awk '{print $NF}' | sort -u | wc -l)
    [ "$nodes" = 4 ] || { cat "$out"; pme_fail "MPICH $v: cpi's 8 processes ran on $nodes nodes, not 4"; }
    echo "MPICH $v: cpi with 8 ranks on 4 nodes: OK"

    pme_compile "$work/pingpong-$v" "$pme_repo/test/mpi/pingpong.c"
    out=$work/pingpong-$v.out
    pme_mpiexec "$name" -n 2 -ppn 1 "$work/pingpong-$v" -n 20 >"$out" 2>&1 ||
        { cat "$out"; pme_fail "MPICH $v: pingpong failed"; }
    grep -q '^pingpong: OK' "$out" || { cat "$out"; pme_fail "MPICH $v: pingpong: no OK"; }
    echo "MPICH $v: pingpong 0 B to 4 MiB between two nodes, data checked: OK"

    pme_cluster_name nmv${v//./}
    PME_MPICH_VERSION=$v PME_MPICH_LEAN=1 "$pme_repo/maint/mpich-tests" --impl pme --set ci \
        --groups "basic pt2pt coll" --name "$REPLY" ||
        pme_fail "MPICH $v: the CI subset's basic, pt2pt and coll lines failed"
done
echo "OK: MPICH $versions"
