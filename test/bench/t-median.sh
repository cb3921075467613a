#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The one median of maint/ (maint/lib/median.awk, and its bash wrapper median in
# maint/lib/stats.sh) on made-up lists: odd and even counts, none, "-" entries (failed
# measurements), unsorted, negative, scientific notation, equal values spelt apart;
# against the bash pipeline it replaced in wire-bench and kmod-bench (sort -g, kept here
# as the reference) on those and on 300 random lists, and against the awk function it
# replaced in the other benchmarks on the lists those could see (no "-", never empty).
# And no script of maint/ defines a median of its own again: a function named median
# anywhere in maint/ but those two files fails (the check tries itself on made-up
# files first, so that it can fail).
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=90 time=5
. "$(dirname "$0")/lib.sh"
# sort -g breaks ties by the text in the locale's order; the C locale's is the bytes'.
export LC_ALL=C
# shellcheck source=maint/lib/stats.sh
. "$top/maint/lib/stats.sh"
lib=$top/maint/lib/median.awk

# awk_median LIST: median.awk's own answer, "[]" around it so that "" shows
awk_median() {
    # shellcheck disable=SC2016 # an awk program
    L=$1 awk -f "$lib" -f <(printf '%s\n' 'BEGIN { printf "[%s]\n", median(ENVIRON["L"]) }')
}
# The bash median wire-bench and kmod-bench had, word for word.
sortg_median() { tr ' ' '\n' <<<"$1" | { grep -v -e '^$' -e '^-$' || true; } | sort -g | awk '{a[NR]=$1} END {print (NR == 0 ? "-" : NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# The awk median axes- and mesh-bench had (rail-, shmwake- and rma-bench's differed
# only in writing +0 in the comparison), on a list: empty gave 0.
old_awk_median() {
    # shellcheck disable=SC2016 # an awk program
    L=$1 awk 'function median(s,   n, i, j, t, v) {
        n = split(s, v, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    BEGIN { print median(ENVIRON["L"]) }'
}

# LIST|median.awk's answer|the bash wrapper's, worked out by hand
cases='|[]|-
 - - |[]|-
7|[7]|7
3 1 2|[2]|2
4 1 3 2|[2.5]|2.5
 10 9 100|[10]|10
1e3 5 7|[7]|7
1e3 5|[502.5]|502.5
5 1E3 7 2e0|[6]|6
-1.5 -2 -1|[-1.5]|-1.5
-3 -1|[-2]|-2
2.5 - 3.25|[2.875]|2.875
- 4 - 6 -|[5]|5
1 1.0 2|[1.0]|1.0
1.0 1 2|[1.0]|1.0
1e-3 2E-4 5e-5 0.01|[0.0006]|0.0006
0.1 0.2|[0.15]|0.15
1234567 1234568|[1.23457e+06]|1.23457e+06
.5 -.25 +1|[.5]|.5'
while IFS='|' read -r list want_awk want_bash; do
    same "$(awk_median "$list")" "$want_awk" "median.awk on '$list'"
    same "$(median "$list")" "$want_bash" "stats.sh's median on '$list'"
    same "$(median "$list")" "$(sortg_median "$list")" "stats.sh's median against the sort -g pipeline on '$list'"
done <<<"$cases"
say "ok: median.awk and stats.sh's median on made-up lists, worked out by hand"

# 300 random lists of 0 to 8 entries: integers and decimals, negative, in scientific
# notation, repeated, and "-".
awk 'BEGIN {
    srand(38)
    split("- 0 1 -1 2 10 100 1e2 1E2 2.5 -2.5 0.25 .25 3e-3 -4e1 1e3 999 7 7.0", pool, " ")
    for (l = 0; l < 300; l++) {
        n = int(rand() * 9); s = ""
        for (i = 0; i < n; i++) s = s " " pool[int(rand() * 19) + 1]
        print s
    }
}' >"$tmp/lists"
n=0
while IFS= read -r list; do
    same "$(median "$list")" "$(sortg_median "$list")" "stats.sh's median against the sort -g pipeline on '$list'"
    if [ -n "${list//[ -]/}" ] && [[ " $list " != *" - "* ]]; then
        # The old awk function returned the middle entry as written, or the mean:
        # compared by value, since it did not order equal values by their text.
        got=$(awk_median "$list") got=${got#[} got=${got%]}
        same "$(awk -v a="$got" 'BEGIN { print a + 0 }')" \
            "$(awk -v a="$(old_awk_median "$list")" 'BEGIN { print a + 0 }')" \
            "median.awk against the old awk median on '$list'"
        n=$((n + 1))
    fi
done <"$tmp/lists"
[ "$n" -gt 50 ] || fail "only $n random lists without '-': the comparison with the old awk median is too thin"
say "ok: the same medians as the sort -g pipeline on 300 random lists, and as the old awk function on the $n of them it could see"

# medians_defined DIR...: file:line of each definition of a function named median
# (bash or awk, inline awk programs included) under DIR, but the shared library's two.
medians_defined() {
    grep -rnE --exclude-dir=.git \
        -e '(^|[^[:alnum:]_])(function|func)[[:space:]]+median([^[:alnum:]_]|$)' \
        -e '(^|[^[:alnum:]_$.-])median[[:space:]]*\(\)' "$@" 2>/dev/null |
        grep -vE '^[^:]+:[0-9]+:[[:space:]]*#' |
        grep -vE '^([^:]*/)?maint/lib/(median\.awk|stats\.sh):' || true
}
mkdir -p "$tmp/fake/maint/lib"
printf 'x=1\nmedian() { sort -g; }\n' >"$tmp/fake/maint/a-bench"
printf "awk 'function median(s) { return s }' f\n" >"$tmp/fake/maint/b-bench"
printf 'function median (s,  n) {\n' >"$tmp/fake/maint/lib/c.awk"
# shellcheck disable=SC2016 # the made-up script's own text
printf '# median() is median.awk'"'"'s\ny=$(median "$v")\nfunction side_median(k) {\n' >"$tmp/fake/maint/ok-bench"
printf 'function median(list) {\n' >"$tmp/fake/maint/lib/median.awk"
printf 'median() {\n' >"$tmp/fake/maint/lib/stats.sh"
self=$(cd "$tmp/fake" && medians_defined maint | cut -d: -f1,2 | sort | tr '\n' ' ')
same "$self" "maint/a-bench:2 maint/b-bench:1 maint/lib/c.awk:1 " "the check for medians of their own, on made-up files"
found=$(cd "$top" && medians_defined maint)
[ -z "$found" ] || fail "a median of its own in maint/ (use maint/lib/median.awk, or median from maint/lib/stats.sh):
$found"
say "ok: no script of maint/ defines a median but maint/lib/median.awk and maint/lib/stats.sh"
