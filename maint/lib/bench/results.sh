# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# results.sh - from the measurements to the numbers the report shows: summary.csv
# (medians per scenario, benchmark and size, A against B: maint/lib/summarize.awk), the
# medians of the floor, single values of the summary, and the count of runs and results
# that went wrong.
#
# Owns: summary.csv; summarize, floor_med, sval, has_scenario, best_pp, count_outcomes
# (nruns, failures, hangs, nres, fails).
# Expects: out (holding raw.csv, runs.csv, floor.csv), here (maint/lib), sc_names,
# baseline_only, median (maint/lib/stats.sh). Nothing here runs a benchmark or needs root.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

summarize() { awk -F, -f "$here/median.awk" -f "$here/summarize.awk" "$out/raw.csv" >"$out/summary.csv"; }

# floor_med SCENARIO TEST: median of a floor measurement (stats.sh's); nothing when
# there is none
floor_med() {
    local m
    m=$(median "$(awk -F, -v s="$1" -v t="$2" '$1 == s && $3 == t {print $4}' "$out/floor.csv")")
    [ "$m" = - ] || echo "$m"
}

# sval SCENARIO BENCH SIZE COLUMN: a column (by name) of summary.csv
sval() {
    awk -F, -v s="$1" -v b="$2" -v z="$3" -v c="$4" 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
        $1 == s && $2 == b && $3 == z {print $(col[c]); exit}' "$out/summary.csv"
}

has_scenario() { [[ " ${sc_names[*]} " == *" $1 "* ]]; }

# best_pp SCENARIO: "VALUE MODE" of the faster raw-frame ping-pong (spin or block)
best_pp() {
    local s b
    s=$(floor_med "$1" raw-pp-spin || true)
    b=$(floor_med "$1" raw-pp-block || true)
    awk -v s="$s" -v b="$b" 'BEGIN {if (s == "" && b == "") exit; if (b == "" || (s != "" && s + 0 <= b + 0)) print s, "spin"; else print b, "block"}'
}

# count_outcomes: nruns (mpiexec runs), failures (runs that failed, timed out or, on
# PME's side, hung), hangs (baseline runs that hung in MPI_Finalize after printing every
# result: the baseline's known UCX bug, not a failure), nres (results) and fails
# (results that did not verify).
# shellcheck disable=SC2034 # read by the report
count_outcomes() {
    local pme_side=A
    [ "$baseline_only" = 1 ] && pme_side=none
    failures=$(awk -F, -v p="$pme_side" 'NR > 1 && $5 != "ok" && ($5 != "finalize-hang" || $2 == p)' "$out/runs.csv" | wc -l)
    hangs=$(awk -F, -v p="$pme_side" 'NR > 1 && $5 == "finalize-hang" && $2 != p' "$out/runs.csv" | wc -l)
    nruns=$(($(wc -l <"$out/runs.csv") - 1))
    fails=$(awk -F, 'NR > 1 && $15 != "ok"' "$out/raw.csv" | wc -l)
    nres=$(($(wc -l <"$out/raw.csv") - 1))
}
