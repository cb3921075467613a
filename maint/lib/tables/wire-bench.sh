# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# wire-bench.sh - maint/wire-bench's tables, sourced, apart from the measuring so that
# a test can feed them made-up measurements.
#
# Expects: vals, an associative array of lists over runs ("KEY" -> " v1 v2 ...", a
# failed measurement kept as "-" so that two lists stay paired run by run); runs, mtu
# (and loss for wire_table, other and auth for against_table); median
# (maint/lib/stats.sh). Each table starts with a line saying what was measured, with
# the date, the cores and (wire_table) the kernel.
# The globals named under "Expects" are the caller's:
# shellcheck disable=SC2154

# ratio A B: A/B to 2 decimals; "-" when either is missing or B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (a == "" || a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a/b}'; }
# nth VALUES I: the I-th value (1-based) of a list
nth() { awk -v i="$2" '{print $i}' <<<"$1"; }
# paired_ratio A B: the median over runs of A's value divided by B's in the same run
paired_ratio() {
    local i rs=
    for i in $(seq "$runs"); do rs="$rs $(ratio "$(nth "${vals[$1]}" "$i")" "$(nth "${vals[$2]}" "$i")")"; done
    median "$rs"
}

# eager_table SIZES: the --eager-sweep table, a row per message size of SIZES (keys
# pp_eager_SIZE, pp_rndv_SIZE, bw_eager_SIZE, bw_rndv_SIZE).
eager_table() {
    local sz pe pr be br
    echo "eager against rendezvous, veth pair, MTU $mtu, medians of $runs runs ($(date -u +%Y-%m-%d), $(nproc) cores)"
    echo
    echo "| message | half RTT eager (us) | rendezvous (us) | eager/rndv | stream eager (MB/s) | rendezvous (MB/s) | eager/rndv |"
    echo "|---:|---:|---:|---:|---:|---:|---:|"
    for sz in $1; do
        pe=$(median "${vals[pp_eager_$sz]}") pr=$(median "${vals[pp_rndv_$sz]}")
        be=$(median "${vals[bw_eager_$sz]}") br=$(median "${vals[bw_rndv_$sz]}")
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$sz" "$pe" "$pr" "$(ratio "$pe" "$pr")" \
            "$be" "$br" "$(ratio "$be" "$br")"
    done
}

# costs_table: the --costs table (keys pp_C and bw_C for C crc, mac, none, helper),
# each against CRC run by run.
costs_table() {
    local c
    echo "the price of authentication and of the liveness helper, veth pair, MTU $mtu, medians of $runs runs and of the ratios taken run by run ($(date -u +%Y-%m-%d), $(nproc) cores)"
    echo
    echo "| configuration | 8 B half RTT, spin (us) | vs CRC | 1 MiB stream (MB/s) | vs CRC |"
    echo "|---|---:|---:|---:|---:|"
    for c in crc mac none helper; do
        printf '| %s | %s | %s | %s | %s |\n' "$(case $c in crc) echo "PME_AUTH=crc" ;; mac) echo "PME_AUTH=mac" ;; none) echo "PME_AUTH=none" ;; helper) echo "PME_AUTH=mac, PME_HELPER=1" ;; esac)" \
            "$(median "${vals[pp_$c]}")" "$(paired_ratio "pp_$c" pp_crc)" \
            "$(median "${vals[bw_$c]}")" "$(paired_ratio "bw_$c" bw_crc)"
    done
}

# against_table: the --against table (keys FIGURE_this and FIGURE_other for FIGURE
# pp_spin, pp_auto, bw64k, bw1m, rate8), this/other run by run.
against_table() {
    local k
    echo "this tree's pme_perf against $other, veth pair, MTU $mtu, PME_AUTH=$auth, medians of $runs runs and of the ratios taken run by run ($(date -u +%Y-%m-%d), $(nproc) cores)"
    echo
    echo "| figure | this | other | this/other |"
    echo "|---|---:|---:|---:|"
    for k in "pp_spin:8 B half RTT, spin (us)" "pp_auto:8 B half RTT, auto (us)" \
             "bw64k:64 KiB stream (MB/s)" "bw1m:1 MiB stream (MB/s)" \
             "rate8:8 B message rate, windows of 64 (million/s)"; do
        printf '| %s | %s | %s | %s |\n' "${k#*:}" "$(median "${vals[${k%%:*}_this]}")" \
            "$(median "${vals[${k%%:*}_other]}")" "$(paired_ratio "${k%%:*}_this" "${k%%:*}_other")"
    done
}

# verdict RATIO OP TARGET: "met" or "MISSED" ("-", no ratio, misses).
verdict() { awk -v r="$1" -v op="$2" -v t="$3" 'BEGIN{ok = r == "-" ? 0 : (op == "<=") ? r <= t : (op == "<") ? r < t : r >= t; print ok ? "met" : "MISSED"}'; }
# wire_row FIGURE PME_KEY REF_KEY REFNAME OP TARGET: a row of wire_table
wire_row() {
    local r
    r=$(paired_ratio "$2" "$3")
    [ "$r" = - ] || r=$(printf '%.2f' "$r")
    printf '| %s | %s | %s (%s) | %s | %s %s | %s |\n' "$1" "$(median "${vals[$2]:-}")" \
        "$(median "${vals[$3]:-}")" "$4" "$r" "$5" "$6" "$(verdict "$r" "$5" "$6")"
}

# wire_table: the default table, PME against the wire, with the pme_core issue's
# targets (keys pme_pp_M, raw_pp_M, tcp_pp_M for M spin and block; pme_bw, raw_bw,
# pme_bw_loss).
wire_table() {
    echo "pme_core against the wire, veth pair between two namespaces, MTU $mtu, $runs runs ($(date -u +%Y-%m-%d), $(nproc) cores, kernel $(uname -r)): medians of the figures, and the median of the ratios taken run by run"
    echo
    echo "| figure | PME | reference | PME/reference | target | |"
    echo "|---|---|---|---|---|---|"
    wire_row "8 B half round trip, spin (us)" pme_pp_spin raw_pp_spin "raw frames, spin" "<=" 1.3
    wire_row "8 B half round trip, spin (us)" pme_pp_spin tcp_pp_spin "TCP, spin" "<" 1.0
    wire_row "8 B half round trip, block (us)" pme_pp_block raw_pp_block "raw frames, block" "<=" 1.3
    wire_row "8 B half round trip, block (us)" pme_pp_block tcp_pp_block "TCP, block" "<" 1.0
    wire_row "1 MiB stream (MB/s)" pme_bw raw_bw "raw frames of $((mtu - 14)) B" ">=" 0.9
    wire_row "1 MiB stream, $loss% loss (MB/s)" pme_bw_loss pme_bw "PME without loss" ">=" 0.8
}
