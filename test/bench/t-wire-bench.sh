#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/wire-bench without measuring (no root, no namespaces): its command line (--help,
# an unknown option, a bad --auth: exit 2 before anything else, as root too); its four
# tables (maint/lib/tables/wire-bench.sh) on made-up measurements: medians over the runs
# with failed runs ("-") left out, ratios taken run by run and their median, the
# targets met and missed, "-" where nothing is left; and maint/lib/wire.sh's
# rawwire_tool: the build's maint/lib/rawwire (Makefile.am's) when $builddir is
# configured (it prints its usage and exits 2 without arguments), and an error saying
# how to build in a directory that is not. Every expected number is worked out by hand.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=3
. "$(dirname "$0")/lib.sh"

check_cli wire-bench "maint/wire-bench --costs [--mtu M] [--runs R]"
rc=0
out=$("$top/maint/wire-bench" --auth gmac 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -qF "wire-bench: --auth gmac: crc, mac or none" <<<"$out" ||
    fail "maint/wire-bench --auth gmac: exit $rc, want 2 and the reason: $out"
say "ok: wire-bench refuses an unknown --auth before anything else"

# shellcheck source=maint/lib/stats.sh
. "$top/maint/lib/stats.sh"
# shellcheck source=maint/lib/tables/wire-bench.sh
. "$top/maint/lib/tables/wire-bench.sh"
# rows: the table's rows, without its first line (the date, the cores, the kernel)
rows() { grep '^|'; }
# shellcheck disable=SC2034 # read by the tables
declare -A vals
# shellcheck disable=SC2034
runs=3 mtu=9000 loss=0.1 other=/elsewhere/pme_perf auth=mac

vals[pme_pp_spin]=" 3.0 2.8 3.2" vals[raw_pp_spin]=" 2.5 2.4 2.6" vals[tcp_pp_spin]=" 10 - 16"
vals[pme_pp_block]=" 20 24 21" vals[raw_pp_block]=" 10 16 -" vals[tcp_pp_block]=" 30 31 29"
vals[pme_bw]=" 2000 2100 1.9e3" vals[raw_bw]=" 2200 2300 2100" vals[pme_bw_loss]=" 1800 - -"
# spin: 3.0 / 2.5, 2.8 / 2.4, 3.2 / 2.6 = 1.20 1.17 1.23; against TCP 0.30 (3.0 / 10),
# - , 0.20: 0.25; block: 21 of 20 21 24 against (10 + 16) / 2, ratios 2.00 1.50 -:
# 1.75, missed; against TCP 30: 0.67 0.77 0.72; stream 2000 against 2200: 0.91 0.91
# 0.90; with loss 1800 / 2000 alone.
same "$(wire_table | rows)" \
"| figure | PME | reference | PME/reference | target | |
|---|---|---|---|---|---|
| 8 B half round trip, spin (us) | 3.0 | 2.5 (raw frames, spin) | 1.20 | <= 1.3 | met |
| 8 B half round trip, spin (us) | 3.0 | 13 (TCP, spin) | 0.25 | < 1.0 | met |
| 8 B half round trip, block (us) | 21 | 13 (raw frames, block) | 1.75 | <= 1.3 | MISSED |
| 8 B half round trip, block (us) | 21 | 30 (TCP, block) | 0.72 | < 1.0 | met |
| 1 MiB stream (MB/s) | 2000 | 2200 (raw frames of 8986 B) | 0.91 | >= 0.9 | met |
| 1 MiB stream, 0.1% loss (MB/s) | 1800 | 2000 (PME without loss) | 0.90 | >= 0.8 | met |" "wire-bench's table"
vals[pme_bw_loss]=" - - -"
same "$(wire_table | tail -n 1)" "| 1 MiB stream, 0.1% loss (MB/s) | - | 2000 (PME without loss) | - | >= 0.8 | MISSED |" \
    "wire-bench's table when every run failed"
say "ok: wire-bench's table: medians, ratios run by run, targets met and missed"

vals[pp_eager_2k]=" 10 12 11" vals[pp_rndv_2k]=" 20 22 -" vals[bw_eager_2k]=" 500 - -" vals[bw_rndv_2k]=" - - -"
vals[pp_eager_4k]=" 1e1 3e1 2e1" vals[pp_rndv_4k]=" 40 40 40" vals[bw_eager_4k]=" 800 900" vals[bw_rndv_4k]=" 1000 1000 1000"
# the ratio of the medians: 11 / 21; 2e1 (as written) / 40; 850 / 1000
same "$(eager_table "2k 4k" | rows)" \
"| message | half RTT eager (us) | rendezvous (us) | eager/rndv | stream eager (MB/s) | rendezvous (MB/s) | eager/rndv |
|---:|---:|---:|---:|---:|---:|---:|
| 2k | 11 | 21 | 0.52 | 500 | - | - |
| 4k | 2e1 | 40 | 0.50 | 850 | 1000 | 0.85 |" "wire-bench --eager-sweep's table"
say "ok: wire-bench --eager-sweep's table"

vals[pp_crc]=" 3 3 3" vals[pp_mac]=" 3.3 3.6 3.9" vals[pp_none]=" 2.7 3 -" vals[pp_helper]=" 6 - 3"
vals[bw_crc]=" 2000 1000 2000" vals[bw_mac]=" 1800 900 1700" vals[bw_none]=" 2200 1100 2000" vals[bw_helper]=" - - -"
# against CRC run by run: mac 1.10 1.20 1.30, none 0.90 1.00 - (0.95), helper 2.00 -
# 1.00 (1.5, a mean, as the script always showed it); streams 0.90 0.90 0.85 and 1.10
# 1.10 1.00.
same "$(costs_table | rows)" \
"| configuration | 8 B half RTT, spin (us) | vs CRC | 1 MiB stream (MB/s) | vs CRC |
|---|---:|---:|---:|---:|
| PME_AUTH=crc | 3 | 1.00 | 2000 | 1.00 |
| PME_AUTH=mac | 3.6 | 1.20 | 1700 | 0.90 |
| PME_AUTH=none | 2.85 | 0.95 | 2000 | 1.10 |
| PME_AUTH=mac, PME_HELPER=1 | 4.5 | 1.5 | - | - |" "wire-bench --costs' table"
say "ok: wire-bench --costs' table"

for f in pp_spin pp_auto bw64k bw1m rate8; do vals[${f}_this]=" 1 2 3" vals[${f}_other]=" 2 2 2"; done
vals[rate8_other]=" - - -" vals[bw1m_this]=" 900 1e3 1100" vals[bw1m_other]=" 1000 1000 1000"
same "$(against_table | rows)" \
"| figure | this | other | this/other |
|---|---:|---:|---:|
| 8 B half RTT, spin (us) | 2 | 2 | 1.00 |
| 8 B half RTT, auto (us) | 2 | 2 | 1.00 |
| 64 KiB stream (MB/s) | 2 | 2 | 1.00 |
| 1 MiB stream (MB/s) | 1e3 | 1000 | 1.00 |
| 8 B message rate, windows of 64 (million/s) | 2 | - | - |" "wire-bench --against's table"
same "$(against_table | head -n 1 | grep -o 'against /elsewhere/pme_perf, veth pair, MTU 9000, PME_AUTH=mac, medians of 3 runs')" \
    "against /elsewhere/pme_perf, veth pair, MTU 9000, PME_AUTH=mac, medians of 3 runs" "wire-bench --against's title"
say "ok: wire-bench --against's table"

# shellcheck source=maint/lib/wire.sh
. "$top/maint/lib/wire.sh"
mkdir -p "$tmp/unbuilt"
rc=0
out=$(rawwire_tool "$tmp/unbuilt" 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -qF "no $tmp/unbuilt/maint/lib/rawwire: build PME in $tmp/unbuilt first" <<<"$out" ||
    fail "rawwire_tool on an unconfigured directory: exit $rc, want 1 and how to build: $out"
say "ok: rawwire_tool says how to build when the build directory is not configured"
if [ -n "${builddir:-}" ] && [ -f "$builddir/Makefile" ]; then
    # Under make check, the make that rawwire_tool runs is not the driver's make's child.
    unset MAKEFLAGS MFLAGS MAKELEVEL
    rawwire_tool "$builddir" || fail "rawwire_tool $builddir failed"
    same "$RAWWIRE" "$builddir/maint/lib/rawwire" "rawwire_tool's program"
    rc=0
    out=$("$RAWWIRE" 2>&1) || rc=$?
    [ "$rc" = 2 ] && grep -qF "usage: rawwire raw-pp IFACE PEER_MAC" <<<"$out" ||
        fail "$RAWWIRE without arguments: exit $rc, want 2 and its usage: $out"
    say "ok: rawwire_tool gives the build's maint/lib/rawwire, which runs"
else
    say "(no configured \$builddir: the build's rawwire not checked)"
fi
