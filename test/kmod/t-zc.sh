#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Zero copy through pme.ko, used by an unprivileged member of group pme: bad
# registrations and arms fail with the documented errors (unaligned ones work);
# a rendezvous between two endpoints lands intact, placed by the packet handler, with
# the frames after a loss copied; buffers unmapped in the middle of a transfer are
# never written or sent from again; pme_perf's verified 4 MiB transfers go without
# copies; a process killed while it holds pinned memory, or in the middle of a
# zero-copy stream, leaves no page pinned; rmmod is refused while an endpoint is open.
# The guest's kernel log stays clean (maint/vm checks it), and every page pinned is
# unpinned (the kernel's own nr_foll_pin_acquired and _released counts agree).
# pme-test: tier=default cpu=80 time=61
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root
if [ -z "${PME_IN_VM:-}" ]; then kmod_build; fi
in_vm --timeout 600
kmod_need_tools
modprobe veth
kmod_load
kmod_user pmez pme
n=pmekz
kmod_pair $n 9000
WORK=$(mktemp -d)
chmod 777 "$WORK"
user=(setpriv --reuid=pmez --regid=pmez --init-groups --inh-caps=-all --bounding-set=-all --)
inns() {
    local ns=$1
    shift
    ip netns exec "$ns" "${user[@]}" "$@"
}
cnt() { cat /sys/class/misc/pme/counters/"$1"; }
pins_balanced() {
    local a r
    a=$(awk '$1 == "nr_foll_pin_acquired" {print $2}' /proc/vmstat)
    r=$(awk '$1 == "nr_foll_pin_released" {print $2}' /proc/vmstat)
    [ "$a" = "$r" ]
}
# Wait (up to 5 s) until nothing is pinned: the reaper may still be unpinning.
settled() {
    for _ in $(seq 100); do
        [ "$(cnt zc_pinned_pages)" = 0 ] && pins_balanced && return 0
        sleep 0.05
    done
    return 1
}

echo "== bad registrations and arms"
out=$(inns ${n}a "$KMOD_TOOL" zc-abuse ${n}va 2>&1) && rc=0 || rc=$?
echo "$out"
check "kmod_tool zc-abuse passes all its checks (exit $rc)" [ "$rc" = 0 ]
check "nothing stays pinned after it" settled

echo "== a rendezvous placed by the packet handler"
out=$(inns ${n}a "$KMOD_TOOL" zc-xfer ${n}va 2>&1) && rc=0 || rc=$?
echo "$out"
check "kmod_tool zc-xfer passes all its checks (exit $rc)" [ "$rc" = 0 ]
check "nothing stays pinned after it" settled

echo "== a process killed while it holds pinned memory"
coproc HOLD { exec ip netns exec ${n}a "${user[@]}" "$KMOD_TOOL" zc-hold ${n}va 4; }
hold_pid=$HOLD_PID
read -r -t 60 line <&"${HOLD[0]}"
check "it holds 4 MiB registered and 4 MiB armed ($line)" \
    [ "$line" = "held send recv pinned 2048" ]
check "pme.ko counts the pages pinned ($(cnt zc_pinned_pages))" [ "$(cnt zc_pinned_pages)" = 2048 ]
check "rmmod is refused while its endpoint is open" not rmmod pme 2>/dev/null
check "and the module stays" [ -c /dev/pme ]
kill -9 $hold_pid
wait $hold_pid 2>/dev/null
check "killed, it leaves nothing pinned" settled

echo "== pme_perf: verified rendezvous without copies"
export PME_DEVICE=kernel
serve() {
    rm -f "$WORK/addr"
    # Not through inns: $! must be the program's own pid (each program execs the next).
    ip netns exec ${n}b "${user[@]}" "$PME_PERF" server -i ${n}vb --addr-file "$WORK/addr" \
        --verify >"$WORK/server.log" 2>&1 &
    SERVER=$!
    kmod_wait_server $SERVER
}
serve
rx0=$(cnt zc_rx_frames) tx0=$(cnt zc_tx_frames)
out=$(inns ${n}a "$PME_PERF" client -i ${n}va --peer "$(cat "$WORK/addr")" --verify \
    -t stream -s 100000,4m -n 2 --seconds 0.01 2>&1) && rc=0 || rc=$?
echo "$out"
wait $SERVER && src=0 || src=$?
check "pme_perf passes (exit $rc) and its server too (exit $src)" [ "$rc$src" = 00 ]
check "every message verified" grep -q "all data verified" <<<"$out"
zrx=$(($(cnt zc_rx_frames) - rx0)) ztx=$(($(cnt zc_tx_frames) - tx0))
check "frames placed by the packet handler ($zrx) and sent from pinned pages ($ztx)" \
    [ "$zrx" -gt 500 ] && [ "$ztx" -gt 500 ]
check "the cache served repeated buffers ($(cnt zc_cache_hits) hits, $(cnt zc_cache_misses) misses)" \
    [ "$(cnt zc_cache_hits)" -gt "$(cnt zc_cache_misses)" ]
check "the endpoints' close left nothing pinned" settled

echo "== killed in the middle of a zero-copy stream"
for victim in client server; do
    serve
    rx0=$(cnt zc_rx_frames)
    ip netns exec ${n}a "${user[@]}" "$PME_PERF" client -i ${n}va --peer "$(cat "$WORK/addr")" \
        -t stream -s 1m --verify --seconds 60 >"$WORK/client.log" 2>&1 &
    client=$!
    for _ in $(seq 1200); do
        [ $(($(cnt zc_rx_frames) - rx0)) -gt 200 ] && break
        kill -0 $client 2>/dev/null || break
        sleep 0.05
    done
    placed=$(($(cnt zc_rx_frames) - rx0))
    check "the stream is under way with zero copy ($placed frames placed)" [ "$placed" -gt 200 ]
    [ "$placed" -gt 200 ] || cat "$WORK/client.log" "$WORK/server.log"
    if [ $victim = client ]; then kill -9 $client; else kill -9 $SERVER; fi
    sleep 1
    kill -9 $client $SERVER 2>/dev/null
    wait $client $SERVER 2>/dev/null
    check "the $victim killed mid-stream: no endpoint left" \
        [ "$(grep -c "^${n}" /proc/driver/pme)" = 0 ]
    check "and nothing pinned" settled
done

ip netns del ${n}a
ip netns del ${n}b
rm -rf "$WORK"
check "rmmod" rmmod pme
check "after which the kernel's pin counts still agree" pins_balanced
verdict
