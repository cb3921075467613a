#!/bin/bash
# run-tests.sh - PME's test driver.
#
# Runs each test given on the command line (compiled test programs) and every script
# matching test/*/t-*.sh under the source tree, each with a time limit. A test passes
# with exit status 0, is skipped with 77 (its last output line says why), and fails
# otherwise. Prints one line per test and ends with "N passed, M failed[, K skipped]".
# Exit status is non-zero when anything failed.
#
#   PME_TEST_FILTER=regex   run only tests whose name matches
#   PME_TEST_TIMEOUT=secs   per-test limit (default 600); a script may ask for a longer
#                           one with a line "# pme-test-timeout: SECS" in its first 30
#                           lines (the larger of the two applies)
#   PME_TEST_WRAP="cmd"     run compiled tests under cmd (e.g. valgrind)
#   PME_TEST_LOGDIR=dir     keep every test's output there (default: a temp dir)
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
export srcdir
builddir=${builddir:-$PWD}
export builddir
filter=${PME_TEST_FILTER:-.}
limit=${PME_TEST_TIMEOUT:-600}
logdir=${PME_TEST_LOGDIR:-$(mktemp -d /tmp/pme-tests.XXXXXX)}
mkdir -p "$logdir"

tests=()
for t in "$@"; do tests+=("$t"); done
for t in "$srcdir"/test/*/t-*.sh; do [ -e "$t" ] && tests+=("$t"); done

pass=0 fail=0 skip=0
failed=()
for t in "${tests[@]}"; do
    name=${t#"$srcdir"/}
    name=${name#./}
    [[ $name =~ $filter ]] || continue
    log="$logdir/$(echo "$name" | tr '/' '_').log"
    start=$(date +%s%N)
    own=$limit
    case "$t" in
    *.sh)
        asked=$(head -n 30 "$t" | sed -n 's/^# pme-test-timeout: \([0-9][0-9]*\).*/\1/p' | head -n 1)
        [ -n "$asked" ] && [ "$asked" -gt "$own" ] && own=$asked
        timeout -k 10 "$own" bash "$t" >"$log" 2>&1 ;;
    *) timeout -k 10 "$own" ${PME_TEST_WRAP:-} "$t" >"$log" 2>&1 ;;
    esac
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    secs="$((ms / 1000)).$((ms % 1000 / 100))"
    case $rc in
    0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
    77) skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$log")" ;;
    *) fail=$((fail + 1)); failed+=("$name")
       [ $rc = 124 ] && echo "FAIL  $name: timed out after ${own}s" || echo "FAIL  $name (exit $rc, ${secs}s)"
       sed 's/^/    | /' "$log" | tail -n 40 ;;
    esac
done
echo "logs: $logdir"
summary="$pass passed, $fail failed"
[ $skip -gt 0 ] && summary="$summary, $skip skipped"
echo "$summary"
[ $fail -eq 0 ]
