#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pme.ko loads and unloads cleanly; /dev/pme belongs to group pme with mode 0660; a
# user of group pme opens an endpoint without any capability, a user outside it and a
# machine without the module get errors that name the fix; PME_DEVICE=auto (the
# default) takes the kernel device exactly when the user may open /dev/pme; pme_info
# shows the module's totals and, per endpoint, what it counted; /proc/driver/pme shows a
# reader only its own user's endpoints (root all); rmmod is refused while an endpoint
# is open and succeeds once it is closed; a bad EtherType parameter is refused;
# max_ring_kb bounds the rings; user_ring_mb bounds one user's rings together, with an
# error that names it; rings are charged to the memory cgroup of the process that binds
# (one that does not fit its memory.max is refused with an error that says so).
# pme-test: tier=default cpu=80 time=75
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root
if [ -z "${PME_IN_VM:-}" ]; then kmod_build; fi
in_vm --timeout 240
kmod_need_tools
modprobe veth

ip link add pmel0 type veth peer name pmel1
ip link set pmel0 up
ip link set pmel1 up
out=$(PME_DEVICE=kernel "$PME_PERF" server -i pmel0 2>&1) && rc=0 || rc=$?
check "without the module, PME_DEVICE=kernel says to load it (exit $rc)" \
    grep -q "kernel module is not loaded (modprobe pme" <<<"$out"
# first_line COMMAND...: the first line a server prints, then it is stopped
first_line() { timeout 10 "$@" 2>&1 | head -n 1; }
unset PME_DEVICE
line=$(first_line "$PME_PERF" server -i pmel0)
check "without the module, the default device is the ring ($line)" grep -q "device ring)" <<<"$line"
check "and pme_info says the module is not loaded" \
    grep -q "pme.ko not loaded" <("$builddir/src/tools/pme_info")

kmod_deps
out=$(insmod "$srcdir/kmod/pme.ko" ethertype=0x0500 2>&1) && rc=0 || rc=$?
check "ethertype=0x0500 (a length) is refused (exit $rc)" [ "$rc" != 0 ]
check "and the kernel log says why" grep -q "ethertype 0x0500 is a length" <(dmesg)

kmod_load
check "/dev/pme is group pme, mode 0660" [ "$(stat -c '%G %a' /dev/pme)" = "pme 660" ]
check "the global counters are in sysfs" [ "$(cat /sys/class/misc/pme/counters/rx_frames)" = 0 ]
check "the endpoint table is in /proc" grep -q "^iface ifindex ep job" /proc/driver/pme

kmod_user pmein pme
kmod_user pmeout

out=$(as_user pmeout env PME_DEVICE=kernel "$PME_PERF" server -i pmel0 2>&1) && rc=0 || rc=$?
check "outside group pme: the error names the group (exit $rc)" \
    grep -q "add the user to group pme" <<<"$out"
out=$(as_user pmeout "$PME_PERF" server -i pmel0 2>&1) && rc=0 || rc=$?
check "outside group pme the default falls back to the ring, whose error names the kernel device" \
    grep -q "no permission for raw Ethernet frames on pmel0.*PME_DEVICE=kernel" <<<"$out"
pmein=(setpriv --reuid=pmein --regid=pmein --init-groups --inh-caps=-all --bounding-set=-all --)
line=$(first_line "${pmein[@]}" "$PME_PERF" server -i pmel0)
check "a member of group pme gets the kernel device by default ($line)" \
    grep -q "device kernel)" <<<"$line"

# pme_info: the module's totals, and per endpoint what the module counted for it.
"${pmein[@]}" "$PME_PERF" server -i pmel0 -e 3 >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do grep -q "^pmel0 [0-9]* 3 " /proc/driver/pme && break; sleep 0.05; done
"$KMOD_TOOL" send pmel1 "$(cat /sys/class/net/pmel0/address)" 3 good 5 >/dev/null
sleep 0.2
info=$("$builddir/src/tools/pme_info" -c)
kill $server
wait $server 2>/dev/null
echo "$info"
check "pme_info shows the module loaded, with its totals" \
    grep -q "pme.ko loaded, totals:" <<<"$info"
module_counted() { # counter value: in the lines pme_info -c gives the endpoint's module part
    grep -A3 "kernel (pme.ko), interface up:" <<<"$info" | grep -Eq "$1 +$2( |$)"
}
check "and for the endpoint on the kernel device what the module counted (5 frames in)" \
    module_counted rx_frames 5

# An unprivileged member of group pme, with no capability at all, holds an endpoint.
coproc HOLD { as_user pmein setpriv --inh-caps=-all --bounding-set=-all "$KMOD_TOOL" hold pmel0 7; }
hold_pid=$HOLD_PID hold_out=${HOLD[0]} hold_in=${HOLD[1]}
read -r -t 20 line <&"$hold_out"
check "a user of group pme binds endpoint 7 ($line)" starts "$line" "bound ep 7 "
check "/proc lists it with the user's uid" \
    awk -v u="$(id -u pmein)" '$1 == "pmel0" && $3 == 7 && $8 == u {f = 1} END {exit !f}' /proc/driver/pme
# Who reads what of it: a job's id, node, incarnation and pid are its user's business.
kmod_user pmein2 pme
proc_lines() { as_user "$1" cat /proc/driver/pme | grep -c "^pmel0 "; }
check "a user outside group pme reads none of pmein's endpoints in /proc ($(proc_lines pmeout))" \
    [ "$(proc_lines pmeout)" = 0 ]
check "only the header" as_user pmeout grep -q "^iface ifindex ep job" /proc/driver/pme
check "nor does another member of group pme ($(proc_lines pmein2))" [ "$(proc_lines pmein2)" = 0 ]
check "pmein reads its own" [ "$(proc_lines pmein)" = 1 ]
out=$(PME_DEVICE=kernel PME_EP_ID=7 "$PME_PERF" server -i pmel0 2>&1) && rc=0 || rc=$?
check "a second endpoint 7 on that interface is refused: $(tail -1 <<<"$out")" \
    grep -q "already in use on pmel0" <<<"$out"
out=$(rmmod pme 2>&1) && rc=0 || rc=$?
check "rmmod is refused while the endpoint is open (exit $rc)" [ "$rc" != 0 ]
check "the module is still there" [ -c /dev/pme ]
exec {hold_in}>&-
wait $hold_pid

# Ring memory. One user's endpoints together hold at most user_ring_mb of rings (a
# quarter of the RAM unless set): PME_RING=8m makes rings of about 9 MiB, two of them
# do not fit in 16.
ram4=$(awk '$1 == "MemTotal:" {print int($2 / 4096)}' /proc/meminfo)
lim=$(cat /sys/module/pme/parameters/user_ring_mb 2>/dev/null)
check "user_ring_mb defaults to a quarter of the RAM (${lim:-none}, $ram4 MiB)" \
    [ "${lim:-0}" -ge $((ram4 - 1)) ] && [ "${lim:-0}" -le $((ram4 + 1)) ]
echo 16 >/sys/module/pme/parameters/user_ring_mb
pmein2=(setpriv --reuid=pmein2 --regid=pmein2 --init-groups --inh-caps=-all --bounding-set=-all --)
ring8() { # ep command...: a server of endpoint ep with PME_RING=8m, as the command's user
    local e=$1
    shift
    exec "$@" env PME_DEVICE=kernel PME_RING=8m "$PME_PERF" server -i pmel0 -e "$e"
}
on_proc() { # ep: wait until /proc lists it
    for _ in $(seq 100); do grep -q "^pmel0 [0-9]* $1 " /proc/driver/pme && return 0; sleep 0.05; done
    return 1
}
ring8 20 "${pmein[@]}" >/dev/null 2>&1 &
first=$!
check "pmein binds one endpoint of 9 MiB of rings under user_ring_mb=16" on_proc 20
out=$(ring8 21 timeout 10 "${pmein[@]}" 2>&1 | head -n 3)
echo "$out"
check "a second one is refused with an error that names user_ring_mb" \
    grep -q "more than the module's user_ring_mb (16 MiB)" <<<"$out"
ring8 22 "${pmein2[@]}" >/dev/null 2>&1 &
other=$!
check "another user's endpoint counts apart" on_proc 22
kill $first
wait $first 2>/dev/null
ring8 21 "${pmein[@]}" >/dev/null 2>&1 &
again=$!
check "once pmein's first endpoint is closed, its share is back" on_proc 21
kill $other $again
wait $other $again 2>/dev/null
echo 0 >/sys/module/pme/parameters/user_ring_mb

# Rings are kernel memory charged to the memory cgroup of the process that binds: 64 MiB
# of them do not fit a memory.max of 24 MiB, and the error says why; 32 MiB of them
# show in the cgroup's vmalloc (before, nothing charged them: a member of group pme
# held max_ring_kb per open file beyond any limit).
cg=/sys/fs/cgroup
mountpoint -q $cg || mount -t cgroup2 none $cg
echo +memory >$cg/cgroup.subtree_control
mkdir -p $cg/pmering $cg/pmeroom
echo $((24 << 20)) >$cg/pmering/memory.max
in_cgroup() { # cgroup command...
    exec sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg/$1" "${@:2}"
}
out=$(in_cgroup pmering timeout 10 "${pmein[@]}" env PME_DEVICE=kernel PME_RING=64m \
    "$PME_PERF" server -i pmel0 -e 23 2>&1 | head -n 3)
echo "$out"
check "rings past the cgroup's memory.max are refused, naming the cgroup" \
    grep -q "count against the memory cgroup's limit" <<<"$out"
in_cgroup pmeroom "${pmein[@]}" env PME_DEVICE=kernel PME_RING=32m \
    "$PME_PERF" server -i pmel0 -e 24 >/dev/null 2>&1 &
big=$!
on_proc 24
vm=$(awk '$1 == "vmalloc" {print $2}' $cg/pmeroom/memory.stat)
check "32 MiB of rings are charged to the cgroup of their process (vmalloc ${vm:-none}, in all $(cat $cg/pmeroom/memory.current))" \
    [ "${vm:-0}" -ge $((32 << 20)) ]
kill $big
wait $big 2>/dev/null

# With no room allowed at all, an endpoint still gets the least rings that work.
echo 0 >/sys/module/pme/parameters/max_ring_kb
line=$("$KMOD_TOOL" hold pmel0 8 </dev/null | head -n 1)
check "max_ring_kb=0 gives the smallest rings ($line)" [ "$line" = "bound ep 8 rx 8 tx 8" ]

check "rmmod succeeds once it is closed" rmmod pme
check "and /dev/pme is gone" [ ! -e /dev/pme ]
kmod_load ethertype=0x88b6
check "the module loads again with another EtherType" \
    [ "$(cat /sys/module/pme/parameters/ethertype)" = 34998 ]
out=$(PME_DEVICE=kernel "$PME_PERF" server -i pmel0 2>&1) && rc=0 || rc=$?
check "a job with the default EtherType is told to match them (exit $rc)" \
    grep -q "serves EtherType 0x88b6, PME_ETHERTYPE asks for 0x88b5" <<<"$out"
ip link del pmel0
check "rmmod again" rmmod pme
verdict
