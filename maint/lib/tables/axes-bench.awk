# SPDX-License-Identifier: BSD-3-Clause
# axes-bench.awk - maint/axes-bench's table, apart from the measuring so that a test
# can feed it made-up results:
#
#   awk -f maint/lib/median.awk -f maint/lib/tables/axes-bench.awk RESULTS
#
# RESULTS: one line per measurement, "PATH BENCH BYTES US" (PATH mpich or axes). Prints
# per benchmark and size, in the order they first appear, the median of each path and
# the ratio axes / MPICH (0 when MPICH's median is 0 or missing).
{
    vals[$1 " " $2 " " $3] = vals[$1 " " $2 " " $3] " " $4
    if (!(($2 " " $3) in seen)) { seen[$2 " " $3] = 1; order[++n] = $2 " " $3 }
}
END {
    printf "%-10s %10s %12s %12s %7s\n", "bench", "bytes", "MPICH us", "axes us", "ratio"
    for (k = 1; k <= n; k++) {
        split(order[k], f, " ")
        m = median(vals["mpich " order[k]]); a = median(vals["axes " order[k]])
        printf "%-10s %10s %12.1f %12.1f %7.2f\n", f[1], f[2], m, a, m ? a / m : 0
    }
    print "(ratio: axes / MPICH; below 1 the axes are faster)"
}
