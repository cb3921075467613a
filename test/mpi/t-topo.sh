#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-topo.sh - topology-aware MPI on a torus: the node topology is visible to the program
# (MPI_T pme_topology and pme_coords, checked against each node's place in the cluster
# description), and MPI_Cart_create, MPI_Graph_create, MPI_Dist_graph_create and
# MPI_Dist_graph_create_adjacent with reorder put grid neighbours one link apart on
# torus:2x2x2 and torus:4x4 with one rank per node, although mpiexec placed the ranks in
# a shuffled order (in which MPICH's own order has neighbours up to 3 links apart), and
# never further in sum than MPICH's order for grids that do not match the torus. On a
# switch, with no route file, the topology is empty and the order MPICH's.
# pme-test: tier=default cpu=120 time=19 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/pme_topo" "$pme_repo/test/mpi/pme_topo.c"
out=$work/out

# topo NAME HOSTS ARGS...: pme_topo with rank i on the i-th node of HOSTS (indices).
topo() {
    local name=$1 hosts=$2 i list=
    shift 2
    for i in ${hosts//,/ }; do list+=${list:+,}$name-n$i; done
    PME_MPIEXEC_TIMEOUT=150 pme_mpiexec "$name" -hosts "$list" -n "$(wc -w <<<"${hosts//,/ }")" \
        -ppn 1 "$work/pme_topo" "$@" >"$out" 2>&1 ||
        { cat "$out"; pme_fail "pme_topo $* with ranks on nodes $hosts failed"; }
    grep -q '^pme_topo: OK' "$out" || { cat "$out"; pme_fail "pme_topo $* did not succeed"; }
    echo "ok: $(grep '^pme_topo: [a-z]* ' "$out")"
}

# places NAME X Y [Z]: every printed rank's coordinates are its node's (x fastest).
places() {
    local name=$1 spec ok=0
    shift
    spec=$(IFS=x; echo "$*")
    while read -r _ _ _ _ host _ topology _ coords; do
        local i=${host##*-n} want= d k=1
        for d in "$@"; do want+=${want:+,}$((i / k % d)); k=$((k * d)); done
        [ "$topology" = "torus:$spec" ] && [ "$coords" = "$want" ] ||
            { cat "$out"; pme_fail "$host: pme_topology $topology, pme_coords $coords (want torus:$spec, $want)"; }
        ok=$((ok + 1))
    done < <(grep '^topo: rank' "$out")
    [ "$ok" -gt 0 ] || { cat "$out"; pme_fail "no rank printed its place"; }
    echo "ok: $ok ranks read their node's place through MPI_T (torus:$spec)"
}

# identity_far: MPICH's order had a neighbour more than one link away (the shuffle matters).
identity_far() {
    grep -Eq 'identity .* max ([2-9]|[1-9][0-9])$' "$out" ||
        { cat "$out"; pme_fail "the shuffled placement was no test: MPICH's order was already one hop"; }
}

pme_cluster_name tpc; c3=$REPLY
pme_cluster_up "$c3" --topology torus:2x2x2
shuffle8=5,2,7,0,3,6,1,4
topo "$c3" "$shuffle8" --print --one-hop cart 2x2x2
places "$c3" 2 2 2
identity_far
for kind in graph dist adjacent; do
    topo "$c3" "$shuffle8" --one-hop "$kind" 2x2x2
    identity_far
done
topo "$c3" "$shuffle8" --one-hop cart 8
topo "$c3" 0,1,2,3,4,5,6,7 --one-hop cart 2x2x2
topo "$c3" "$shuffle8" cart 2x4
topo "$c3" "$shuffle8" dist 4x2
"$pme_vc" down --name "$c3" >/dev/null

pme_cluster_name tpd; c2=$REPLY
pme_cluster_up "$c2" --topology torus:4x4
shuffle16=9,14,3,0,12,7,5,10,1,15,6,11,2,8,13,4
topo "$c2" "$shuffle16" --print --one-hop cart 4x4
places "$c2" 4 4
identity_far
topo "$c2" "$shuffle16" --one-hop adjacent 4x4
identity_far
topo "$c2" "$shuffle16" cart 2x8
"$pme_vc" down --name "$c2" >/dev/null

pme_cluster_name tps; cs=$REPLY
pme_cluster_up "$cs"
topo "$cs" 2,0,3,1 --print cart 2x2
grep -q '^topo: rank 0 host .* topology - coords -$' "$out" ||
    { cat "$out"; pme_fail "a switch without routes showed a topology"; }
grep -q 'reorder 16 edges, 0 hops, max 0; identity 16 edges, 0 hops, max 0' "$out" ||
    { cat "$out"; pme_fail "unexpected figures on a switch"; }
echo "ok: switch: no topology, MPICH's order"
