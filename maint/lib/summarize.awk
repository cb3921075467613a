# SPDX-License-Identifier: BSD-3-Clause
# summarize.awk - medians of maint/bench's raw results, A against B.
#
#   awk -F, -f median.awk -f summarize.awk raw.csv > summary.csv
#
# raw.csv columns: scenario,impl,rep,bench,size,value,unit,iters,ranks,bytes,wall_s,
#                  usr_s,sys_s,cpu_max_s,verify        (impl is A or B)
# summary.csv columns: scenario,bench,size,unit,a,b,ratio,a_n,b_n,a_min,a_max,b_min,b_max,
#                  a_cpu_pct,b_cpu_pct,a_cpu_s_per_gb,b_cpu_s_per_gb,a_fail,b_fail
# a and b are the medians of the verified repetitions; ratio is a/b; cpu_pct is the CPU
# time (user+sys) of the ranks that did the work over their number times the wall time
# (100 = each such rank kept one core busy); cpu_s_per_gb is that CPU time per 10^9
# payload bytes (empty when the benchmark moved no payload). Rows keep the order in
# which (scenario, bench, size) first appear. median() is maint/lib/median.awk's.

function extreme(list, want_max,    n, a, i, m) {
    n = split(list, a, " ")
    if (n == 0)
        return ""
    m = a[1] + 0
    for (i = 2; i <= n; i++)
        if ((want_max && a[i] + 0 > m) || (!want_max && a[i] + 0 < m))
            m = a[i] + 0
    return m
}
function count(list,    a) { return split(list, a, " ") }
function fmt(x) { return x == "" ? "" : sprintf("%.6g", x) }

NR == 1 { next }
{
    key = $1 SUBSEP $4 SUBSEP $5
    if (!(key in unit)) {
        order[++nkeys] = key
        unit[key] = $7
    }
    k = key SUBSEP $2
    if ($15 != "ok") {
        fail[k]++
        next
    }
    val[k] = val[k] " " $6
    cpu = $12 + $13
    if ($9 > 0 && $11 > 0)
        pct[k] = pct[k] " " (cpu / ($9 * $11) * 100)
    if ($10 > 0)
        pgb[k] = pgb[k] " " (cpu / ($10 / 1e9))
}
END {
    print "scenario,bench,size,unit,a,b,ratio,a_n,b_n,a_min,a_max,b_min,b_max,a_cpu_pct,b_cpu_pct,a_cpu_s_per_gb,b_cpu_s_per_gb,a_fail,b_fail"
    for (i = 1; i <= nkeys; i++) {
        key = order[i]
        split(key, p, SUBSEP)
        ka = key SUBSEP "A"
        kb = key SUBSEP "B"
        a = median(val[ka])
        b = median(val[kb])
        ratio = (a != "" && b != "" && b + 0 != 0) ? a / b : ""
        printf "%s,%s,%s,%s,%s,%s,%s,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%d,%d\n", p[1], p[2], p[3], unit[key],
            fmt(a), fmt(b), fmt(ratio), count(val[ka]), count(val[kb]),
            fmt(extreme(val[ka], 0)), fmt(extreme(val[ka], 1)),
            fmt(extreme(val[kb], 0)), fmt(extreme(val[kb], 1)),
            fmt(median(pct[ka])), fmt(median(pct[kb])),
            fmt(median(pgb[ka])), fmt(median(pgb[kb])), fail[ka] + 0, fail[kb] + 0
    }
}
