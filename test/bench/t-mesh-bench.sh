#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/mesh-bench without measuring (no root, no cluster, no MPICH): its command line
# (--help, an unknown option), and its two tables (maint/lib/tables/mesh-bench.awk) on
# made-up results: the hops table (per figure, the median at 1, 2 and 3 hops and its
# ratio to 1 hop; the medians file for the plot, a median keeping its spelling and a
# missing one 0) and the halo table (torus against switch per local edge, the medians
# and unit files); a table of another name is refused. Every expected number is worked
# out by hand.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=1
. "$(dirname "$0")/lib.sh"

check_cli mesh-bench "maint/mesh-bench [--rounds R] [--mtu M] [--halo]"
tables=(-f "$top/maint/lib/median.awk" -f "$top/maint/lib/tables/mesh-bench.awk")

cat >"$tmp/results" <<'R'
1 pingpong 8 4.0
3 pingpong 8 5.5
7 pingpong 8 7
1 pingpong 8 4.4
3 pingpong 8 5.1
1 pingpong 1048576 400
3 pingpong 1048576 4.4e2
7 pingpong 1048576 500
1 stream 1048576 2000
3 stream 1048576 1800
1 stream 1048576 2100
R
# 8 B: 4.2, 5.3 (1.262), 7 (1.667); 1 MiB: 400, 440 (1.10), 500 (1.25); stream: 2050,
# 1800 (0.878), none at 3 hops.
same "$(awk -v table=hops -v medians="$tmp/hops" "${tables[@]}" "$tmp/results")" \
"                                  1 hop       2 hops       3 hops
pingpong 8 B (us)              4.2 1.00     5.3 1.26     7.0 1.67
pingpong 1048576 B (us)      400.0 1.00   440.0 1.10   500.0 1.25
stream 1048576 B (MB/s)     2050.0 1.00  1800.0 0.88     0.0 0.00
(each cell: the median, and its ratio to the 1-hop median)" "mesh-bench's hops table"
same "$(cat "$tmp/hops")" "1 4.2 400 2050
2 5.3 4.4e2 1800
3 7 500 0" "mesh-bench's hop medians (for the plot)"
say "ok: mesh-bench's hops table and its medians file"

cat >"$tmp/halo" <<'R'
torus 16 100 us
switch 16 120 us
torus 16 90 us
switch 32 200 us
torus 32 250 us
torus 64 -1e3 us
R
# 16: torus (100 + 90) / 2 against 120 (0.792); 32: 250 against 200; 64: no switch.
same "$(awk -v table=halo -v medians="$tmp/halo-medians" -v unitfile="$tmp/unit" "${tables[@]}" "$tmp/halo")" \
"local edge          torus       switch    ratio
16                   95.0        120.0     0.79
32                  250.0        200.0     1.25
64                -1000.0          0.0     0.00
(us; ratio: torus / switch)" "mesh-bench's halo table"
same "$(cat "$tmp/halo-medians")" "16 95 120
32 250 200
64 -1e3 0" "mesh-bench's halo medians (for the plot)"
same "$(cat "$tmp/unit")" "us" "mesh-bench's halo unit file"
say "ok: mesh-bench's halo table and its files"

rc=0
awk -v table=nonesuch "${tables[@]}" "$tmp/halo" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q 'table=hops or table=halo' "$tmp/err" || fail "an unknown table: exit $rc, $(cat "$tmp/err")"
say "ok: mesh-bench.awk refuses a table it does not know"
