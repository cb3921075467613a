# SPDX-License-Identifier: BSD-3-Clause
# mesh-bench.awk - maint/mesh-bench's two tables, apart from the measuring so that a
# test can feed them made-up results:
#
#   awk -v table=hops -v medians=FILE -f maint/lib/median.awk \
#       -f maint/lib/tables/mesh-bench.awk RESULTS
#   awk -v table=halo -v medians=FILE -v unitfile=FILE -f maint/lib/median.awk \
#       -f maint/lib/tables/mesh-bench.awk HALO
#
# hops: RESULTS has "DST TEST SIZE VALUE" per measurement (DST 1, 3 or 7: 1, 2 and 3
# hops from node 0); prints per figure (8-byte and 1 MiB half round trip, 1 MiB stream)
# the median at each distance and its ratio to the 1-hop median, and writes
# "HOPS RTT8 RTT1M STREAM" per distance into the file medians (for the plot).
# halo: HALO has "CLUSTER EDGE VALUE UNIT" (CLUSTER torus or switch, EDGE 16, 32, 64);
# prints the median step time on each and the ratio torus / switch, writes
# "EDGE TORUS SWITCH" into medians and the unit into unitfile.
# A median with no measurement shows as 0, in the tables and in the files.
table == "hops" { vals[$1 " " $2 " " $3] = vals[$1 " " $2 " " $3] " " $4 }
table == "halo" { vals[$1 " " $2] = vals[$1 " " $2] " " $3; unit = $4; sizes[$2] = 1 }
END {
    if (table == "hops")
        hops_table()
    else if (table == "halo")
        halo_table()
    else {
        print "mesh-bench.awk: table=hops or table=halo" > "/dev/stderr"
        exit 2
    }
}
function or0(m) { return m == "" ? 0 : m }
function hops_table(    hops, what, w, f, base, line, d, m, cell, h) {
    hops[1] = 1; hops[3] = 2; hops[7] = 3
    split("pingpong 8 us|pingpong 1048576 us|stream 1048576 MB/s", what, "|")
    printf "%-26s %12s %12s %12s\n", "", "1 hop", "2 hops", "3 hops"
    for (w = 1; w <= 3; w++) {
        split(what[w], f, " ")
        base = or0(median(vals["1 " f[1] " " f[2]]))
        line = sprintf("%-26s", f[1] " " f[2] " B (" f[3] ")")
        for (d = 1; d <= 7; d += (d == 1 ? 2 : 4)) {
            m = or0(median(vals[d " " f[1] " " f[2]]))
            line = line sprintf(" %7.1f %4.2f", m, base ? m / base : 0)
            cell[hops[d], w] = m
        }
        print line
    }
    print "(each cell: the median, and its ratio to the 1-hop median)"
    for (h = 1; h <= 3; h++)
        print h, cell[h, 1], cell[h, 2], cell[h, 3] >medians
}
function halo_table(    s, t, w) {
    printf "%-12s %12s %12s %8s\n", "local edge", "torus", "switch", "ratio"
    for (s = 16; s <= 64; s *= 2) {
        t = or0(median(vals["torus " s])); w = or0(median(vals["switch " s]))
        printf "%-12s %12.1f %12.1f %8.2f\n", s, t, w, w ? t / w : 0
        print s, t, w >medians
    }
    print "(" unit "; ratio: torus / switch)"
    print unit >unitfile
}
