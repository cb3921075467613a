#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster's description files, without root (maint/lib/vcluster/describe.sh writes
# them as `up` does, into a state directory of the test's own; no cluster is made):
# cluster.json has the settings, the management network, every node with its data
# interfaces, MACs, addresses and peers (each peer relation is mutual, each interface
# reaches the right number of peers), the switches and every link once; cluster.tsv
# holds the same facts; the state file reads back into the same settings; `vcluster
# describe` prints the files, `list` names the cluster, and an incomplete cluster is
# refused.
# (jq filters are in single quotes:)
# shellcheck disable=SC2016
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=30 time=8
. "$(dirname "$0")/lib.sh"
vc_pkgs jq:jq
vc_parts_init
P=vd$(($$ % 100000))

# jcheck NAME FILTER WHAT: the jq FILTER is true of cluster NAME's cluster.json.
jcheck() { jq -e "$2" "$VCLUSTER_RUNDIR/$1/cluster.json" >/dev/null || fail "$1: $3"; }

# check_common NAME NET NODES IFACES...: what every description holds.
check_common() {
    local n=$1 net=$2 nodes=$3 dir=$VCLUSTER_RUNDIR/$1
    shift 3
    local ifaces; ifaces=$(printf '"%s",' "$@")
    jcheck "$n" '.schema == "vcluster/1"' "schema"
    jcheck "$n" ".name == \"$n\" and .node_count == $nodes and (.nodes | length) == $nodes" "name or node count"
    jcheck "$n" ".state_dir == \"$dir\" and .hostfile == \"$dir/hostfile\" and .launcher == \"$dir/launcher\" and .env_file == \"$dir/env\"" "file names"
    jcheck "$n" ".mgmt == {bridge: \"$n-mgmt\", subnet: \"10.$net.0.0/24\", host_ip: \"10.$net.0.254\", iface: \"mgmt0\"}" "management network"
    jcheck "$n" "[.nodes[] | .index as \$i | .name == \"$n-n\\(\$i)\" and .hostname == .name and .netns == .name
        and .uts == \"$dir/uts/\\(.name)\" and .mgmt.ip == \"10.$net.0.\\(\$i + 1)\" and .mgmt.iface == \"mgmt0\"] | all" "node names or management addresses"
    jcheck "$n" "[.nodes[] | [.ifaces[].name] == [${ifaces%,}]] | all" "data interface names"
    jcheck "$n" '[.nodes[] | .mgmt.mac, .ifaces[].mac] | length == (unique | length)' "MACs repeat"
    # every peer names an interface that exists, with its MAC, and that names us back
    jcheck "$n" '. as $c | [.nodes[] as $n | $n.ifaces[] as $f | $f.peers[] as $p |
        [$c.nodes[] | select(.name == $p.node and .index == $p.index) | .ifaces[] | select(.name == $p.iface)] |
        length == 1 and .[0].mac == $p.mac and
        ([.[0].peers[] | select(.node == $n.name and .iface == $f.name and .mac == $f.mac)] | length == 1)] | all' \
        "a peer relation is not mutual"
    # the TSV holds the JSON's facts
    local tsv=$dir/cluster.tsv want have
    want=$(jq -r '.nodes[] as $n | $n.ifaces[] as $f | $f.peers[] | [$n.index, $f.name, $f.mac, .index, .iface, .mac] | @tsv' "$dir/cluster.json" | sort)
    have=$(awk -F'\t' '$1 == "iface" {print $2 "\t" $3 "\t" $4 "\t" $6 "\t" $7 "\t" $8}' "$tsv" | sort)
    [ "$want" = "$have" ] || fail "$n: cluster.tsv's iface records differ from cluster.json's peers"
    want=$(jq -r '.nodes[] | [.index, .name, .mgmt.ip, (.coords | map(tostring) | join(",") | if . == "" then "-" else . end)] | @tsv' "$dir/cluster.json")
    have=$(awk -F'\t' '$1 == "node" {print $2 "\t" $3 "\t" $4 "\t" $5}' "$tsv")
    [ "$want" = "$have" ] || fail "$n: cluster.tsv's node records differ from cluster.json's nodes"
    [ "$(grep -vc '^#' "$tsv")" = $((1 + nodes + $(jq '[.nodes[].ifaces[].peers[]] | length' "$dir/cluster.json"))) ] ||
        fail "$n: cluster.tsv has records of unknown kinds"
    # the CLI prints them
    cmp -s <("$VC" describe --name "$n") "$dir/cluster.json" || fail "$n: describe does not print cluster.json"
    cmp -s <("$VC" describe --name "$n" --tsv) "$tsv" || fail "$n: describe --tsv does not print cluster.tsv"
    [ "$("$VC" describe --name="$n" --path)" = "$dir/cluster.json" ] || fail "$n: describe --path"
}

# --- a switch of 3 nodes on 2 rails, 9000-byte frames, shaped, lossy, with addresses
n=${P}s
vc_fake_cluster "$n" 201 switch NODES=3 NICS=2 MTU=9000 RATE=10gbit LOSS=0.50 DATA_IP=1
check_common "$n" 201 3 eth0 eth1
jcheck "$n" '.topology == "switch" and .spec == "switch" and .dims == [] and .wraparound == false and .nics == 2' "switch settings"
jcheck "$n" '.mtu == 9000 and .rate == "10gbit" and .rate_bps == 10000000000 and .burst_bytes == 6250000 and .loss_percent == 0.5 and .data_ip == true' "link settings"
jcheck "$n" '[.nodes[].ifaces[] | .mtu == 9000 and (.peers | length) == 2 and .switch == "r\(.rail)" and .name == "eth\(.rail)"] | all' "rail interfaces"
jcheck "$n" '[.nodes[] | .index as $i | .ifaces[] | .ip == "10.201.\(.rail + 1).\($i + 1)/24"] | all' "rail addresses"
jcheck "$n" "[.switches[] | .bridge == \"r\\(.rail)\" and .netns == \"$n-sw\" and (.members | length) == 3] | length == 2" "switches"
jcheck "$n" '(.links | length) == 6 and ([.links[] | .b.port == "n\(.a.node | sub(".*-n"; ""))r\(.rail)"] | all)' "links to switch ports"
jcheck "$n" '.nodes[1].ifaces[1].mac == "02:c9:01:00:01:01"' "MAC of n1 eth1 (02:NET:RAIL:node:rail)"
printf 'cluster\t%s\tswitch\tswitch\t3\t2\t9000\t10gbit\t0.5\t10.201.0.0/24\n' "$n" >"$TMPD/want"
grep '^cluster' "$VCLUSTER_RUNDIR/$n/cluster.tsv" | cmp -s - "$TMPD/want" || fail "$n: cluster record of cluster.tsv"
say "ok: switch of 3 nodes, 2 rails: settings, rails, addresses, switches, links, peers; TSV = JSON"

# --- a 2x3 torus with addresses
n=${P}t
vc_fake_cluster "$n" 202 torus:2x3 DATA_IP=1
check_common "$n" 202 6 xp xm yp ym
jcheck "$n" '.topology == "torus" and .spec == "torus:2x3" and .dims == [2,3] and .wraparound == true and .nics == 4' "torus settings"
jcheck "$n" '.rate == null and .rate_bps == null and .burst_bytes == null and .loss_percent == 0 and .switches == []' "unshaped, lossless, no switch"
jcheck "$n" '[.nodes[].ifaces[] | (.peers | length) == 1 and .rail == null and .dim == (if .name[0:1] == "x" then 0 else 1 end)
    and .dir == (if .name[1:2] == "p" then 1 else -1 end) and .peers[0].iface[0:1] == .name[0:1] and .peers[0].iface != .name] | all' \
    "each link interface reaches one peer, the opposite one of its dimension"
jcheck "$n" '[.nodes[] | .coords == [.index % 2, (.index / 2 | floor)]] | all' "coordinates"
jcheck "$n" '.nodes[4].ifaces[2].peers[0] | .node | endswith("-n0")' "n4 (0,2) yp reaches n0 (0,0) over the wraparound"
jcheck "$n" '(.links | length) == 12 and ([.links[] | "\(.a.node)/\(.a.iface)", "\(.b.node)/\(.b.iface)"] | length == (unique | length))' "12 links, each interface on one"
jcheck "$n" '.nodes[0].ifaces[0].ip == "10.202.16.0/31" and .nodes[1].ifaces[1].ip == "10.202.16.1/31"' "the /31 of link 0 (n0 xp - n1 xm)"
say "ok: 2x3 torus: settings, coordinates, wraparound, dimensions and directions, links, /31 addresses; TSV = JSON"

# --- a ring of 2: two links between the same two nodes; no addresses
n=${P}r
vc_fake_cluster "$n" 203 ring:2
check_common "$n" 203 2 xp xm
jcheck "$n" '[.nodes[].ifaces[] | .ip == null] | all' "addresses without --data-ip"
jcheck "$n" ".links == [{a: {node: \"$n-n0\", iface: \"xp\"}, b: {node: \"$n-n1\", iface: \"xm\"}, dim: 0},
    {a: {node: \"$n-n1\", iface: \"xp\"}, b: {node: \"$n-n0\", iface: \"xm\"}, dim: 0}]" "the two links of ring:2"
say "ok: ring:2: two links between its two nodes, no addresses"

# --- the state file reads back into the same settings
n=${P}s
(
    NAME='' TOPO='' SPEC='' DIMS=() NODES='' NICS='' MTU='' RATE='' RATE_BPS='' BURST='' LOSS='' LOSS_THR='' DATA_IP='' NET=''
    load_state "$n"
    got="$NAME $TOPO $SPEC ${#DIMS[@]} $NODES $NICS $MTU $RATE $RATE_BPS $BURST $LOSS $LOSS_THR $DATA_IP $NET $COMPLETE ${IFN[*]}"
    [ "$got" = "$n switch switch 0 3 2 9000 10gbit 10000000000 6250000 0.5 500 1 201 1 eth0 eth1" ] || fail "state read back: $got"
    [ "$DIR" = "$VCLUSTER_RUNDIR/$n" ] || fail "state dir: $DIR"
    # a setting that a part adds to `up` (STATE_EXTRA) is recorded and read back too
    # shellcheck disable=SC2034 # read by write_state
    STATE_EXTRA=(FEATURE_X) FEATURE_X="seed=7 rule='drop \$5%' \"x\""
    write_state 1
    FEATURE_X=''
    load_state "$n"
    [ "$FEATURE_X" = "seed=7 rule='drop \$5%' \"x\"" ] || fail "an added setting read back as: $FEATURE_X"
) || exit 1
say "ok: the state file reads back into the same settings, added ones too"

# --- list, and an incomplete cluster
list=$("$VC" list)
[ "$(wc -l <<<"$list")" = 3 ] || fail "list shows $(wc -l <<<"$list") clusters, not 3: $list"
grep -Eq "^${P}t +damaged +torus:2x3 +6 nodes  10\.202\.0\.0/24  $VCLUSTER_RUNDIR/${P}t/cluster.json\$" <<<"$list" ||
    fail "list: $list"
sed -i 's/^COMPLETE=1$/COMPLETE=0/' "$VCLUSTER_RUNDIR/${P}r/state"
vc_expect_exit 1 "is incomplete" "$VC" describe --name "${P}r"
vc_expect_exit 4 "no cluster named '${P}x'" "$VC" describe --name "${P}x"
say "ok: list names every cluster (damaged: no namespaces here); describe refuses an incomplete one (1) and a missing one (4)"
