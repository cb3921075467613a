# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# topology.sh - the shape of a cluster, computed: what a topology spec means, where each
# node sits, which interface of which node each data interface is cabled to, and the
# names, MACs and addresses everything gets. Pure computation: nothing here touches the
# system, so it is tested without root (test/vcluster/t-topology-calc.sh).
#
# Owns: the globals TOPO (switch|ring|torus), SPEC (normalised spec), DIMS (sizes of
# the ring/torus dimensions), NODES, IFN (data interface names, the same on every
# node), NSS; parse_topology, compute_ifaces, node_ns, cluster_netns, mac, coords,
# index_of, neighbour, peer_of, data_ip.
# Expects: base.sh; NAME, NICS (switch: rails) and NET (the cluster's 10.NET.0.0/16).
#
# Indexing: node index = x + A*(y + B*z) for a torus AxBxC (x fastest). Data interface
# 2d of a ring/torus node is its "+" interface in dimension d, 2d+1 its "-" one; the
# dimension letters give their names: xp/xm, yp/ym, zp/zm. A switch node's interface k
# is eth<k>, on rail k.

# "test && test || die" is the idiom of the checks here:
# shellcheck disable=SC2015

readonly LETTERS=(x y z)
# Interface "type" byte inside our MAC addresses (02:NET:TYPE:IDXHI:IDXLO:SUB).
# shellcheck disable=SC2034 # each part uses the types of the interfaces it makes
readonly MT_MGMT=0 MT_RAIL=1 MT_LINK=2 MT_MGMT_HOST=16 MT_PORT=17 MT_BRIDGE=32

# parse_topology SPEC: TOPO, DIMS, SPEC and NODES from a --topology argument (and
# --nodes, already in NODES or empty), or a usage error.
# shellcheck disable=SC2034 # SPEC is read by the other parts
parse_topology() {
    local spec=$1 d
    DIMS=()
    case $spec in
    switch)
        TOPO=switch
        [ -n "$NODES" ] || usage_error "--topology switch needs --nodes N"
        SPEC=switch ;;
    ring)
        [ -n "$NODES" ] || usage_error "--topology ring needs --nodes N (or write ring:N)"
        TOPO=ring; DIMS=("$NODES"); SPEC="ring:$NODES" ;;
    ring:*)
        TOPO=ring; DIMS=("${spec#ring:}"); SPEC=$spec ;;
    torus:*)
        TOPO=torus
        IFS=x read -r -a DIMS <<<"${spec#torus:}"
        [ ${#DIMS[@]} -ge 2 ] && [ ${#DIMS[@]} -le 3 ] ||
            usage_error "bad topology '$spec': a torus has 2 or 3 dimensions (torus:AxB, torus:AxBxC; use ring:N for one)"
        SPEC=$spec ;;
    *) usage_error "bad topology '$spec': expected switch, ring, ring:N, torus:AxB or torus:AxBxC" ;;
    esac
    [ "$TOPO" = switch ] && return 0
    local n=1 norm=()
    for d in "${DIMS[@]}"; do
        [[ $d =~ ^[0-9]+$ ]] || usage_error "bad topology '$spec': '$d' is not a dimension size"
        d=$((10#$d))
        norm+=("$d")
        ((d >= 2)) || usage_error "bad topology '$spec': every dimension needs at least 2 nodes (a size-1 dimension has no links)"
        ((d <= MAX_NODES)) || usage_error "bad topology '$spec': dimension too large"
        n=$((n * d))
    done
    ((n <= MAX_NODES)) || usage_error "topology '$spec' has $n nodes; at most $MAX_NODES are supported"
    DIMS=("${norm[@]}")
    if [ "$TOPO" = ring ]; then SPEC="ring:$n"; else SPEC="torus:$(IFS=x; echo "${DIMS[*]}")"; fi
    if [ -n "$NODES" ] && [ "$NODES" != "$n" ]; then
        usage_error "--nodes $NODES does not match topology '$spec' ($n nodes)"
    fi
    NODES=$n
}

# compute_ifaces: IFN = data interface names of every node (the same on all nodes).
compute_ifaces() {
    IFN=()
    local k d
    if [ "$TOPO" = switch ]; then
        for ((k = 0; k < NICS; k++)); do IFN+=("eth$k"); done
    else
        for ((d = 0; d < ${#DIMS[@]}; d++)); do IFN+=("${LETTERS[d]}p" "${LETTERS[d]}m"); done
    fi
}

node_ns() { printf '%s-n%s' "$NAME" "$1"; } # node i's netns name = its hostname

# cluster_netns: NSS = the cluster's network namespaces: the nodes' in index order, then
# the switch's (topology switch only).
cluster_netns() {
    local i
    NSS=()
    for ((i = 0; i < NODES; i++)); do NSS+=("$(node_ns "$i")"); done
    [ "$TOPO" != switch ] || NSS+=("$NAME-sw")
}

# mac TYPE NODE SUB: REPLY = a deterministic, locally administered MAC, unique on this
# host (NET is unique per cluster), so descriptions and captures are easy to read.
mac() { printf -v REPLY '02:%02x:%02x:%02x:%02x:%02x' "$NET" "$1" $(($2 >> 8)) $(($2 & 255)) "$3"; }

# coords I: C = coordinates of node I (x fastest).
coords() {
    local i=$1 d
    C=()
    for ((d = 0; d < ${#DIMS[@]}; d++)); do
        C[d]=$((i % DIMS[d]))
        i=$((i / DIMS[d]))
    done
}

# index_of: NB = the index of the node at coordinates C (the inverse of coords).
index_of() {
    local d m=1 i=0
    for ((d = 0; d < ${#DIMS[@]}; d++)); do
        i=$((i + C[d] * m))
        m=$((m * DIMS[d]))
    done
    NB=$i
}

# neighbour I D S: NB = index of node I's neighbour one step in direction S (+1/-1) of
# dimension D, with wraparound.
neighbour() {
    coords "$1"
    C[$2]=$(((C[$2] + $3 + DIMS[$2]) % DIMS[$2]))
    index_of
}

# peer_of I J: for torus/ring, the node (PNODE) and interface index (PIF) at the other end
# of node I's J-th data interface. The "+" interface of a node is cabled to the "-"
# interface of its "+" neighbour.
# shellcheck disable=SC2034 # its results are for the caller
peer_of() {
    local d=$(($2 / 2))
    if (($2 % 2 == 0)); then neighbour "$1" "$d" 1; else neighbour "$1" "$d" -1; fi
    PNODE=$NB
    PIF=$(($2 ^ 1))
}

# data_ip I J: REPLY = the address/prefix of node I's J-th data interface (--data-ip).
# switch: rail k is 10.NET.(1+k).0/24. torus/ring: every link is a /31 out of
# 10.NET.16.0/20: link number l = i*ndims + d for the link from node i's "+" interface of
# dimension d; its "+" end gets the even address, its "-" end the odd one.
data_ip() {
    local i=$1 j=$2 nd=${#DIMS[@]} l side
    if [ "$TOPO" = switch ]; then
        REPLY="10.$NET.$((1 + j)).$((i + 1))/24"
        return
    fi
    if ((j % 2 == 0)); then
        l=$((i * nd + j / 2)); side=0
    else
        neighbour "$i" $((j / 2)) -1
        l=$((NB * nd + j / 2)); side=1
    fi
    REPLY="10.$NET.$((16 + l / 128)).$((2 * (l % 128) + side))/31"
}
