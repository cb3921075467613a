#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster --rate: a raw-frame stream over a link shaped to 1gbit measures within 10% of
# 125 MB/s (wire bytes, i.e. Ethernet header included, which is what tbf meters), on a
# point-to-point torus link; and on a switch, two nodes sending into a third share that
# node's 1gbit port, as on a real switch.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=all time=11
. "$(dirname "$0")/lib.sh"
vc_init vtr

# stream_rate CLUSTER RXNODE RXIF "TXNODE TXIF DSTMAC ID"...: run the senders at once for
# 3 s into one sink (any stream id) and print the sink's wire rate in MB/s.
stream_rate() {
    local n=$1 rx=$2 rxif=$3 s pids=()
    shift 3
    rm -f "$TMPD/ready" "$TMPD/sink"
    "$VC" exec --name "$n" "$rx" "$PROBE" sink "$rxif" 0 1000 "$TMPD/ready" >"$TMPD/sink" &
    local sink=$!
    VC_BGPIDS+=("$sink")
    for ((i = 0; i < 100; i++)); do [ -e "$TMPD/ready" ] && break; sleep 0.05; done
    for s in "$@"; do
        # shellcheck disable=SC2086 # "node iface mac id"
        set -- $s
        "$VC" exec --name "$n" "$1" "$PROBE" stream "$2" "$3" 1500 seconds 3 "$4" >/dev/null &
        pids+=($!)
    done
    wait "${pids[@]}"
    wait "$sink"
    sed -n 's/.*wire_MBps=\([0-9.]*\).*/\1/p' "$TMPD/sink"
}

within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

# A ring of 2: n0.xp is cabled to n1.xm.
vc_up "$NAME" --topology ring:2 --rate 1gbit
json=$(vc_json "$NAME")
[ "$(jq -r .rate_bps <<<"$json")" = 1000000000 ] || fail "description does not say 1gbit"
status=$("$VC" status --name "$NAME")
grep -Eq '^ +xp .* 1Gbit ' <<<"$status" || fail "status does not show the 1Gbit qdisc:
$status"
mac=$(jq -r '.nodes[1].ifaces[] | select(.name == "xm") | .mac' <<<"$json")
r=$(stream_rate "$NAME" "$NAME-n1" xm "$NAME-n0 xp $mac 1")
say "ring link shaped to 1gbit: $r MB/s (want 112.5 to 137.5)"
within "$r" 112.5 137.5 || fail "link rate $r MB/s is not within 10% of 125 MB/s"
vc_check_down "$NAME"

# A switch of 3: n0 and n1 both send to n2; n2's port (the bridge's egress) is the limit.
sw=${NAME:0:7}s
vc_up "$sw" --nodes 3 --topology switch --rate 1gbit
json=$(vc_json "$sw")
mac=$(jq -r '.nodes[2].ifaces[0].mac' <<<"$json")
r=$(stream_rate "$sw" "$sw-n2" eth0 "$sw-n0 eth0 $mac 1" "$sw-n1 eth0 $mac 2")
say "two senders into one 1gbit switch port: $r MB/s together (want 112.5 to 137.5)"
within "$r" 112.5 137.5 || fail "switch port rate $r MB/s is not within 10% of 125 MB/s"
vc_check_down "$sw"
