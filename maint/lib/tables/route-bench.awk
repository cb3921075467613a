# SPDX-License-Identifier: BSD-3-Clause
# route-bench.awk - maint/route-bench's table, apart from the measuring so that a test
# can feed it made-up probes:
#
#   awk -f maint/lib/tables/route-bench.awk PROBES
#
# PROBES: test/vcluster/routeprobe's lines ("dst=D hops=H count=N min_us=X
# median_us=Y"), the 1-hop one first. Prints per line the hops, the node, the median
# and the minimum half round trip as routeprobe wrote them, and the median's ratio to
# the first line's. routeprobe takes its own median: no median.awk here.
BEGIN { printf "%-5s %-5s %12s %10s %14s\n", "hops", "node", "median_us", "min_us", "ratio_to_1hop" }
{
    delete f
    for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) f[kv[1]] = kv[2]
    if (base == "") base = f["median_us"]
    printf "%-5s %-5s %12s %10s %14s\n", f["hops"], f["dst"], f["median_us"], f["min_us"],
        base + 0 ? sprintf("%.2f", f["median_us"] / base) : "-"
}
