# SPDX-License-Identifier: BSD-3-Clause
# report.awk - markdown tables of summary.csv (see summarize.awk), one per scenario and
# benchmark, in the order of the file.
#
#   awk -F, -v scenario=NAME -v la=PME -v lb=TCP -v plots=1 -f report.awk summary.csv
#
# Prints, for every benchmark of scenario NAME, a heading, the table (size, the two
# medians, A/B, CPU) and, with plots=1, the PNG made for it (NAME-BENCH.png).

function human(n) {
    if (n >= 1048576 && n % 1048576 == 0) return (n / 1048576) "M"
    if (n >= 1024 && n % 1024 == 0) return (n / 1024) "K"
    return n
}
function num(x) {
    if (x == "") return "-"
    if (x + 0 >= 100) return sprintf("%.0f", x)
    if (x + 0 >= 10) return sprintf("%.1f", x)
    if (x + 0 >= 1) return sprintf("%.2f", x)
    return sprintf("%.3g", x)
}
function sizename(bench) {
    if (bench ~ /^halo/ || bench == "wavefront") return "local edge"
    if (bench == "isort") return "keys/rank"
    if (bench == "transpose") return "rows/rank"
    return "size (B)"
}
function better(unit) { return unit == "us" ? "lower is better" : "higher is better" }
function close_table() {
    if (cur != "" && plots)
        printf "\n![%s %s](%s-%s.png)\n", scenario, cur, scenario, cur
}

NR == 1 { next }
$1 != scenario { next }
{
    if ($2 != cur) {
        close_table()
        cur = $2
        bw = ($4 != "us")
        printf "\n#### %s (%s, %s)\n\n", cur, $4, better($4)
        printf "| %s | %s | %s | %s/%s | %s CPU | %s CPU |\n", sizename(cur), la, lb, la, lb, la, lb
        printf "|---:|---:|---:|---:|---:|---:|\n"
    }
    fails = ($18 + $19 > 0) ? sprintf(" (%d failed)", $18 + $19) : ""
    if (bw && $16 != "")
        ca = num($16) " s/GB"
    else
        ca = ($14 == "" ? "-" : sprintf("%.0f%%", $14))
    if (bw && $17 != "")
        cb = num($17) " s/GB"
    else
        cb = ($15 == "" ? "-" : sprintf("%.0f%%", $15))
    printf "| %s | %s | %s | %s%s | %s | %s |\n", human($3), num($5), num($6),
        ($7 == "" ? "-" : sprintf("%.2f", $7)), fails, ca, cb
}
END { close_table() }
