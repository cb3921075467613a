# SPDX-License-Identifier: BSD-3-Clause
# median.awk - median(LIST): the one median of maint/'s scripts. Loaded before the
# program that calls it (awk has no include):
#
#   awk -f maint/lib/median.awk -f PROGRAM.awk FILE...
#
# and from bash through maint/lib/stats.sh's median.
#
# LIST holds numbers separated by blanks. An entry "-" is skipped: the scripts keep a
# failed measurement as "-" so that two lists stay paired run by run. With an odd count
# the middle entry comes back as it was written (print shows "1e3" as 1e3), with an even
# count the mean of the two middle ones, a number (print shows it with OFMT, %.6g). No
# number left gives "", so that each caller decides how nothing shows (a "-", an empty
# CSV cell, 0 in a printf). Entries sort as `sort -g` orders them in the C locale, for
# the medians of the bash scripts came from sort -g and keep their spelling: by value,
# equal values by their text, and text that does not start as a number does (a stray
# word) before every number.
function median(list,    n, a, m, v, i, j, t) {
    n = split(list, a, " ")
    m = 0
    for (i = 1; i <= n; i++)
        if (a[i] != "-")
            v[++m] = a[i]
    if (m == 0)
        return ""
    # Insertion sort: the lists are a handful of repetitions.
    for (i = 2; i <= m; i++) {
        t = v[i]
        for (j = i - 1; j >= 1 && median_after(v[j], t); j--)
            v[j + 1] = v[j]
        v[j + 1] = t
    }
    return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}

# median_after(X, Y): whether X sorts after Y (by value, then by text).
function median_after(x, y,    xn, yn) {
    xn = x ~ /^[ \t]*[-+]?\.?[0-9]/
    yn = y ~ /^[ \t]*[-+]?\.?[0-9]/
    if (xn != yn)
        return xn
    if (xn && x + 0 != y + 0)
        return x + 0 > y + 0
    return "" x > "" y
}
