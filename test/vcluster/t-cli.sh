#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster's command line: bad arguments fail with exit 2 and a message and make nothing;
# a missing cluster gives exit 4; `up` is a no-op when nothing changed and rebuilds when
# something did (or when the cluster was damaged); exec runs inside a node (its hostname,
# by any of its names, or on all nodes); two clusters run side by side and come down
# separately; `down` finishes a damaged or half-made cluster; `down --all` removes every
# cluster of a state directory; options reach the kernel (MTU, rate, fractional loss).
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=40 time=24
. "$(dirname "$0")/lib.sh"
vc_init vtc

# expect_exit CODE CMD...: CMD fails with exactly CODE and says why on stderr.
expect_exit() {
    local want=$1 rc=0 err
    shift
    err=$("$@" 2>&1 >/dev/null) || rc=$?
    [ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want ($err)"
    [ -n "$err" ] || fail "'$*' exited $rc without a message"
}

for bad in "--topology torus:3x0" "--topology torus:1x4" "--topology torus:2x2 --nodes 5" \
    "--topology torus:2x2x2x2" "--topology torus:AxB" "--topology mesh" "--topology switch" \
    "--nodes 4 --topology switch --mtu 20" "--nodes 4 --topology switch --mtu 70000" \
    "--nodes 4 --topology switch --loss 101" "--nodes 4 --topology switch --loss abc" \
    "--nodes 4 --topology switch --loss 0.0001" "--nodes 4 --topology switch --rate fast" \
    "--nodes 4 --topology switch --nics 9" "--topology ring:4 --nics 2" \
    "--nodes 0 --topology switch" "--nodes 251 --topology switch" "--nodes 4 --topology switch --bogus" \
    "--nodes 4 --topology switch --burst 100" "--nodes 4 --topology switch --net 300"; do
    # shellcheck disable=SC2086 # split the argument list
    expect_exit 2 "$VC" up --name "$NAME" $bad
done
expect_exit 2 "$VC" up --name Bad-Name --nodes 2 --topology switch
expect_exit 2 "$VC" frobnicate
[ ! -e "/run/vcluster/$NAME" ] || fail "a rejected up left state behind"
expect_exit 4 "$VC" exec --name "$NAME" n0 true
expect_exit 4 "$VC" status --name "$NAME"
expect_exit 4 "$VC" describe --name "$NAME"
"$VC" down --name "$NAME" >/dev/null || fail "down of a cluster that does not exist should succeed"
say "ok: bad arguments exit 2 with a message, a missing cluster exits 4"

# idempotent up
vc_up "$NAME" --topology ring:2 >/dev/null
id1=$(stat -L -c %i "/run/netns/$NAME-n0")
out=$("$VC" up --name "$NAME" --topology ring:2 --no-routes) || fail "second up failed"
grep -q "nothing to do" <<<"$out" || fail "identical up did not say it did nothing: $out"
[ "$(stat -L -c %i "/run/netns/$NAME-n0")" = "$id1" ] || fail "identical up rebuilt the cluster"
out=$("$VC" up --name "$NAME" --topology ring:2 --mtu 9000 --no-routes) || fail "up with a new MTU failed"
grep -q "rebuilding" <<<"$out" || fail "changed up did not say it rebuilds: $out"
[ "$(ip -n "$NAME-n1" -o link show xm | grep -o 'mtu [0-9]*')" = "mtu 9000" ] || fail "MTU 9000 not applied"
[ "$(jq .mtu "/run/vcluster/$NAME/cluster.json")" = 9000 ] || fail "MTU 9000 not described"
say "ok: identical up is a no-op, a changed one rebuilds"

# exec, by every spelling of a node
for spec in "$NAME-n1" n1 1; do
    [ "$(vc_in "$NAME" "$spec" hostname)" = "$NAME-n1" ] || fail "exec $spec does not run on $NAME-n1"
done
[ "$(vc_in "$NAME" n1 cat /proc/sys/kernel/hostname)" = "$NAME-n1" ] || fail "UTS namespace not entered"
expect_exit 2 "$VC" exec --name "$NAME" n7 true
out=$("$VC" exec --name "$NAME" all hostname)
[ "$out" = "$NAME-n0: $NAME-n0
$NAME-n1: $NAME-n1" ] || fail "exec all: $out"
# /sys/class/net is the node's (UCX and hwloc list network devices there): its ring
# links and management interface, not the host's devices.
nets=$(vc_in "$NAME" n1 ls /sys/class/net | sort | tr '\n' ' ')
[ "$nets" = "lo mgmt0 xm xp " ] || fail "/sys/class/net inside n1 lists: $nets"
[ "$(vc_in "$NAME" n1 cat /sys/class/net/xm/mtu)" = 9000 ] || fail "n1's /sys does not show its xm"
# exec runs the command in place: stopping the exec's pid stops the command (tests stop
# their probes so), and nothing of it is left running.
"$VC" exec --name "$NAME" n0 sleep 120 &
pid=$!
sleep 0.5
[ "$(ps -o comm= -p "$pid")" = sleep ] || fail "exec did not run its command in place (pid $pid is $(ps -o comm= -p "$pid"))"
kill -TERM "$pid"
wait "$pid" 2>/dev/null || true
rc=0; vc_in "$NAME" n0 sh -c 'exit 3' || rc=$?
[ "$rc" = 3 ] || fail "exec did not pass the command's exit status through (got $rc)"
say "ok: exec by name, short name and index, in place, with the node's /sys; exec all; exit status passed through"

# describe
[ "$("$VC" describe --name "$NAME" --path)" = "/run/vcluster/$NAME/cluster.json" ] || fail "describe --path"
"$VC" describe --name "$NAME" | jq -e '.schema == "vcluster/1" and .topology == "ring" and (.nodes | length) == 2' >/dev/null ||
    fail "describe does not print the description"
[ "$("$VC" describe --name "$NAME" --tsv | grep -c '^iface')" = 4 ] || fail "describe --tsv"

# options reach the kernel
vc_up "$NAME" --nodes 2 --topology switch --nics 2 --mtu 9000 --rate 10gbit --loss 0.1 >/dev/null
[ "$(ip -n "$NAME-sw" -o link show r1 | grep -o 'mtu [0-9]*')" = "mtu 9000" ] || fail "rail bridge MTU"
qd=$(tc -n "$NAME-n0" qdisc show dev eth1)
grep -q 'rate 10Gbit' <<<"$qd" || fail "no 10Gbit tbf on eth1: $qd"
qd=$(tc -n "$NAME-sw" qdisc show dev n1r0)
grep -q 'rate 10Gbit' <<<"$qd" || fail "no 10Gbit tbf on the switch port: $qd"
# shellcheck source=maint/lib/linkloss.sh
. "$VC_SRCDIR/maint/lib/linkloss.sh"
linkloss_tool "$VC_SRCDIR" || fail "no linkloss program"
for j in eth0 eth1; do
    rule=$(vc_in "$NAME" n1 "$LINKLOSS" show $j) || fail "no loss program on $j"
    [ "$(awk '{print $2}' <<<"$rule")" = 100 ] || fail "--loss 0.1 on $j: $rule"
done
say "ok: MTU 9000, 10gbit shaping on both ends, 0.1% loss on both rails"

# two clusters side by side, brought up at once
other=${NAME:0:7}b
VC_CLUSTERS+=("$other")
"$VC" up --name "$NAME" --topology torus:2x2 --no-routes >"$TMPD/a" 2>&1 &
pa=$!
"$VC" up --name "$other" --topology torus:2x2 --no-routes >"$TMPD/b" 2>&1 &
pb=$!
wait "$pa" || fail "concurrent up of $NAME failed: $(cat "$TMPD/a")"
wait "$pb" || fail "concurrent up of $other failed: $(cat "$TMPD/b")"
[ "$(jq -r .mgmt.subnet "/run/vcluster/$NAME/cluster.json")" != "$(jq -r .mgmt.subnet "/run/vcluster/$other/cluster.json")" ] ||
    fail "two clusters share a management subnet"
grep -q "^$other " <<<"$("$VC" list)" || fail "list does not show $other"
vc_check_down "$NAME"
grep -q "^cluster $other: up" <<<"$("$VC" status --name "$other")" || fail "down of $NAME damaged $other"
vc_check_mgmt "$other"
vc_check_down "$other"
say "ok: two clusters side by side, each down alone"

# a damaged cluster: status says so, up repairs it, down removes the rest
vc_up "$NAME" --topology torus:2x2 >/dev/null
ip netns del "$NAME-n1"
ip link del "$NAME-mgmt"
grep -q DAMAGED <<<"$("$VC" status --name "$NAME")" || fail "status does not report the damage"
out=$("$VC" up --name "$NAME" --topology torus:2x2 --no-routes) || fail "up of a damaged cluster failed"
grep -q "damaged" <<<"$out" || fail "up did not say it rebuilds a damaged cluster: $out"
vc_check_frames "$NAME"
ip netns del "$NAME-n2"
vc_check_down "$NAME"

# An up killed half-way, and down --all in a state directory of the test's own, with a
# hosts file of the test's own: a kill in the middle of an edit, or an edit under a lock
# the other tests' clusters do not share, must not touch the machine's /etc/hosts, which
# every other test's cluster resolves its nodes and localhost through.
cp /etc/hosts "$TMPD/hosts"
export VCLUSTER_HOSTS_FILE=$TMPD/hosts
"$VC" up --name "$NAME" --nodes 16 --topology torus:4x4 --no-routes >/dev/null 2>&1 &
pk=$!
sleep 0.4
kill -KILL "$pk" 2>/dev/null || true
wait "$pk" 2>/dev/null || true
vc_check_down "$NAME"
grep -q "localhost" "$TMPD/hosts" || fail "a killed up left the hosts file without its own lines"
say "ok: down finishes damaged and half-made clusters"

# down --all, within a private state directory
export VCLUSTER_RUNDIR=$TMPD/run
vc_up "$NAME" --topology ring:2 >/dev/null
vc_up "$other" --nodes 2 --topology switch >/dev/null
[ "$("$VC" list | wc -l)" = 2 ] || fail "list in $VCLUSTER_RUNDIR"
"$VC" down --all >/dev/null || fail "down --all failed"
unset VCLUSTER_RUNDIR
grep -q "localhost" "$TMPD/hosts" || fail "down --all left the hosts file without its own lines"
vc_assert_gone "$NAME"
vc_assert_gone "$other"
left=$(find "$TMPD/run" -mindepth 1 ! -name .lock ! -name hosts.bak)
[ -z "$left" ] || fail "down --all left files in its state directory: $left"
say "ok: down --all"
