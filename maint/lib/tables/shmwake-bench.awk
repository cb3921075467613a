# SPDX-License-Identifier: BSD-3-Clause
# shmwake-bench.awk - maint/shmwake-bench's three tables, apart from the measuring so
# that a test can feed them made-up results:
#
#   awk -v table=wake|pingpong|colls -f maint/lib/median.awk \
#       -f maint/lib/tables/shmwake-bench.awk FILE
#
# wake: FILE has "SETTING MEDIAN P90" per run (SETTING doorbell or none, the run's own
# median and 90th percentile of send to receive, us); prints the median over the runs
# of each and the ratio doorbell / none. pingpong: "SETTING US" per run, the 8-byte
# half round trip of two polling ranks. colls: "SETTING BENCH@SIZE US" per run, in the
# order the collectives first appear. Ratios are 0 where none's median is 0 or missing.
table == "wake" { med[$1] = med[$1] " " $2; p90[$1] = p90[$1] " " $3 }
table == "pingpong" { v[$1] = v[$1] " " $2 }
table == "colls" { v[$1 " " $2] = v[$1 " " $2] " " $3; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
END {
    if (table == "wake") {
        dm = median(med["doorbell"]); nm = median(med["none"])
        dp = median(p90["doorbell"]); np = median(p90["none"])
        printf "%-22s %12s %12s %7s\n", "send to receive (us)", "doorbell", "none", "ratio"
        printf "%-22s %12.1f %12.1f %7.3f\n", "median", dm, nm, nm ? dm / nm : 0
        printf "%-22s %12.1f %12.1f %7.3f\n", "90th percentile", dp, np, np ? dp / np : 0
        print "(ratio: doorbell / none; below 1 the doorbell is faster)"
    } else if (table == "pingpong") {
        d = median(v["doorbell"]); o = median(v["none"])
        printf "%-22s %12.3f %12.3f %7.3f\n", "8 B ping-pong, spin", d, o, o ? d / o : 0
        print "(half round trip in us of two polling ranks: what the hook costs)"
    } else if (table == "colls") {
        for (k = 1; k <= n; k++) {
            d = median(v["doorbell " order[k]]); o = median(v["none " order[k]])
            printf "%-22s %12.1f %12.1f %7.3f\n", order[k] ", 8 ranks", d, o, o ? d / o : 0
        }
        print "(us per call, 4 ranks on each of 2 nodes, more ranks than the cores, default waiting)"
    } else {
        print "shmwake-bench.awk: table=wake, pingpong or colls" > "/dev/stderr"
        exit 2
    }
}
