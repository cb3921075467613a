# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# stats.sh - statistics for maint/'s bash scripts, sourced: median LIST, through the
# one median of maint/lib/median.awk, so that a list kept in bash and one kept in awk
# get the same median.
stats_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# median LIST: the median of the blank-separated numbers of LIST, "-" entries (failed
# measurements) skipped; "-" when no number is left. The list goes through the
# environment, which awk takes as it is (-v would read backslashes as escapes).
median() {
    # shellcheck disable=SC2016 # an awk program
    MEDIAN_LIST=$1 awk -f "$stats_lib/median.awk" \
        -f <(printf '%s\n' 'BEGIN { m = median(ENVIRON["MEDIAN_LIST"]); print (m == "" ? "-" : m) }')
}
