#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/axes-bench without measuring (no root, no cluster, no MPICH): its command line
# (--help, an unknown option, a topology without axes: exit 2 before anything else, as
# root too), and its table (maint/lib/tables/axes-bench.awk) on
# made-up results: per benchmark and size, in the order first seen, the median of each
# path (odd and even counts, scientific notation, a negative value) and axes / MPICH,
# 0 where MPICH measured nothing. Every expected number is worked out by hand.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=1
. "$(dirname "$0")/lib.sh"

check_cli axes-bench "maint/axes-bench [--rounds R] [--topology T]"
rc=0
out=$("$top/maint/axes-bench" --topology switch 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -qF "axes-bench: --topology must be a ring or torus" <<<"$out" ||
    fail "maint/axes-bench --topology switch: exit $rc, want 2 and the reason: $out"
say "ok: axes-bench refuses a topology without axes before anything else"

cat >"$tmp/results" <<'R'
axes bcast 0 5.5
mpich bcast 0 11
axes bcast 0 4.5
mpich bcast 0 1.2e1
axes reduce 4 -3
mpich reduce 4 10
mpich reduce 4 30
mpich reduce 4 20
axes reduce 4 7
axes allreduce 16 3
R
# bcast: MPICH (11 + 12) / 2, axes (5.5 + 4.5) / 2, 5 / 11.5 = 0.435; reduce: MPICH 20
# of 10 20 30, axes (-3 + 7) / 2; allreduce: no MPICH.
same "$(awk -f "$top/maint/lib/median.awk" -f "$top/maint/lib/tables/axes-bench.awk" "$tmp/results")" \
"bench           bytes     MPICH us      axes us   ratio
bcast               0         11.5          5.0    0.43
reduce              4         20.0          2.0    0.10
allreduce          16          0.0          3.0    0.00
(ratio: axes / MPICH; below 1 the axes are faster)" "axes-bench's table"
say "ok: axes-bench's table: medians per path, axes / MPICH, 0 without MPICH's"
