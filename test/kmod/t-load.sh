#!/bin/bash
# pme.ko loads and unloads cleanly; /dev/pme belongs to group pme with mode 0660; a
# user of group pme opens an endpoint without any capability, a user outside it and a
# machine without the module get errors that name the fix; rmmod is refused while an
# endpoint is open and succeeds once it is closed; a bad EtherType parameter is refused;
# max_ring_kb bounds the rings.
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

# An unprivileged member of group pme, with no capability at all, holds an endpoint.
coproc HOLD { as_user pmein setpriv --inh-caps=-all --bounding-set=-all "$KMOD_TOOL" hold pmel0 7; }
hold_pid=$HOLD_PID hold_out=${HOLD[0]} hold_in=${HOLD[1]}
read -r -t 20 line <&"$hold_out"
check "a user of group pme binds endpoint 7 ($line)" starts "$line" "bound ep 7 "
check "/proc lists it with the user's uid" \
    awk -v u="$(id -u pmein)" '$1 == "pmel0" && $3 == 7 && $8 == u {f = 1} END {exit !f}' /proc/driver/pme
out=$(PME_DEVICE=kernel PME_EP_ID=7 "$PME_PERF" server -i pmel0 2>&1) && rc=0 || rc=$?
check "a second endpoint 7 on that interface is refused: $(tail -1 <<<"$out")" \
    grep -q "already in use on pmel0" <<<"$out"
out=$(rmmod pme 2>&1) && rc=0 || rc=$?
check "rmmod is refused while the endpoint is open (exit $rc)" [ "$rc" != 0 ]
check "the module is still there" [ -c /dev/pme ]
exec {hold_in}>&-
wait $hold_pid

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
