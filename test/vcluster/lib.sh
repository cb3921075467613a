# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# lib.sh - helpers shared by the vcluster tests (sourced by test/vcluster/t-*.sh).
#
# A test calls vc_init PREFIX first: it skips unless root and able to make namespaces,
# installs what the tests need, builds the raw-frame probe, picks a cluster name unique
# to this process (PREFIX + pid) so that tests can run beside each other and beside
# anyone's own clusters, and arranges for every cluster it makes to be removed on exit.
set -euo pipefail

VC_SRCDIR=${srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VC=$VC_SRCDIR/maint/vcluster
VC_CLUSTERS=()
VC_BGPIDS=()
TMPD=

say() { printf '%s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
# skip REASON: exit 77 with the reason as the last line of output.
skip() { printf 'SKIP: %s\n' "$*"; exit 77; }
# vc_expect_exit CODE WORDS CMD...: CMD (a command or function, run in a subshell) exits
# with CODE and says WORDS on stderr.
vc_expect_exit() {
    local want=$1 words=$2 rc=0 err
    shift 2
    err=$( ("$@") 2>&1 >/dev/null) || rc=$?
    [ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want ($err)"
    [[ $err == *"$words"* ]] || fail "'$*': message '$err' does not say '$words'"
}

vc_cleanup() {
    local rc=$? p n
    trap - EXIT
    for p in "${VC_BGPIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for n in "${VC_CLUSTERS[@]}"; do "$VC" down --name "$n" >/dev/null 2>&1 || true; done
    [ -z "$TMPD" ] || rm -rf "$TMPD"
    exit "$rc"
}

# vc_pkgs CMD:PKG...: install missing Debian packages, or skip when that is impossible.
vc_pkgs() {
    local spec pkgs=()
    for spec in "$@"; do command -v "${spec%%:*}" >/dev/null || pkgs+=("${spec#*:}"); done
    [ ${#pkgs[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null || skip "needs ${pkgs[*]} and there is no apt-get to install them"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300)
    say "installing ${pkgs[*]}"
    "${apt[@]}" install --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1 ||
        { "${apt[@]}" update >/dev/null 2>&1 || true
          "${apt[@]}" install --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1; } ||
        skip "cannot install ${pkgs[*]} with apt-get"
}

# vc_init PREFIX: see the top of this file. Sets NAME (the test's cluster name).
vc_init() {
    [ "$(id -u)" = 0 ] || skip "vcluster tests need root (network namespaces, veth, bridges, nftables)"
    if ! command -v unshare >/dev/null || ! unshare --net --uts true 2>/dev/null; then
        skip "cannot create network/UTS namespaces here (no CAP_SYS_ADMIN?)"
    fi
    vc_pkgs jq:jq cc:gcc ping:iputils-ping ip:iproute2 nft:nftables
    TMPD=$(mktemp -d /tmp/vcluster-test.XXXXXX)
    trap vc_cleanup EXIT
    NAME=$1$(($$ % 100000))
    NAME=${NAME:0:8}
    cc -O2 -Wall -o "$TMPD/vcprobe" "$VC_SRCDIR/test/vcluster/vcprobe.c" || fail "cannot build vcprobe.c"
    PROBE=$TMPD/vcprobe
}

# vc_up NAME ARGS...: bring a cluster up (and register it for cleanup). A ring or torus
# comes up without PME's routes unless ARGS say --routes or VC_DEFAULT_ROUTES=1 (test
# vcluster's own default): the forwarder would take the probes' frames of PME's
# EtherType for frames to route, and these tests check the links themselves.
vc_up() {
    local n=$1 routes=(); shift
    [[ " $* " == *" --routes "* || " $* " == *" --no-routes "* || ${VC_DEFAULT_ROUTES:-0} = 1 ]] ||
        routes=(--no-routes)
    VC_CLUSTERS+=("$n")
    "$VC" up --name "$n" "$@" "${routes[@]}" || fail "vcluster up --name $n $* failed"
}

vc_json() { cat "/run/vcluster/$1/cluster.json"; }

# vc_in NAME NODE CMD...: run CMD inside a node of cluster NAME.
vc_in() { local n=$1 node=$2; shift 2; "$VC" exec --name "$n" "$node" "$@"; }

# vc_counter NAME NODE IFACE FIELD: a /proc/net/dev counter of an interface of a node
# (FIELD: rx_bytes rx_packets rx_drop tx_bytes tx_packets tx_drop).
vc_counter() {
    vc_in "$1" "$2" cat /proc/net/dev | awk -v d="$3" -v f="$4" '
        { sub(/^ */, ""); split($0, a, ":"); if (a[1] != d) next; split(a[2], v, " ")
          m["rx_bytes"] = v[1]; m["rx_packets"] = v[2]; m["rx_drop"] = v[4]
          m["tx_bytes"] = v[9]; m["tx_packets"] = v[10]; m["tx_drop"] = v[12]; print m[f] }'
}

# vc_assert_gone NAME: nothing of cluster NAME is left anywhere.
vc_assert_gone() {
    local n=$1 left=""
    left+=$(ip netns list | awk '{print $1}' | grep -E "^$n-" | sed 's/^/netns /' || true)
    left+=$(ip -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | grep -E "^$n-" | sed 's/^/link /' || true)
    [ ! -e "/run/vcluster/$n" ] || left+=" dir:/run/vcluster/$n"
    left+=$(grep -E "# vcluster:$n\$" "${VCLUSTER_HOSTS_FILE:-/etc/hosts}" | sed 's/^/hosts: /' || true)
    left+=$(grep -F "/run/vcluster/$n/" /proc/self/mountinfo | sed 's/^/mount: /' || true)
    left+=$(nft list tables 2>/dev/null | grep -F "$n" | sed 's/^/nft: /' || true)
    [ -z "$left" ] || fail "after down, cluster $n left: $left"
}

# vc_check_nodes NAME: every node has its hostname, its own namespaces, exactly the data
# interfaces and MACs the description lists, and silent data links.
vc_check_nodes() {
    local n=$1 json ns i count want have seen_net="" info d tx
    json=$(vc_json "$n")
    count=$(jq .node_count <<<"$json")
    [ "$(jq '.nodes | length' <<<"$json")" = "$count" ] || fail "description lists the wrong number of nodes"
    sleep 1 # let any autoconfiguration chatter happen before the counters are read
    for ((i = 0; i < count; i++)); do
        ns=$(jq -r ".nodes[$i].name" <<<"$json")
        info=$(vc_in "$n" "$ns" sh -c 'hostname; readlink /proc/self/ns/net; cat /proc/net/dev')
        [ "$(sed -n 1p <<<"$info")" = "$ns" ] || fail "node $ns: hostname is not $ns"
        d=$(sed -n 2p <<<"$info")
        [[ $seen_net != *" $d "* ]] || fail "node $ns shares a network namespace with another node"
        seen_net+=" $d "
        want=$(jq -r ".nodes[$i] | (.ifaces[] | \"\(.name) \(.mac) \(.mtu)\"), \"mgmt0 \(.mgmt.mac) 1500\"" <<<"$json" | sort)
        have=$(ip -n "$ns" -o link show | awk '{ d = $2; sub(/:$/, "", d); sub(/@.*/, "", d); if (d == "lo") next
                 for (i = 1; i <= NF; i++) { if ($i == "mtu") m = $(i+1); if ($i == "link/ether") a = $(i+1) }
                 print d, a, m }' | sort)
        [ "$want" = "$have" ] || fail "node $ns: interfaces differ from the description:
want:
$want
have:
$have"
        # Data links carry nothing until someone sends: no IPv6 autoconfiguration chatter.
        for d in $(jq -r ".nodes[$i].ifaces[].name" <<<"$json"); do
            tx=$(awk -v d="$d" '{ sub(/^ */, ""); split($0, a, ":"); if (a[1] == d) { split(a[2], v, " "); print v[10] } }' <<<"$info")
            [ "$tx" = 0 ] || fail "node $ns $d sent $tx frames by itself (link not silent)"
        done
    done
    say "ok: $count nodes with their own hostnames, namespaces, interfaces and MACs; data links silent"
}

# vc_check_mgmt NAME: the management network reaches every node, by address and by name,
# from the host and from node 0.
vc_check_mgmt() {
    local n=$1 json ip host count i first
    json=$(vc_json "$n")
    count=$(jq .node_count <<<"$json")
    first=$(jq -r '.nodes[0].name' <<<"$json")
    for ((i = 0; i < count; i++)); do
        ip=$(jq -r ".nodes[$i].mgmt.ip" <<<"$json")
        host=$(jq -r ".nodes[$i].hostname" <<<"$json")
        [ "$(getent hosts "$host" | awk '{print $1}')" = "$ip" ] || fail "$host does not resolve to $ip"
        ping -c 1 -W 2 "$ip" >/dev/null || fail "host cannot ping $host ($ip)"
        vc_in "$n" "$first" ping -c 1 -W 2 "$host" >/dev/null || fail "$first cannot ping $host"
    done
    say "ok: management network reaches all $count nodes (from the host and from $first)"
}

# vc_check_frames NAME: every data interface sends one broadcast and one unicast frame
# per peer (EtherType 0x88B5); exactly the peers the description lists receive them,
# with the right source and destination MACs, and no other interface does.
vc_check_frames() {
    local n=$1 json count i ns args pids=() r
    json=$(vc_json "$n")
    count=$(jq .node_count <<<"$json")
    rm -f "$TMPD"/rx.* "$TMPD"/ready.*
    for ((i = 0; i < count; i++)); do
        ns=$(jq -r ".nodes[$i].name" <<<"$json")
        "$VC" exec --name "$n" "$ns" "$PROBE" sniff "$TMPD/ready.$i" >"$TMPD/rx.$i" &
        pids+=($!)
        VC_BGPIDS+=($!)
    done
    for ((r = 0; r < 100; r++)); do
        [ "$(find "$TMPD" -maxdepth 1 -name 'ready.*' | wc -l)" = "$count" ] && break
        sleep 0.05
    done
    [ "$r" -lt 100 ] || fail "sniffers did not start"
    # broadcasts first: they also teach the switches every MAC, so unicasts are switched
    for kind in b u; do
        for ((i = 0; i < count; i++)); do
            ns=$(jq -r ".nodes[$i].name" <<<"$json")
            if [ "$kind" = b ]; then
                mapfile -t args < <(jq -r --argjson i "$i" '.nodes[$i] as $n | $n.ifaces[] |
                    .name, "bcast", "\($n.name)/\(.name)/b"' <<<"$json")
            else
                mapfile -t args < <(jq -r --argjson i "$i" '.nodes[$i] as $n | $n.ifaces[] as $f | $f.peers[] |
                    $f.name, .mac, "\($n.name)/\($f.name)/u/\(.node)/\(.iface)"' <<<"$json")
            fi
            [ ${#args[@]} -eq 0 ] || vc_in "$n" "$ns" "$PROBE" send "${args[@]}" || fail "send from $ns failed"
        done
        sleep 0.2
    done
    sleep 0.3
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    local got want other
    got=$(for ((i = 0; i < count; i++)); do
        ns=$(jq -r ".nodes[$i].name" <<<"$json")
        awk -v node="$ns" '$2 != "otherhost" { print node, $1, $3, $4, $5 }' "$TMPD/rx.$i"
    done | sort)
    other=$(cat "$TMPD"/rx.* | awk '$2 == "otherhost"' | wc -l)
    want=$(jq -r '
        .nodes[] as $n | $n.ifaces[] as $f | $f.peers[] |
          "\(.node) \(.iface) \($f.mac) ff:ff:ff:ff:ff:ff \($n.name)/\($f.name)/b",
          "\(.node) \(.iface) \($f.mac) \(.mac) \($n.name)/\($f.name)/u/\(.node)/\(.iface)"' <<<"$json" | sort)
    if [ "$got" != "$want" ]; then
        diff <(echo "$want") <(echo "$got") | head -40 >&2 || true
        fail "raw frames did not reach exactly the described neighbours ('<' expected only, '>' received only)"
    fi
    say "ok: $(wc -l <<<"$want") raw frames of EtherType 0x88B5 reached exactly the described neighbour interfaces ($other flooded frames seen as otherhost)"
}

# vc_check_down NAME: down succeeds and leaves nothing behind.
vc_check_down() {
    "$VC" down --name "$1" || fail "down --name $1 failed"
    vc_assert_gone "$1"
    say "ok: down left nothing of $1 behind"
}

# vc_topology_test PREFIX UP-ARGS...: the whole check of one topology.
vc_topology_test() {
    vc_init "$1"; shift
    local t0 t1
    t0=$(date +%s%N)
    vc_up "$NAME" "$@"
    t1=$(date +%s%N)
    say "up $* took $(((t1 - t0) / 1000000)) ms"
    jq -e '.schema == "vcluster/1"' "/run/vcluster/$NAME/cluster.json" >/dev/null || fail "bad description"
    vc_check_nodes "$NAME"
    vc_check_mgmt "$NAME"
    vc_check_frames "$NAME"
    "$VC" status --name "$NAME" >"$TMPD/status" || fail "status failed"
    vc_check_down "$NAME"
}

# vc_parts_init: for a test of vcluster's parts without root: TMPD (removed at exit), a
# state directory and hosts file of the test's own (VCLUSTER_RUNDIR, VCLUSTER_HOSTS_FILE),
# and the parts that write a cluster's files (base topology state links launcher
# describe) sourced.
vc_parts_init() {
    local part
    TMPD=$(mktemp -d /tmp/vcluster-test.XXXXXX)
    trap 'rm -rf "$TMPD"' EXIT
    export VCLUSTER_RUNDIR=$TMPD/run VCLUSTER_HOSTS_FILE=$TMPD/hosts
    for part in base topology state links launcher describe; do
        # shellcheck source=/dev/null
        . "$VC_SRCDIR/maint/lib/vcluster/$part.sh"
    done
}

# vc_fake_cluster NAME NET SPEC [SETTING=VALUE...]: the state directory of a cluster as
# `up` leaves it (state, cluster.json, cluster.tsv, hostfile, launcher, env), written by
# vcluster's parts without making the cluster: for tests of those files that need no
# root. The caller sources base, topology, state, links, launcher and describe from
# maint/lib/vcluster, with VCLUSTER_RUNDIR (and VCLUSTER_HOSTS_FILE) of its own.
# SETTINGs are those of `up`, by their names in the state file: NODES, NICS, MTU, RATE,
# LOSS, DATA_IP.
# shellcheck disable=SC2034 # the settings are read by the parts
vc_fake_cluster() {
    NAME=$1 NET=$2 NODES='' NICS=1 MTU=1500 RATE='' RATE_BPS='' BURST='' LOSS=0 DATA_IP=0
    local spec=$3 a
    shift 3
    for a in "$@"; do declare -g "$a"; done
    parse_topology "$spec"
    [ "$TOPO" = switch ] || NICS=$((2 * ${#DIMS[@]}))
    if [ -n "$RATE" ]; then parse_rate "$RATE"; default_burst; fi
    parse_loss "$LOSS"
    CONFIG="(written by a test)"
    compute_ifaces
    DIR=$(cluster_dir "$NAME")
    mkdir -p "$DIR/uts"
    write_state 1
    write_hostfile
    write_launcher
    write_json
    write_tsv
}
