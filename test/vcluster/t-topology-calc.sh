#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster's topology, computed (maint/lib/vcluster/topology.sh, no root, nothing made):
# what each --topology spec means (nodes, dimensions, the errors of bad ones); the
# coordinates of nodes; the cabling of ring:N, torus:AxB and torus:AxBxC (node i's "+"
# interface of dimension d reaches the "-" interface of the node one step further, with
# wraparound; every interface is the end of exactly one link); the interface names; the
# MACs (as documented, and all distinct on a cluster of 250 nodes with 8 rails); the
# --data-ip addresses (a /31 per link, a /24 per rail); the cluster's namespaces.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=40 time=2
. "$(dirname "$0")/lib.sh"
# shellcheck source=maint/lib/vcluster/base.sh
. "$VC_SRCDIR/maint/lib/vcluster/base.sh"
# shellcheck source=maint/lib/vcluster/topology.sh
. "$VC_SRCDIR/maint/lib/vcluster/topology.sh"

NAME=tc NET=200

# shape SPEC [NODES]: parse SPEC as `up --topology SPEC [--nodes NODES]` would.
shape() {
    NODES=${2:-} NICS=''
    parse_topology "$1"
    [ "$TOPO" = switch ] || NICS=$((2 * ${#DIMS[@]}))
    compute_ifaces
}

# --- what a spec means
shape torus:02x3
[ "$TOPO $SPEC $NODES ${DIMS[*]}" = "torus torus:2x3 6 2 3" ] || fail "torus:02x3 gave $TOPO $SPEC $NODES ${DIMS[*]}"
shape ring 5
[ "$TOPO $SPEC $NODES ${DIMS[*]}" = "ring ring:5 5 5" ] || fail "ring with --nodes 5 gave $TOPO $SPEC $NODES ${DIMS[*]}"
shape ring:7
[ "$SPEC $NODES" = "ring:7 7" ] || fail "ring:7 gave $SPEC $NODES"
shape torus:2x3x4 24
[ "$SPEC $NODES ${#DIMS[@]}" = "torus:2x3x4 24 3" ] || fail "torus:2x3x4 gave $SPEC $NODES"
shape switch 4
[ "$TOPO $SPEC $NODES ${#DIMS[@]}" = "switch switch 4 0" ] || fail "switch gave $TOPO $SPEC $NODES"
vc_expect_exit 2 "at least 2 nodes" shape torus:3x0 ''
vc_expect_exit 2 "2 or 3 dimensions" shape torus:2x2x2x2 ''
vc_expect_exit 2 "2 or 3 dimensions" shape torus:4 ''
vc_expect_exit 2 "'A' is not a dimension size" shape torus:AxB ''
vc_expect_exit 2 "expected switch, ring" shape mesh ''
vc_expect_exit 2 "256 nodes; at most 250" shape torus:16x16 ''
vc_expect_exit 2 "needs --nodes" shape ring ''
vc_expect_exit 2 "needs --nodes" shape switch ''
vc_expect_exit 2 "does not match" shape torus:2x2 5
say "ok: specs normalised (torus:02x3 = torus:2x3, ring + --nodes = ring:N), bad ones exit 2 and say why"

# --- interface names
shape switch 2; NICS=3; compute_ifaces
[ "${IFN[*]}" = "eth0 eth1 eth2" ] || fail "3 rails: ${IFN[*]}"
shape ring:3
[ "${IFN[*]}" = "xp xm" ] || fail "ring: ${IFN[*]}"
shape torus:2x3x2
[ "${IFN[*]}" = "xp xm yp ym zp zm" ] || fail "3D torus: ${IFN[*]}"
say "ok: interface names eth<k> (switch), xp xm [yp ym [zp zm]] (ring, torus)"

# --- coordinates (x fastest) and their inverse
shape torus:3x4
coords 5; [ "${C[*]}" = "2 1" ] || fail "torus:3x4 node 5 at ${C[*]}, expected 2 1"
coords 11; [ "${C[*]}" = "2 3" ] || fail "torus:3x4 node 11 at ${C[*]}, expected 2 3"
shape torus:2x3x4
coords 23; [ "${C[*]}" = "1 2 3" ] || fail "torus:2x3x4 node 23 at ${C[*]}, expected 1 2 3"
coords 9; [ "${C[*]}" = "1 1 1" ] || fail "torus:2x3x4 node 9 at ${C[*]}, expected 1 1 1"
for ((i = 0; i < NODES; i++)); do
    coords "$i"; index_of
    [ "$NB" = "$i" ] || fail "index_of(coords($i)) = $NB"
done
say "ok: coordinates x fastest (torus:3x4 node 5 = (2,1), torus:2x3x4 node 23 = (1,2,3))"

# --- cabling, against coordinates worked out here
# check_cabling SPEC: every (node, interface) is the end of exactly one link; the "+"
# end in dimension d reaches the node whose coordinate d is one more (mod its size), at
# its "-" interface of d; peer_of is symmetric.
check_cabling() {
    shape "$1"
    local i j d want ends=' ' nd=${#DIMS[@]}
    for ((i = 0; i < NODES; i++)); do
        for ((j = 0; j < ${#IFN[@]}; j++)); do
            peer_of "$i" "$j"
            local p=$PNODE q=$PIF
            d=$((j / 2))
            coords "$i"
            if ((j % 2 == 0)); then C[d]=$(((C[d] + 1) % DIMS[d])); else C[d]=$(((C[d] - 1 + DIMS[d]) % DIMS[d])); fi
            index_of; want=$NB
            [ "$p" = "$want" ] || fail "$1: node $i ${IFN[j]} reaches node $p, expected $want"
            [ "${IFN[q]}" = "${LETTERS[d]}$([ $((j % 2)) = 0 ] && echo m || echo p)" ] ||
                fail "$1: node $i ${IFN[j]} reaches interface ${IFN[q]} of node $p"
            peer_of "$p" "$q"
            [ "$PNODE $PIF" = "$i $j" ] || fail "$1: node $p ${IFN[q]} does not reach back to node $i ${IFN[j]}"
            [[ $ends != *" $i.$j "* ]] || fail "$1: node $i ${IFN[j]} is the end of two links"
            ends+="$i.$j "
        done
    done
    [ "$(wc -w <<<"$ends")" = $((NODES * 2 * nd)) ] || fail "$1: not every interface is cabled"
}
for spec in ring:2 ring:5 torus:2x2 torus:3x4 torus:4x4 torus:2x3x4 torus:3x3x3; do
    check_cabling "$spec"
done
# examples worked out by hand
shape ring:5
peer_of 4 0; [ "$PNODE ${IFN[PIF]}" = "0 xm" ] || fail "ring:5: n4.xp reaches n$PNODE.${IFN[PIF]}, expected n0.xm"
shape ring:2
peer_of 0 0; [ "$PNODE ${IFN[PIF]}" = "1 xm" ] || fail "ring:2: n0.xp"
peer_of 0 1; [ "$PNODE ${IFN[PIF]}" = "1 xp" ] || fail "ring:2: n0.xm"
shape torus:3x4
peer_of 5 0; [ "$PNODE ${IFN[PIF]}" = "3 xm" ] || fail "torus:3x4: n5.xp reaches n$PNODE.${IFN[PIF]}, expected n3.xm"
peer_of 5 3; [ "$PNODE ${IFN[PIF]}" = "2 yp" ] || fail "torus:3x4: n5.ym reaches n$PNODE.${IFN[PIF]}, expected n2.yp"
peer_of 5 2; [ "$PNODE ${IFN[PIF]}" = "8 ym" ] || fail "torus:3x4: n5.yp reaches n$PNODE.${IFN[PIF]}, expected n8.ym"
say "ok: ring and torus cabling (ring:2 ring:5 torus:2x2 3x4 4x4 2x3x4 3x3x3): each interface on one link, to the right neighbour's opposite interface"

# --- MACs: 02:NET:TYPE:INDEX(2 bytes):SUB, all distinct on one cluster
NET=201
mac "$MT_LINK" 300 3
[ "$REPLY" = 02:c9:02:01:2c:03 ] || fail "mac of type 2, node 300, sub 3 on net 201: $REPLY"
shape switch 250; NICS=8
macs=$(
    mac "$MT_BRIDGE" 0 255; echo "$REPLY"
    for ((k = 0; k < NICS; k++)); do mac "$MT_BRIDGE" 0 "$k"; echo "$REPLY"; done
    for ((i = 0; i < NODES; i++)); do
        mac "$MT_MGMT" "$i" 0; echo "$REPLY"
        mac "$MT_MGMT_HOST" "$i" 0; echo "$REPLY"
        for ((k = 0; k < NICS; k++)); do
            mac "$MT_RAIL" "$i" "$k"; echo "$REPLY"
            mac "$MT_PORT" "$i" "$k"; echo "$REPLY"
        done
        for ((j = 0; j < 6; j++)); do mac "$MT_LINK" "$i" "$j"; echo "$REPLY"; done
    done
)
n=$(wc -l <<<"$macs")
[ "$n" = $((1 + 8 + 250 * (2 + 16 + 6))) ] || fail "counted $n MACs"
[ "$(sort -u <<<"$macs" | wc -l)" = "$n" ] || fail "MACs repeat: $(sort <<<"$macs" | uniq -d | head -3)"
! grep -qv '^02:c9:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]$' <<<"$macs" ||
    fail "a MAC is not locally administered unicast on net 201: $(grep -v '^02:c9:' <<<"$macs" | head -1)"
say "ok: $n MACs of a 250-node, 8-rail cluster (plus every torus link) are distinct, 02:NET:..."

# --- --data-ip addresses
NET=200
shape switch 4; NICS=2; compute_ifaces
data_ip 3 1; [ "$REPLY" = 10.200.2.4/24 ] || fail "switch n3 eth1: $REPLY"
data_ip 0 0; [ "$REPLY" = 10.200.1.1/24 ] || fail "switch n0 eth0: $REPLY"
shape ring:250
data_ip 249 0; [ "$REPLY" = 10.200.17.242/31 ] || fail "ring:250 n249.xp (link 249): $REPLY"
data_ip 0 1; [ "$REPLY" = 10.200.17.243/31 ] || fail "ring:250 n0.xm (link 249, odd end): $REPLY"
data_ip 0 0; [ "$REPLY" = 10.200.16.0/31 ] || fail "ring:250 n0.xp (link 0): $REPLY"
data_ip 127 0; [ "$REPLY" = 10.200.16.254/31 ] || fail "ring:250 n127.xp (link 127): $REPLY"
data_ip 128 1; [ "$REPLY" = 10.200.16.255/31 ] || fail "ring:250 n128.xm (link 127, odd end): $REPLY"
data_ip 128 0; [ "$REPLY" = 10.200.17.0/31 ] || fail "ring:250 n128.xp (link 128): $REPLY"
# check_ips SPEC: both ends of a link share its /31 (even "+" end, odd "-" end), and no
# address repeats.
check_ips() {
    shape "$1"
    local i j a b all=()
    for ((i = 0; i < NODES; i++)); do
        for ((j = 0; j < ${#IFN[@]}; j += 2)); do
            data_ip "$i" "$j"; a=${REPLY%/31}
            peer_of "$i" "$j"
            data_ip "$PNODE" "$PIF"; b=${REPLY%/31}
            if [ "${a%.*}" != "${b%.*}" ] || ((${a##*.} % 2 != 0 || ${b##*.} != ${a##*.} + 1)); then
                fail "$1: link from n$i ${IFN[j]}: ends $a and $b are not one /31"
            fi
            all+=("$a" "$b")
        done
    done
    [ "${#all[@]}" = $((NODES * ${#IFN[@]})) ] || fail "$1: ${#all[@]} addresses for $((NODES * ${#IFN[@]})) interfaces"
    [ -z "$(printf '%s\n' "${all[@]}" | sort | uniq -d)" ] || fail "$1: addresses repeat"
}
for spec in ring:2 torus:3x4 torus:2x3x4 torus:5x5x5; do check_ips "$spec"; done
say "ok: data addresses: a /24 per rail, a /31 per ring/torus link (10.NET.16.0/20), none repeated"

# --- the cluster's namespaces
NAME=abc
shape switch 3; cluster_netns
[ "${NSS[*]}" = "abc-n0 abc-n1 abc-n2 abc-sw" ] || fail "switch namespaces: ${NSS[*]}"
shape ring:2; cluster_netns
[ "${NSS[*]}" = "abc-n0 abc-n1" ] || fail "ring namespaces: ${NSS[*]}"
say "ok: namespaces NAME-n<i> (and NAME-sw for a switch)"
