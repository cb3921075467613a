#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Liveness in the kernel: pme.ko answers PINGs for an endpoint while its process
# computes, and says BYE for it when its process dies.
#  - a server that naps 3x PME_PEER_TIMEOUT_MS in the middle of an exchange, with the
#    kernel device and no helper thread, is not taken for dead; the control: with the
#    ring device (nobody answers for it) the same nap is taken for death;
#  - the same nap under a flood of copies of one of the client's PINGs, captured on the
#    wire and sent back with a forged Ethernet source: the driver answers none of them
#    (not to the forged source, not to the client) and still answers the client's own
#    PINGs, so the nap is not taken for death;
#  - a killed endpoint fails its peer within a second (the peer timeout is a minute);
#  - the driver's PONG passes pme_core's own MAC check (GMAC) and CRC check, and a
#    forged PING (wrong MAC, wrong CRC) gets none;
#  - a PING that comes in by the endpoint's other interface, which never sent to the
#    pinger (a mesh), is answered by the kernel where the endpoint's frames to it go.
# Unprivileged users of group pme run the endpoints; kping (root) forges.
# pme-test: tier=default cpu=80 time=87
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root
if [ -z "${PME_IN_VM:-}" ]; then kmod_build; fi
in_vm --timeout 300
kmod_need_tools
modprobe veth
kmod_load
kmod_user pmeu pme
n=pmelv
kmod_pair $n
WORK=$(mktemp -d)
chmod 777 "$WORK"
user=(setpriv --reuid=pmeu --regid=pmeu --init-groups --inh-caps=-all --bounding-set=-all --)
export PME_HELPER=0 PME_PEER_TIMEOUT_MS=1000

serve() { # device nap_ms [interfaces]: a napper server in namespace b
    rm -f "$WORK/addr"
    PME_DEVICE=$1 ip netns exec ${n}b "${user[@]}" "$NAPPER" server "${3:-${n}vb}" "$WORK/addr" "$2" \
        >"$WORK/server.log" 2>&1 &
    SERVER=$!
    kmod_wait_server $SERVER
}

client() { # device
    PME_DEVICE=$1 ip netns exec ${n}a "${user[@]}" "$NAPPER" client ${n}va "$(cat "$WORK/addr")" 2>&1
}

serve kernel 3000
out=$(client kernel) && rc=0 || rc=$?
wait $SERVER && src=0 || src=$?
echo "$out"
check "a server that naps 3 s (timeout 1 s) answers in the end (client $rc, server $src)" \
    [ "$rc$src" = 00 ]
check "after its nap" grep -Eq "answered after ([2-9][0-9]{3}) ms" <<<"$out"
pongs=$(cat /sys/class/misc/pme/counters/pong_sent)
check "the driver answered PINGs for it ($pongs)" [ "$pongs" -gt 0 ]

# The same nap under a flood of copies of one of the client's own PINGs, captured as it
# left and sent back as fast as the guest can (with a forged Ethernet source: whoever
# the driver answered there, it would be the address an attacker chose). Few probes per
# timeout (PME_RTO_US=8000: retransmissions, and the PINGs beside them, at most 512 ms
# apart), so that each true PING the flood swallowed would count: before the driver
# kept a window of nonces and a budget per peer, the copies used up the endpoint's one
# budget, and the client took the server for dead in most runs.
cnt() { cat /sys/class/misc/pme/counters/"$1"; }
refused=$(cnt ping_refused) pongs=$(cnt pong_sent)
export PME_RTO_US=8000
serve kernel 3000
ip netns exec ${n}a "$KREPLAY" ${n}va 4 >"$WORK/replay.log" 2>&1 &
flood=$!
# (the client only once kreplay listens: else its PINGs may all go before)
for _ in $(seq 600); do grep -q "listening" "$WORK/replay.log" && break; sleep 0.05; done
out=$(client kernel) && rc=0 || rc=$?
wait $SERVER && src=0 || src=$?
wait $flood && frc=0 || frc=$?
unset PME_RTO_US
cat "$WORK/replay.log"
echo "$out"
refused=$(($(cnt ping_refused) - refused)) pongs=$(($(cnt pong_sent) - pongs))
check "under the flood the napping server answers in the end (client $rc, server $src)" \
    [ "$rc$src" = 00 ]
check "after its nap" grep -Eq "answered after ([2-9][0-9]{3}) ms" <<<"$out"
check "the flood ran (exit $frc)" grep -q "copies of the PING" "$WORK/replay.log"
check "the driver dropped the copies that reached it ($refused)" [ "$refused" -ge 100 ]
check "and answered only the client's own PINGs ($pongs PONGs)" [ "$pongs" -le 50 ]
check "no PONG went to the forged source" \
    grep -q ", 0 PONGs to the forged source" "$WORK/replay.log"

# The control: with the ring device nobody answers for the napping process. The
# endpoints run as root here, since raw frames need CAP_NET_RAW.
rm -f "$WORK/addr"
PME_DEVICE=ring ip netns exec ${n}b "$NAPPER" server ${n}vb "$WORK/addr" 3000 \
    >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 200); do [ -s "$WORK/addr" ] && break; sleep 0.05; done
out=$(PME_DEVICE=ring ip netns exec ${n}a "$NAPPER" client ${n}va "$(cat "$WORK/addr")" 2>&1) &&
    rc=0 || rc=$?
kill $SERVER 2>/dev/null
wait $SERVER 2>/dev/null
echo "$out"
check "the control: the same nap on the ring device is taken for death (exit $rc)" \
    grep -q "did not answer for 1000 ms" <<<"$out"

# A killed endpoint: its peer fails at once, not after the (default) minute.
export PME_PEER_TIMEOUT_MS=60000
serve kernel 30000
client kernel >"$WORK/client.log" 2>&1 &
cl=$!
for _ in $(seq 200); do grep -q napping "$WORK/server.log" && break; sleep 0.05; done
sleep 0.5
t0=$(date +%s%N)
kill -9 $SERVER
wait $cl && rc=0 || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
wait $SERVER 2>/dev/null
cat "$WORK/client.log"
check "the peer of a killed endpoint fails (exit $rc) within 1 s ($ms ms)" \
    [ "$rc" = 1 ] && [ "$ms" -lt 1000 ]
check "with the message that it closed its endpoint" \
    grep -q "closed its endpoint" "$WORK/client.log"
byes=$(cat /sys/class/misc/pme/counters/bye_sent)
check "the driver sent BYE for it ($byes)" [ "$byes" -gt 0 ]

# The driver's PONGs under the job's MAC and under CRC, and forged PINGs.
head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/secret"
chmod 600 "$WORK/secret"
chown pmeu "$WORK/secret"
cp "$WORK/secret" "$WORK/secret.root"
for auth in mac crc; do
    if [ $auth = mac ]; then
        export PME_AUTH=mac PME_JOB_SECRET_FILE=$WORK/secret
        kping_env=(env PME_AUTH=mac PME_JOB_SECRET_FILE="$WORK/secret.root")
    else
        export PME_AUTH=crc
        unset PME_JOB_SECRET_FILE
        kping_env=(env PME_AUTH=crc)
    fi
    serve kernel 4000
    out=$(ip netns exec ${n}a "${kping_env[@]}" "$KPING" ${n}va "$(cat "$WORK/addr")") &&
        rc=0 || rc=$?
    echo "$out"
    check "$auth: the driver's PONG passes pme_core's check (exit $rc)" [ "$rc" = 0 ]
    refused=$(cat /sys/class/misc/pme/counters/ping_refused)
    out=$(ip netns exec ${n}a "${kping_env[@]}" "$KPING" ${n}va "$(cat "$WORK/addr")" --forge) &&
        rc=0 || rc=$?
    echo "$out"
    check "$auth: a forged PING gets no PONG (exit $rc)" [ "$rc" = 1 ]
    check "$auth: and is counted as refused" \
        [ "$(cat /sys/class/misc/pme/counters/ping_refused)" -gt "$refused" ]
    kill $SERVER 2>/dev/null
    wait $SERVER 2>/dev/null
done

# On a mesh a peer's frames may come in by another interface than the endpoint's go out
# to it: a PING that came in by the server's second interface (which never sent to the
# pinger) is answered by the kernel all the same, where the server's frames to the
# pinger go (kping listens there). Before, the kernel left it to the (awake) process.
ip link add ${n}va2 type veth peer name ${n}vb2
ip link set ${n}va2 netns ${n}a
ip link set ${n}vb2 netns ${n}b
ip -n ${n}a link set ${n}va2 up
ip -n ${n}b link set ${n}vb2 up
export PME_AUTH=mac PME_JOB_SECRET_FILE=$WORK/secret
serve kernel 4000 "${n}vb,${n}vb2"
out=$(ip netns exec ${n}a env PME_AUTH=mac PME_JOB_SECRET_FILE="$WORK/secret.root" \
    "$KPING" ${n}va "$(cat "$WORK/addr")" --via ${n}va2) && rc=0 || rc=$?
echo "$out"
check "a PING in by the endpoint's other interface gets the kernel's PONG where its frames go (exit $rc)" \
    [ "$rc" = 0 ]
kill $SERVER 2>/dev/null
wait $SERVER 2>/dev/null
unset PME_AUTH PME_JOB_SECRET_FILE

ip netns del ${n}a
ip netns del ${n}b
rm -rf "$WORK"
check "rmmod after all that" rmmod pme
verdict
