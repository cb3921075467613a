# SPDX-License-Identifier: BSD-3-Clause
# rma-bench.awk - maint/rma-bench's table and summary.csv, apart from the measuring so
# that a test can feed it made-up results:
#
#   awk -F, -v sides=pme,am,tcp -v summary=FILE -f maint/lib/median.awk \
#       -f maint/lib/tables/rma-bench.awk RAW.CSV
#
# RAW.CSV: "SIDE,REP,BENCH,SIZE,VALUE,UNIT,ok|FAIL" per measurement. Prints per
# benchmark and size (in the order they first appear) the median of each side and PME's
# advantage over each other side: their time / PME's for us and s, PME's rate / theirs
# for MB/s (above 1, PME is better; 0 when unknown). summary.csv gets the same numbers.
# A side with no measurement shows 0.
{
    key = $3 "," $4; vals[key, $1] = vals[key, $1] " " $5; unit[key] = $6
    if (!(key in seen)) { seen[key] = 1; order[++k] = key }
}
function side_median(key, side,    m) { m = median(vals[key, side]); return m == "" ? 0 : m }
# PME over side o: time ratio for us and s, rate ratio otherwise; 0 when unknown.
function adv(p, o, u) { return u == "MB/s" ? (o > 0 ? p / o : 0) : (p > 0 ? o / p : 0) }
END {
    ns = split(sides, s, ",")
    printf "%-10s %9s", "bench", "size"
    hdr = "bench,size"
    for (j = 1; j <= ns; j++) { printf " %11s", s[j]; hdr = hdr "," s[j] }
    printf " %5s", "unit"; hdr = hdr ",unit"
    for (j = 1; j <= ns; j++) if (s[j] != "pme") { printf " %9s", "pme/" s[j]; hdr = hdr ",pme_over_" s[j] }
    printf "\n"
    print hdr > summary
    for (i = 1; i <= k; i++) {
        key = order[i]; split(key, f, ",")
        p = side_median(key, "pme")
        printf "%-10s %9s", f[1], f[2]; line = key
        for (j = 1; j <= ns; j++) { m = side_median(key, s[j]); printf " %11.2f", m; line = line sprintf(",%.3f", m) }
        printf " %5s", unit[key]; line = line "," unit[key]
        for (j = 1; j <= ns; j++) if (s[j] != "pme") {
            a = adv(p, side_median(key, s[j]), unit[key]); printf " %9.2f", a; line = line sprintf(",%.3f", a)
        }
        printf "\n"; print line > summary
    }
}
