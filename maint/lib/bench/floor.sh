# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# floor.sh - the floor of each scenario's link: what raw frames and TCP do without MPI
# on the very link the benchmarks use, measured between node 0 and node 1 by rawwire
# (maint/lib/rawwire.c) in the same repetitions as the MPI runs; and what pme_core
# itself carries there (pme_perf's stream of 1 and 4 MiB messages, authenticated as MPI
# jobs are), so that a gap between MPI over PME and the wire can be placed: in pme_core,
# or between pme_core and MPI.
#
# Owns: the rows of floor.csv (scenario,rep,test,value,unit; tests raw-pp-spin,
# raw-pp-block, tcp-pp-spin, tcp-pp-block, raw-bw, pme-bw-1m, pme-bw-4m); run_floor,
# run_pme_stream, node_exec, wait_raw_server, floor_add.
# Expects: scenarios.sh's current scenario and cluster (sc smtu cl if0 mac0 if1 mac1
# ip1 srate_bps), ppiters; from measure.sh: work (the built rawwire, pme_perf and the
# secret, the last two absent with --baseline-only), logs, out; root.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

# node_exec I CMD...: run CMD in node I's network namespace (directly: rawwire's stream
# receiver gives up after 2 s without frames, so the sender must start at once)
node_exec() { nsenter --net="/run/netns/$cl-n$1" -- "${@:2}"; }

# wait_raw_server: until node 1 has a packet socket of EtherType 0x88B5 (at most 10 s)
wait_raw_server() {
    local i
    for ((i = 0; i < 100; i++)); do
        # shellcheck disable=SC2016 # awk program
        ip netns exec "$cl-n1" awk 'tolower($4) == "88b5" {f = 1} END {exit !f}' /proc/net/packet && return 0
        sleep 0.1
    done
    return 1
}

floor_add() { [ -z "$4" ] || echo "$sc,$1,$2,$4,$3" >>"$out/floor.csv"; } # rep test unit value

# run_floor REP: rawwire between node 0 and node 1 over their common link: 8-byte raw
# frame and TCP ping-pong, polling and blocking, and a stream of MTU-sized raw frames
run_floor() {
    local rep=$1 m v total
    for m in spin block; do
        node_exec 1 timeout 60 "$work/rawwire" raw-pp "$if1" "$mac0" server 8 "$ppiters" "$m" >/dev/null 2>&1 &
        v=''
        if wait_raw_server; then
            v=$(node_exec 0 timeout 60 "$work/rawwire" raw-pp "$if0" "$mac1" client 8 "$ppiters" "$m" 2>/dev/null | awk '{print $(NF-1)}') || true
        fi
        wait || true
        floor_add "$rep" "raw-pp-$m" us "$v"
        if [ -n "$ip1" ]; then
            node_exec 1 timeout 60 "$work/rawwire" tcp-pp "$ip1" server 8 "$ppiters" "$m" >/dev/null 2>&1 &
            sleep 0.3
            v=$(node_exec 0 timeout 60 "$work/rawwire" tcp-pp "$ip1" client 8 "$ppiters" "$m" 2>/dev/null | awk '{print $(NF-1)}') || true
            wait || true
            floor_add "$rep" "tcp-pp-$m" us "$v"
        fi
    done
    # about 1.5 s of frames at the link's rate (2 GB unshaped), payload = MTU
    total=$(awk -v r="$srate_bps" 'BEGIN {printf "%d", (r > 0 ? r / 8 * 1.5 : 2e9)}')
    node_exec 1 timeout 90 "$work/rawwire" raw-bw "$if1" "$mac0" server "$smtu" "$total" >"$logs/$sc-r$rep-rawbw.out" 2>&1 &
    if wait_raw_server; then
        node_exec 0 timeout 90 "$work/rawwire" raw-bw "$if0" "$mac1" client "$smtu" "$total" >/dev/null 2>&1 || true
    fi
    wait || true
    floor_add "$rep" raw-bw MB/s "$(awk '/MB\/s/ {print $(NF-5)}' "$logs/$sc-r$rep-rawbw.out")"
    [ ! -x "$work/pme_perf" ] || run_pme_stream "$rep"
    say "  $sc rep $rep raw floor: $(awk -F, -v s="$sc" -v r="$rep" '$1 == s && $2 == r {printf "%s %s %s  ", $3, $4, $5}' "$out/floor.csv")"
}

# run_pme_stream REP: pme_perf's stream of 1 and 4 MiB messages from node 0 to node 1
# (rendezvous, 16 in flight), with the device, waiting and authentication an MPI job
# has by default.
run_pme_stream() {
    local rep=$1 addr=$work/pme-addr t
    rm -f "$addr"
    node_exec 1 env PME_JOB_SECRET_FILE="$work/secret" PME_AUTH=mac timeout 60 \
        "$work/pme_perf" server -i "$if1" --addr-file "$addr" >"$logs/$sc-r$rep-pmebw-server.out" 2>&1 &
    for ((t = 0; t < 100; t++)); do
        [ -s "$addr" ] && break
        sleep 0.1
    done
    if [ -s "$addr" ]; then
        node_exec 0 env PME_JOB_SECRET_FILE="$work/secret" PME_AUTH=mac timeout 60 \
            "$work/pme_perf" client -i "$if0" --peer "$(cat "$addr")" -t stream -s 1m,4m --csv \
            >"$logs/$sc-r$rep-pmebw.out" 2>&1 || true
    fi
    wait || true
    # CSV rows: test,wait,size,value,unit
    floor_add "$rep" pme-bw-1m MB/s "$(awk -F, '$1 == "stream" && $3 == 1048576 {print $4}' "$logs/$sc-r$rep-pmebw.out" 2>/dev/null)"
    floor_add "$rep" pme-bw-4m MB/s "$(awk -F, '$1 == "stream" && $3 == 4194304 {print $4}' "$logs/$sc-r$rep-pmebw.out" 2>/dev/null)"
}
