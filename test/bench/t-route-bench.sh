#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/route-bench without measuring (no root, no cluster): its command line (--help,
# an unknown option), and its table (maint/lib/tables/route-bench.awk) on made-up lines
# of test/vcluster/routeprobe: hops, node, median and minimum as routeprobe wrote them,
# whatever the order of its fields, and each median's ratio to the first line's ("-"
# when that one is 0). Every expected number is worked out by hand.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=1
. "$(dirname "$0")/lib.sh"

check_cli route-bench "maint/route-bench [--count N] [--name NAME]"
table() { awk -f "$top/maint/lib/tables/route-bench.awk" "$tmp/probes"; }

cat >"$tmp/probes" <<'R'
dst=1 hops=1 count=20000 min_us=3.10 median_us=4.00
dst=3 hops=2 count=20000 min_us=4.50 median_us=5.20
median_us=6.20 min_us=5.00 count=20000 hops=3 dst=7
R
# 5.20 / 4.00 = 1.3, 6.20 / 4.00 = 1.55
same "$(table)" \
"hops  node     median_us     min_us  ratio_to_1hop
1     1             4.00       3.10           1.00
2     3             5.20       4.50           1.30
3     7             6.20       5.00           1.55" "route-bench's table"
printf 'dst=1 hops=1 count=2 min_us=0.00 median_us=0.00\ndst=3 hops=2 count=2 min_us=1.00 median_us=2.00\n' >"$tmp/probes"
same "$(table)" \
"hops  node     median_us     min_us  ratio_to_1hop
1     1             0.00       0.00              -
2     3             2.00       1.00              -" "route-bench's table with a 1-hop median of 0"
say "ok: route-bench's table: routeprobe's figures and the ratios to 1 hop"
