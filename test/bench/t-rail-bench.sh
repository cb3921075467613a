#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/rail-bench without measuring (no root, no cluster): its command line (--help, an
# unknown option), and its table and plot data (maint/lib/tables/rail-bench.awk) on
# made-up results: per test and size the median of one NIC and of two rails over the
# rounds, and the median of the ratios two / one taken round by round (rounds missing
# either side, or with one NIC at 0, left out); the stream's medians by size for the
# plot, a median keeping its spelling and a missing one 0. Every expected number is
# worked out by hand.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=1
. "$(dirname "$0")/lib.sh"

check_cli rail-bench "maint/rail-bench [--rounds R] [--rate RATE]"

cat >"$tmp/results" <<'R'
0:one stream 1048576 100
0:two stream 1048576 190
1:two stream 1048576 210
1:one stream 1048576 110
2:one stream 1048576 1.05e2
2:two stream 1048576 200
0:one pingpong 8 5
0:two pingpong 8 6
1:one pingpong 8 4
0:one stream 65536 50
0:one mpi_bw 1m 0
0:two mpi_bw 1m 90
R
tables=(-f "$top/maint/lib/median.awk" -f "$top/maint/lib/tables/rail-bench.awk")
out=$(awk "${tables[@]}" "$tmp/results")
# The rows come in awk's order of its keys: compared sorted.
same "$(head -n 1 <<<"$out")" "                                one NIC    two rails ratio (median)" "rail-bench's header"
same "$(tail -n 1 <<<"$out")" "(pme_perf stream and pingpong; mpi_bw: mpibench bw, 64 messages in flight)" "rail-bench's footnote"
# stream 1 MiB: one NIC 105 of 100 110 105, two rails 200 of 190 200 210, ratios 1.9,
# 1.909, 1.905: 1.905; ping-pong: one (5 + 4) / 2, two 6, one round with both: 6 / 5;
# mpi_bw: one NIC at 0, so no ratio; stream 64 KiB: no two rails.
same "$(sed '1d;$d' <<<"$out" | sort)" \
"mpi_bw 1m B (MB/s)                  0.0         90.0           0.00
pingpong 8 B (us)                   4.5          6.0           1.20
stream 1048576 B (MB/s)           105.0        200.0           1.90
stream 65536 B (MB/s)              50.0          0.0           0.00" "rail-bench's table"
say "ok: rail-bench's table: medians of each side and of the ratios round by round"

same "$(awk -v plot=1 "${tables[@]}" "$tmp/results" | sort -n)" \
"65536 50 0
1048576 1.05e2 200" "rail-bench's plot data"
say "ok: rail-bench's plot data: the stream's medians by size, a missing one 0"
