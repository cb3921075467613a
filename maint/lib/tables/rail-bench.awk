# SPDX-License-Identifier: BSD-3-Clause
# rail-bench.awk - maint/rail-bench's table and the data of its plot, apart from the
# measuring so that a test can feed it made-up results:
#
#   awk -f maint/lib/median.awk -f maint/lib/tables/rail-bench.awk RESULTS
#   awk -v plot=1 -f maint/lib/median.awk -f maint/lib/tables/rail-bench.awk RESULTS
#
# RESULTS: one line per measurement, "ROUND:WHICH TEST SIZE VALUE" (WHICH one or two,
# TEST stream, pingpong or mpi_bw). The table gives per test and size the median of one
# NIC, of two rails, and of the ratios two / one taken round by round. With plot=1,
# "SIZE ONE TWO" for the stream instead, one line per size (unsorted: awk's order).
{
    split($1, rw, ":"); key = $2 " " $3
    val[rw[2] " " key] = val[rw[2] " " key] " " $4
    per[rw[1] " " rw[2] " " key] = $4; keys[key] = 1; rounds[rw[1]] = 1
    if ($2 == "stream") { sval[rw[2] " " $3] = sval[rw[2] " " $3] " " $4; sz[$3] = 1 }
}
END {
    if (plot) {
        # An empty median is written 0, as before the median was shared.
        for (z in sz) print z, or0(median(sval["one " z])), or0(median(sval["two " z]))
        exit
    }
    printf "%-26s %12s %12s %14s\n", "", "one NIC", "two rails", "ratio (median)"
    for (k in keys) {
        ratios = ""
        for (r in rounds) if ((r " one " k) in per && (r " two " k) in per && per[r " one " k] > 0)
            ratios = ratios " " per[r " two " k] / per[r " one " k]
        split(k, f, " ")
        unit = f[1] == "pingpong" ? "us" : "MB/s"
        printf "%-26s %12.1f %12.1f %14.2f\n", f[1] " " f[2] " B (" unit ")", median(val["one " k]),
            median(val["two " k]), median(ratios)
    }
    print "(pme_perf stream and pingpong; mpi_bw: mpibench bw, 64 messages in flight)"
}
function or0(m) { return m == "" ? 0 : m }
