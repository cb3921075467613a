#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Two unprivileged endpoints (users of group pme, no capability) in two network
# namespaces joined by a veth pair exchange messages of every size class through the
# kernel device intact (pme_perf's ping-pong and stream, --verify); two endpoints on
# one interface reach each other; a client killed in the middle of a stream leaves
# nothing behind; an interface that goes down or away fails its endpoints' sends with
# ENETDOWN and ENODEV, poll reports the latter, and deleting it does not wait on us.
# pme-test: tier=default cpu=120 time=59
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root
if [ -z "${PME_IN_VM:-}" ]; then kmod_build; fi
in_vm --timeout 400
kmod_need_tools
modprobe veth
kmod_load
kmod_user pmeu pme
n=pmekv
kmod_pair $n 9000
WORK=$(mktemp -d)
chmod 777 "$WORK"
export PME_DEVICE=kernel

# ip netns exec NS "${user[@]}" COMMAND...: as the unprivileged user inside NS (each
# program execs the next, so $! of a background one is the program's own pid)
user=(setpriv --reuid=pmeu --regid=pmeu --init-groups --inh-caps=-all --bounding-set=-all --)
inns() {
    local ns=$1
    shift
    ip netns exec "$ns" "${user[@]}" "$@"
}

serve() { # ns iface
    rm -f "$WORK/addr"
    ip netns exec "$1" "${user[@]}" "$PME_PERF" server -i "$2" --addr-file "$WORK/addr" \
        --verify >"$WORK/server.log" 2>&1 &
    SERVER=$!
    kmod_wait_server $SERVER
}

serve ${n}b ${n}vb
out=$(inns ${n}a "$PME_PERF" client -i ${n}va --peer "$(cat "$WORK/addr")" --verify \
    -s 0,8,1000,9000,20000,100000 -n 3 --seconds 0.02 2>&1) && rc=0 || rc=$?
echo "$out"
grep . /sys/class/misc/pme/counters/* | sed 's|.*/||'
wait $SERVER && src=0 || src=$?
check "two namespaces: the client passes (exit $rc) and the server too (exit $src)" \
    [ "$rc$src" = 00 ]
check "through the kernel device" grep -q "device kernel," <<<"$out"
check "every message verified" grep -q "all data verified" <<<"$out"
frames=$(cat /sys/class/misc/pme/counters/rx_frames)
check "the module counted the frames ($frames)" [ "$frames" -gt 100 ]

serve ${n}a ${n}va
out=$(inns ${n}a "$PME_PERF" client -i ${n}va --peer "$(cat "$WORK/addr")" --verify \
    -s 8,20000 -n 5 --seconds 0.05 2>&1) && rc=0 || rc=$?
wait $SERVER && src=0 || src=$?
check "two endpoints on one interface (exit $rc, server $src)" [ "$rc$src" = 00 ]
local_frames=$(cat /sys/class/misc/pme/counters/tx_local)
check "their frames went host-internally ($local_frames)" [ "$local_frames" -gt 10 ]

# Killed in the middle of a stream of large messages.
serve ${n}b ${n}vb
ip netns exec ${n}a "${user[@]}" "$PME_PERF" client -i ${n}va --peer "$(cat "$WORK/addr")" \
    -t stream -s 1m --seconds 60 --verify >/dev/null 2>&1 &
client=$!
sleep 3
check "the stream runs between two endpoints" [ "$(grep -c "^${n}" /proc/driver/pme)" = 2 ]
kill -9 $client $SERVER
wait $client $SERVER 2>/dev/null
check "after kill -9 of both no endpoint is left" [ "$(grep -c "^${n}" /proc/driver/pme)" = 0 ]

# Down, then gone, under a held endpoint.
coproc HOLD { inns ${n}a "$KMOD_TOOL" hold ${n}va 5; }
hold_pid=$HOLD_PID hold_out=${HOLD[0]} hold_in=${HOLD[1]}
read -r -t 20 line <&"$hold_out"
check "an endpoint is held ($line)" starts "$line" "bound ep 5 "
ip -n ${n}a link set ${n}va down
check "/proc shows it down" grep -q "^${n}va .* down " /proc/driver/pme
out=$(inns ${n}a "$PME_PERF" server -i ${n}va 2>&1) && rc=0 || rc=$?
check "a new endpoint on the down interface is told to bring it up" \
    grep -q "ip link set dev ${n}va up" <<<"$out"
ip -n ${n}a link set ${n}va up
ip netns del ${n}b
ip -n ${n}a link del ${n}va 2>/dev/null
for _ in $(seq 50); do
    ip -n ${n}a link show ${n}va >/dev/null 2>&1 || break
    sleep 0.1
done
check "the interface could be deleted under the endpoint" \
    [ -z "$(ip -n ${n}a link show ${n}va 2>/dev/null)" ]
check "/proc shows the endpoint gone" grep -q "^${n}va .* gone " /proc/driver/pme
exec {hold_in}>&-
out=$(cat <&"$hold_out")
wait $hold_pid
echo "$out"
check "poll reports ERR and HUP, and nothing else" grep -q "poll 1 revents ERR HUP$" <<<"$out"
check "the doorbell fails with ENODEV" grep -q "doorbell -1 No such device" <<<"$out"
ip netns del ${n}a
rm -rf "$WORK"
check "rmmod after all that" rmmod pme
verdict
