#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/rma-bench without measuring (no root, no cluster, no MPICH): its command line
# (--help, an unknown option, an unknown side, nothing to run: exit 2 with the reason,
# before it looks for root or MPICH, so as root too), and its table and summary.csv
# (maint/lib/tables/rma-bench.awk) on made-up results: per benchmark and size the
# median of each side in the order --sides gives them (a result that failed its check
# still counts, as it always did: the run's exit status says it failed), and PME's
# advantage, their time / PME's for us and s, PME's rate / theirs for MB/s, 0 where a
# side measured nothing. Every expected number is worked out by hand.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=1
. "$(dirname "$0")/lib.sh"

check_cli rma-bench "usage: maint/rma-bench [--mtu M] [--reps R]"
# usage_error WHY ARGS...: maint/rma-bench ARGS exits 2 saying WHY.
usage_error() {
    local why=$1 rc=0 out
    shift
    out=$("$top/maint/rma-bench" "$@" 2>&1) || rc=$?
    [ "$rc" = 2 ] && grep -qF -- "$why" <<<"$out" || fail "maint/rma-bench $*: exit $rc, want 2 and '$why': $out"
}
usage_error "unknown side xyz (pme, am, tcp)" --sides pme,xyz
usage_error "nothing to run (--bench none and no --contig)" --bench none
usage_error "unknown option --reps=3" --reps=3
say "ok: rma-bench's usage errors exit 2 with the reason"

cat >"$tmp/raw.csv" <<'R'
pme,1,put,8,4.2,us,ok
am,1,put,8,6,us,ok
tcp,1,put,8,20,us,ok
pme,2,put,8,3.8,us,ok
am,2,put,8,7.2,us,ok
tcp,2,put,8,2.2e1,us,FAIL
pme,3,put,8,4,us,ok
pme,1,putbw,1048576,900,MB/s,ok
tcp,1,putbw,1048576,300,MB/s,ok
am,1,rma_contig,10,0.5,s,ok
R
table() { # SIDES: the table; summary.csv in $tmp/summary.csv
    awk -F, -v sides="$1" -v summary="$tmp/summary.csv" -f "$top/maint/lib/median.awk" \
        -f "$top/maint/lib/tables/rma-bench.awk" "$tmp/raw.csv"
}
# put: PME 4 of 3.8 4 4.2, am (6 + 7.2) / 2, tcp (20 + 22) / 2; 6.6 / 4 and 21 / 4.
# putbw: no am; 900 / 300. rma_contig: no PME, so no advantage.
same "$(table pme,am,tcp)" \
"bench           size         pme          am         tcp  unit    pme/am   pme/tcp
put                8        4.00        6.60       21.00    us      1.65      5.25
putbw        1048576      900.00        0.00      300.00  MB/s      0.00      3.00
rma_contig        10        0.00        0.50        0.00     s      0.00      0.00" "rma-bench's table"
same "$(cat "$tmp/summary.csv")" \
"bench,size,pme,am,tcp,unit,pme_over_am,pme_over_tcp
put,8,4.000,6.600,21.000,us,1.650,5.250
putbw,1048576,900.000,0.000,300.000,MB/s,0.000,3.000
rma_contig,10,0.000,0.500,0.000,s,0.000,0.000" "rma-bench's summary.csv"
same "$(table tcp,pme)" \
"bench           size         tcp         pme  unit   pme/tcp
put                8       21.00        4.00    us      5.25
putbw        1048576      300.00      900.00  MB/s      3.00
rma_contig        10        0.00        0.00     s      0.00" "rma-bench's table with --sides tcp,pme"
say "ok: rma-bench's table and summary.csv: medians per side, PME's advantage"
