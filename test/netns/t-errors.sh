#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Bad input gets a clear error naming the cause and the fix: a missing interface, an
# interface that is down, no permission for raw frames (through each raw-frame device,
# ring and pcap); an endpoint id already taken; a peer that dies in the
# middle of a run (the survivor fails after PME_PEER_TIMEOUT_MS instead of hanging).
# pme-test: tier=default cpu=90 time=3
set -u
. "$srcdir/test/netns/lib.sh"
need_root
need_tool
pair pmete$$ 1500
WORK=$(mktemp -d)
fails=0
expect() { # description, expected text, command...
    local what=$1 want=$2
    shift 2
    local out rc=0
    out=$("$@" 2>&1) || rc=$?
    if [ $rc = 0 ] || ! grep -q -- "$want" <<<"$out"; then
        echo "FAIL: $what: exit $rc, wanted \"$want\" in: $out"
        fails=$((fails + 1))
    else
        echo "ok: $what: $(grep -m1 -- "$want" <<<"$out")"
    fi
}

# Both raw-frame devices check the interface the same way (dev_eth.c) before they open
# anything: once is enough. The permission is refused where each opens its socket.
expect "missing interface" "does not exist" \
    ip netns exec pmete$$a "$PME_PERF" server -i nosuch0
ip -n pmete$$a link set pmete$$va down
expect "interface down" "ip link set dev pmete$$va up" \
    ip netns exec pmete$$a "$PME_PERF" server -i pmete$$va
ip -n pmete$$a link set pmete$$va up
chmod 755 "$WORK"
cp "$PME_PERF" "$WORK/pme_perf" && chmod 755 "$WORK/pme_perf"
for dev in ring pcap; do
    expect "$dev: no CAP_NET_RAW" "CAP_NET_RAW" \
        env PME_DEVICE=$dev ip netns exec pmete$$a setpriv --reuid=nobody --regid=nogroup \
        --clear-groups --inh-caps=-all "$WORK/pme_perf" server -i pmete$$va
done

# An endpoint id in use on the same interface is refused, naming the holder.
start_server pmete$$b pmete$$vb -e 77
expect "endpoint id taken" "in use by process $SERVER_PID" \
    ip netns exec pmete$$b "$PME_PERF" server -i pmete$$vb -e 77
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=

# The peer dies during a stream: the client fails within the timeout, never hangs.
start_server pmete$$b pmete$$vb
( sleep 1; kill -9 "$SERVER_PID" ) &
start=$(date +%s%N)
expect "peer died" "did not answer for 1500 ms" \
    env PME_PEER_TIMEOUT_MS=1500 ip netns exec pmete$$a "$PME_PERF" client -i pmete$$va \
    --peer "$SERVER_ADDR" -t stream -s 1m --seconds 30
took=$(( ($(date +%s%N) - start) / 1000000 ))
wait
SERVER_PID=
echo "the client gave up $took ms after starting (server killed at about 1000 ms)"
if [ "$took" -gt 8000 ]; then
    echo "FAIL: took too long to notice the dead peer"
    fails=$((fails + 1))
fi
[ $fails = 0 ] || exit 1
echo "every error was clear"
