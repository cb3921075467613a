#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Wireshark dissector on real traffic: pme_perf between two network namespaces over
# a veth pair (eager messages of one and several frames, rendezvous, ping-pong and
# streaming), captured with tcpdump on the server's side, decoded with
# `tshark -X lua_script:tools/wireshark/pme.lua`, once with PME_AUTH=crc and once with
# PME_AUTH=mac. Every frame decodes as PME without a malformed mark or a Lua error; with
# crc every CRC is verified and good, with mac every MAC is reported as not verified and
# nothing else is said. The decoded frames agree with what each endpoint counted
# (`pme_info -c` on its counter file, kept after the process ended): frames each side
# sent and received (less only the BYE frames an endpoint sent after its peer had
# closed), ACK/LOSE/STOP/GO/CREDIT frames sent and received, eager messages and rendezvous
# offers, and retransmissions (sequenced frames seen twice). Root only.
# pme-test: tier=default cpu=110 time=20
set -euo pipefail
. "$srcdir/test/tools/lib.sh"
[ "$(id -u)" = 0 ] || tools_skip "needs root (network namespaces, raw frames, capture)"
tools_need_tshark
command -v tcpdump >/dev/null || tools_skip "needs tcpdump (apt-get install tcpdump)"
. "$srcdir/test/netns/lib.sh"
need_tool
PME_INFO=$builddir/src/tools/pme_info
ws_setup
WORK=$WS_HOME # pair_down removes it
pair pmews$$ 9000
trap 'set +e; capture_stop; pair_down' EXIT
export PME_RUNTIME_DIR=$WORK/run
mkdir -p "$PME_RUNTIME_DIR"
uid=$(id -u)

# ---- the endpoints' counters, read by pme_info -c after they ended
# hold_counters NAME IFACE: keep the counter file of the endpoint on IFACE open, so that
# its counters outlive the process (which removes the file when it closes).
declare -A held_fd held_name
hold_counters() {
    local f="" fd
    for _ in $(seq 500); do
        f=$(find "$PME_RUNTIME_DIR/pme-$uid" -name "[0-9]*.$2.*" 2>/dev/null | head -n 1) # (not claim.*)
        [ -n "$f" ] && break
        sleep 0.01
    done
    [ -n "$f" ] || tools_fail "the counter file of the endpoint on $2 never appeared"
    exec {fd}<"$f"
    held_fd[$1]=$fd held_name[$1]=${f##*/}
}
# counters NAME: "counter value" lines of that endpoint, as pme_info -c prints them: the
# kept file copied into a directory of its own and locked, as its live process did.
counters() {
    local snap=$WORK/snap.$1 fd lock
    mkdir -p "$snap/pme-$uid"
    cp --sparse=always "/proc/$$/fd/${held_fd[$1]}" "$snap/pme-$uid/${held_name[$1]}"
    exec {lock}<"$snap/pme-$uid/${held_name[$1]}"
    flock -x "$lock"
    PME_RUNTIME_DIR=$snap "$PME_INFO" -c >"$snap/pme_info.out" || tools_fail "pme_info -c failed"
    exec {lock}<&-
    fd=${held_fd[$1]}
    exec {fd}<&-
    grep -q '^  pid ' "$snap/pme_info.out" || tools_fail "pme_info -c did not list the $1's endpoint"
    awk '/^    [a-z]/ { for (i = 1; i < NF; i += 2) print $i, $(i + 1) }' "$snap/pme_info.out"
}

run_auth() { # crc | mac
    local auth=$1 cap=$WORK/$1.pcap
    echo "== PME_AUTH=$auth"
    export PME_AUTH=$auth
    if [ "$auth" = mac ]; then
        (umask 077; "$PME_INFO" --new-secret >"$WORK/secret")
        export PME_JOB_SECRET_FILE=$WORK/secret
    fi
    capture_start "${PAIR}b" "${PAIR}vb" "$cap" "$WORK/tcpdump.log"
    start_server "${PAIR}b" "${PAIR}vb" --verify
    hold_counters server "${PAIR}vb"
    ip netns exec "${PAIR}a" "$PME_PERF" client -i "${PAIR}va" --peer "$SERVER_ADDR" --verify \
        -s 0,8,1000,8950,20000,100000 -n 10 --seconds 0.0005 >"$WORK/client.log" 2>&1 &
    local client=$!
    hold_counters client "${PAIR}va"
    wait "$client" || { cat "$WORK/client.log"; tools_fail "pme_perf client failed"; }
    wait_server
    sleep 0.2
    capture_stop
    capture_complete "$WORK/tcpdump.log"
    grep -q 'all data verified' "$WORK/client.log" || tools_fail "pme_perf did not verify its data"
    unset PME_AUTH PME_JOB_SECRET_FILE

    declare -A c
    local k v who
    for who in client server; do
        while read -r k v; do c[$who.$k]=$v; done < <(counters "$who")
    done
    local cmac smac
    cmac=$(ip -n "${PAIR}a" -o link show "${PAIR}va" | sed -E 's/.*link\/ether ([^ ]+).*/\1/')
    smac=$(ip -n "${PAIR}b" -o link show "${PAIR}vb" | sed -E 's/.*link\/ether ([^ ]+).*/\1/')

    # The frames as the dissector saw them, and what it said about each.
    ws_tshark -r "$cap" -T fields -E separator=/t -e eth.src -e frame.protocols -e pme.type \
        -e pme.check.status -e pme.flags.first -e pme.seq -e pme.rts.send_id \
        -e pme.bundle.count >"$WORK/frames"
    local total
    total=$(wc -l <"$WORK/frames")
    echo "captured $total frames"
    local bad
    bad=$(awk -F'\t' '$2 !~ /:pme$/' "$WORK/frames" | wc -l)
    [ "$bad" = 0 ] || tools_fail "$bad frames not decoded as PME"
    local want_status=1 want_experts=-
    [ "$auth" = mac ] && want_status=2 want_experts=pme.expert.mac_unverified
    bad=$(awk -F'\t' -v s=$want_status '$4 != s' "$WORK/frames" | wc -l)
    [ "$bad" = 0 ] || tools_fail "$bad frames without the check status $want_status ($auth)"
    bad=$(ws_experts "$cap" | awk -v w="$want_experts" '$2 != w' | head -n 5)
    [ -z "$bad" ] || tools_fail "frames with other expert infos than $want_experts: $bad"
    echo "every frame decodes as PME; check status $want_status, expert infos: $want_experts"

    # Counts by sender and type, eager messages (first fragments; a bundle's, which is
    # one frame, counts its messages) and offers without their retransmissions, and
    # retransmissions (sequenced frames seen again).
    declare -A d
    while read -r k v; do d[$k]=$v; done < <(awk -F'\t' -v cm="$cmac" -v sm="$smac" '
        { who = $1 == cm ? "client" : $1 == sm ? "server" : "other"; t = $3
          n[who ".frames"]++; n[who ".type" t]++
          if (t >= 1 && t <= 5) { k = who SUBSEP $6; if (k in seen) n[who ".retransmits"]++; seen[k] = 1 }
          if (t == 1 && ($5 == "1" || $5 == "True") && !((who, "m", $6) in seen)) { seen[who, "m", $6] = 1; n[who ".msgs"] += $8 != "" ? $8 : 1 }
          if (t == 2 && !((who, "r", $7) in seen)) { seen[who, "r", $7] = 1; n[who ".offers"]++ } }
        END { for (k in n) print k, n[k] }' "$WORK/frames")
    [ -z "${d[other.frames]:-}" ] || tools_fail "${d[other.frames]} frames from neither endpoint"

    local mismatches=0
    agree() { # WHAT DECODED COUNTED
        if [ "${2:-0}" = "${3:-0}" ]; then
            printf '  %-48s %8s\n' "$1" "${2:-0}"
        else
            printf '  %-48s %8s decoded, %s counted  MISMATCH\n' "$1" "${2:-0}" "${3:-0}"
            mismatches=$((mismatches + 1))
        fi
    }
    local name type from to
    for from in client server; do
        to=$([ $from = client ] && echo server || echo client)
        agree "frames $from sent (tx_frames)" "${d[$from.frames]:-}" "${c[$from.tx_frames]:-}"
        # Both ends close at once: a BYE that comes after its receiver closed is on the
        # wire but was never read, so rx_frames may lack the BYE frames and nothing else.
        local sent=${d[$from.frames]:-0} bye=${d[$from.type26]:-0} got=${c[$to.rx_frames]:-0}
        if [ "$got" -lt "$sent" ] && [ "$got" -ge $((sent - bye)) ]; then
            printf '  %-48s %8s decoded, %s counted (%s BYE after %s closed)\n' \
                "frames $from sent, $to received (rx_frames)" "$sent" "$got" $((sent - got)) "$to"
        else
            agree "frames $from sent, $to received (rx_frames)" "$sent" "$got"
        fi
        for name in ack:16 lose:17 stop:18 go:19 credit:20; do
            type=${name#*:} name=${name%:*}
            agree "${name^^} frames $from sent (${name}_tx)" "${d[$from.type$type]:-}" "${c[$from.${name}_tx]:-}"
            agree "${name^^} frames $to received (${name}_rx)" "${d[$from.type$type]:-}" "${c[$to.${name}_rx]:-}"
        done
        agree "eager messages $from sent (tx_msgs)" "${d[$from.msgs]:-}" "${c[$from.tx_msgs]:-}"
        agree "eager messages $to received (rx_msgs)" "${d[$from.msgs]:-}" "${c[$to.rx_msgs]:-}"
        agree "rendezvous offers $from sent (tx_rndv)" "${d[$from.offers]:-}" "${c[$from.tx_rndv]:-}"
        agree "rendezvous offers $to received (rx_rndv)" "${d[$from.offers]:-}" "${c[$to.rx_rndv]:-}"
        agree "frames $from sent again (retransmits)" "${d[$from.retransmits]:-}" "${c[$from.retransmits]:-}"
    done
    [ "${d[client.offers]:-0}" -gt 0 ] && [ "${d[client.msgs]:-0}" -gt 0 ] ||
        tools_fail "the run made no eager messages or no rendezvous: it checks too little"
    [ $mismatches = 0 ] || tools_fail "$mismatches decoded count(s) differ from the endpoints' counters"
    echo "PME_AUTH=$auth: $total frames decoded, and every count agrees with the endpoints' counters"
}

run_auth crc
run_auth mac
