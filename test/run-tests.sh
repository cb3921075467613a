#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run-tests.sh - PME's test driver: runs the tests of one tier side by side within a CPU
# budget, each with a time limit, and reports each test's time, the total and the ten
# slowest.
#
#   run-tests.sh [TEST...]
#
# TEST is a compiled test (a path), optionally with a flavour in front: asan:PATH runs
# it with the sanitizers' options (PATH from a --enable-sanitizers build), valgrind:PATH
# runs it under valgrind memcheck with the shorter loop tests. Every script
# test/*/t-*.sh of the source tree is added unless PME_TEST_SCRIPTS=0.
#
# Each test says what it is in a line among its first 30 (a compiled test in its .c
# source), for instance:
#   # pme-test: tier=default cpu=50 time=90 timeout=1500 needs=mpich
#   tier=default|full  default: run by `maint/test` and by `maint/test --full`;
#                      full: only by `maint/test --full` (PME_TEST_TIER=full)
#   cpu=PERCENT        how much of one core it keeps busy, on average (default 100): the
#                      next test starts while the sum is under PME_TEST_CPU; `all` for a
#                      test that must have the machine to itself (it measures time)
#   time=SECONDS       about how long it takes on a 2-core machine: the longest start first
#   timeout=SECONDS    its limit when it needs more than PME_TEST_TIMEOUT
#   needs=mpich        it runs MPI programs: with PME_TEST_MPICH_STATUS set, it waits
#                      until that file exists (maint/test builds MPICH meanwhile)
# A test without such a line fails (every test belongs to a tier).
#
# A test passes with exit status 0, is skipped with 77 (its last output line says why)
# and fails otherwise. Prints one line per test as it ends, then "N passed, M failed[, K
# skipped]", the wall time, the ten slowest tests, and the same into $logdir/times.tsv.
# Exit status is non-zero when anything failed.
#
#   PME_TEST_TIER=default|full  which tier (default: default); full also sets
#                           PME_TEST_FULL=1, the long version of the tests that have one
#   PME_TEST_FILTER=regex   run only tests whose name matches
#   PME_TEST_TIMEOUT=secs   per-test limit (default 600; a test's timeout= may raise it)
#   PME_TEST_JOBS=N         at most N tests at once (default: twice the CPUs)
#   PME_TEST_CPU=PERCENT    the CPU budget (default: 100 per CPU); 1 runs one at a time
#   PME_TEST_WRAP="cmd"     run compiled tests without a flavour under cmd
#   PME_TEST_LOGDIR=dir     keep every test's output there (default: a temp dir)
#   PME_TEST_MPICH_STATUS=file, PME_TEST_MPICH_CPU=PERCENT
#                           see needs=mpich; until the file exists, PERCENT (default 100)
#                           of the budget stays free for the build
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
export srcdir
builddir=${builddir:-$PWD}
export builddir
filter=${PME_TEST_FILTER:-.}
limit=${PME_TEST_TIMEOUT:-600}
tier=${PME_TEST_TIER:-default}
ncpu=$(nproc 2>/dev/null || echo 2)
cap=${PME_TEST_CPU:-$((ncpu * 100))}
maxjobs=${PME_TEST_JOBS:-$((ncpu * 2))}
mpich_status=${PME_TEST_MPICH_STATUS:-}
mpich_cpu=${PME_TEST_MPICH_CPU:-100}
logdir=${PME_TEST_LOGDIR:-$(mktemp -d /tmp/pme-tests.XXXXXX)}
mkdir -p "$logdir"
case $tier in
default) ;;
full) export PME_TEST_FULL=1 ;;
*) echo "run-tests.sh: PME_TEST_TIER must be default or full, not $tier" >&2; exit 2 ;;
esac
[ "$cap" -ge 1 ] 2>/dev/null && [ "$maxjobs" -ge 1 ] 2>/dev/null ||
    { echo "run-tests.sh: PME_TEST_CPU and PME_TEST_JOBS must be positive numbers" >&2; exit 2; }

# ---- the tests and what their headers say ----
declare -A t_cmd=() t_flavour=() t_tier=() t_cpu=() t_time=() t_timeout=() t_needs=() t_bad=()
names=()

# header_of FILE: the test's "pme-test:" line, without what comes before the marker.
header_of() {
    head -n 30 "$1" 2>/dev/null | sed -n 's/.*pme-test: *//p' | head -n 1
}

# add NAME FLAVOUR COMMAND HEADER-FILE
add() {
    local name=$1 flavour=$2 cmd=$3 src=$4 kv k v hdr
    [[ $name =~ $filter ]] || return 0
    names+=("$name")
    t_cmd[$name]=$cmd t_flavour[$name]=$flavour
    t_tier[$name]="" t_cpu[$name]=100 t_time[$name]=60 t_timeout[$name]=$limit t_needs[$name]=""
    t_bad[$name]=""
    hdr=$(header_of "$src")
    [ -n "$hdr" ] || { t_bad[$name]="no 'pme-test: tier=...' line among the first 30 of $src"; return 0; }
    for kv in $hdr; do
        k=${kv%%=*} v=${kv#*=}
        case $k in
        tier) t_tier[$name]=$v ;;
        cpu) [ "$v" = all ] && v=$cap; t_cpu[$name]=$v ;;
        time) t_time[$name]=$v ;;
        timeout) [ "$v" -gt "$limit" ] && t_timeout[$name]=$v ;;
        needs) t_needs[$name]=$v ;;
        *) break ;; # the rest of the line is prose
        esac
    done
    case ${t_tier[$name]} in
    default | full) ;;
    *) t_bad[$name]="tier '${t_tier[$name]}' in $src is neither default nor full" ;;
    esac
    [[ ${t_cpu[$name]} =~ ^[0-9]+$ && ${t_time[$name]} =~ ^[0-9]+$ ]] ||
        t_bad[$name]="cpu= and time= in $src must be whole numbers"
    [ "${t_cpu[$name]}" -gt "$cap" ] && t_cpu[$name]=$cap
    # Sanitizers and valgrind make a test several times slower.
    case $flavour in
    asan) t_time[$name]=$((t_time[$name] * 2)) ;;
    valgrind) t_time[$name]=$((t_time[$name] * 4)) ;;
    esac
    return 0
}

for t in "$@"; do
    flavour=plain path=$t
    case $t in asan:* | valgrind:*) flavour=${t%%:*} path=${t#*:} ;; esac
    rel=test/${path##*test/}
    name=$rel
    [ "$flavour" = plain ] || name=$flavour:$rel
    add "$name" "$flavour" "$path" "$srcdir/$rel.c"
done
if [ "${PME_TEST_SCRIPTS:-1}" = 1 ]; then
    for t in "$srcdir"/test/*/t-*.sh; do
        [ -e "$t" ] && add "${t#"$srcdir"/}" script "$t" "$t"
    done
fi

# The tier's tests, longest first (then by name, so that the order is the same each run).
queue=()
for n in "${names[@]}"; do
    [ -n "${t_bad[$n]}" ] || [ "$tier" = full ] || [ "${t_tier[$n]}" = default ] || continue
    queue+=("$n")
done
mapfile -t queue < <(for n in "${queue[@]}"; do printf '%s\t%s\n' "${t_time[$n]}" "$n"; done |
    sort -t $'\t' -k1,1nr -k2,2 | cut -f2)

# ---- running one test (in a background subshell) ----
# Writes "rc wall_ms cpu_ms" to $logdir/NAME.result when the test ends; cpu_ms is the
# user and system time of the test and every process it waited for.
run_one() {
    local name=$1 log=$2 res=$3 start rc own=${t_timeout[$name]}
    start=$(date +%s%N)
    case ${t_flavour[$name]} in
    script) timeout -k 10 "$own" bash "${t_cmd[$name]}" ;;
    plain) timeout -k 10 "$own" ${PME_TEST_WRAP:-} "${t_cmd[$name]}" ;;
    asan)
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
            timeout -k 10 "$own" "${t_cmd[$name]}" ;;
    valgrind)
        # --fair-sched=yes: valgrind runs one thread at a time, and by default a thread
        # that polls without a system call (a ring device's progress) keeps that turn,
        # so the liveness helper that t_rma's "helper" case relies on never ran.
        PME_TEST_QUICK=1 timeout -k 10 "$own" valgrind -q --fair-sched=yes --error-exitcode=99 \
            --leak-check=full --errors-for-leak-kinds=definite "${t_cmd[$name]}" ;;
    esac >"$log" 2>&1 </dev/null
    rc=$?
    local wall=$((($(date +%s%N) - start) / 1000000)) cpu
    # The children's user and system times: the second line of `times`, "XmY.ZZZs
    # XmY.ZZZs" (written to a file: in a pipe, `times` would run in a subshell of its own,
    # which has no children).
    times >"$res.times"
    cpu=$(sed -n 2p "$res.times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%d", s * 1000 }')
    rm -f "$res.times"
    echo "$rc $wall $cpu" >"$res.tmp" && mv "$res.tmp" "$res"
}

# ---- the scheduler ----
declare -A running_pid=() running_cpu=() started=()
used=0
results=()   # "name<TAB>status<TAB>wall_ms<TAB>cpu_ms"
pass=0 fail=0 skip=0
failed=()
t0=$(date +%s%N)
trap 'for p in "${running_pid[@]}"; do kill -TERM -- "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done; exit 130' INT TERM

secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }
file_of() { echo "$logdir/$(echo "$1" | tr '/:' '__')"; }

mpich_ready() { [ -z "$mpich_status" ] || [ -e "$mpich_status" ]; }
reserved() { mpich_ready && echo 0 || echo "$mpich_cpu"; }

report() { # name status wall cpu [reason]
    local name=$1 st=$2 wall=$3 cpu=$4 why=${5:-} load=""
    [ "$wall" -gt 0 ] && load=", cpu $((cpu * 100 / wall))%"
    results+=("$name"$'\t'"$st"$'\t'"$wall"$'\t'"$cpu")
    case $st in
    PASS) pass=$((pass + 1)); echo "PASS  $name ($(secs "$wall")s$load)" ;;
    SKIP) skip=$((skip + 1)); echo "SKIP  $name: $why" ;;
    FAIL)
        fail=$((fail + 1)); failed+=("$name")
        echo "FAIL  $name: $why"
        [ -f "$(file_of "$name").log" ] && sed 's/^/    | /' "$(file_of "$name").log" | tail -n 40 ;;
    esac
}

finish() { # pid
    local pid=$1 name rc wall cpu
    for name in "${!running_pid[@]}"; do [ "${running_pid[$name]}" = "$pid" ] && break; done
    [ "${running_pid[$name]:-}" = "$pid" ] || return 0
    used=$((used - running_cpu[$name]))
    unset "running_pid[$name]" "running_cpu[$name]"
    local f
    f=$(file_of "$name")
    if [ -s "$f.result" ]; then
        read -r rc wall cpu <"$f.result"
    else
        rc=125 wall=$((($(date +%s%N) - started[$name]) / 1000000)) cpu=0
    fi
    case $rc in
    0) report "$name" PASS "$wall" "$cpu" ;;
    77) report "$name" SKIP "$wall" "$cpu" "$(tail -n 1 "$f.log")" ;;
    124) report "$name" FAIL "$wall" "$cpu" "timed out after ${t_timeout[$name]}s" ;;
    *) report "$name" FAIL "$wall" "$cpu" "exit $rc, $(secs "$wall")s" ;;
    esac
}

last_note=$(date +%s)
tick=""
while [ ${#queue[@]} -gt 0 ] || [ ${#running_pid[@]} -gt 0 ]; do
    # Start tests in the queue's order (longest first) while the CPU they keep busy stays
    # under the budget: the next one starts whenever some of it is free, even if its own
    # share then overcommits the machine a little. Letting a shorter test that fits go
    # first instead made the longest ones wait for every short one and then run alone at
    # the end. A test that must have the machine to itself (cpu=all) waits until nothing
    # runs, and holds back those behind it. Tests waiting for MPICH's build step aside.
    rest=() blocked=0
    for name in "${queue[@]}"; do
        if [ -n "${t_bad[$name]}" ]; then
            report "$name" FAIL 0 0 "${t_bad[$name]}"
            continue
        fi
        if [ "${t_needs[$name]}" = mpich ] && ! mpich_ready; then
            rest+=("$name")
            continue
        fi
        if [ "${t_needs[$name]}" = mpich ] && [ -n "$mpich_status" ] &&
           [ "$(cat "$mpich_status" 2>/dev/null)" != 0 ]; then
            report "$name" FAIL 0 0 "MPICH with ch4:pme could not be built (see maint/build-mpich's output above)"
            continue
        fi
        free=$((cap - used - $(reserved)))
        if [ $blocked = 0 ] && [ ${#running_pid[@]} -lt "$maxjobs" ] &&
           { [ ${#running_pid[@]} = 0 ] ||
             { [ "$free" -gt 0 ] && [ "${t_cpu[$name]}" -lt "$cap" ]; }; }; then
            f=$(file_of "$name")
            rm -f "$f.result"
            run_one "$name" "$f.log" "$f.result" &
            running_pid[$name]=$!
            running_cpu[$name]=${t_cpu[$name]}
            started[$name]=$(date +%s%N)
            used=$((used + t_cpu[$name]))
        else
            blocked=1
            rest+=("$name")
        fi
    done
    queue=("${rest[@]}")
    [ ${#running_pid[@]} -eq 0 ] && [ ${#queue[@]} -eq 0 ] && break
    # Wait for a test to end, or for the tick: every second while tests wait for MPICH's
    # build, else every 30 s, to say what still runs (a hung test shows before its limit).
    if [ -z "$tick" ]; then
        if mpich_ready; then sleep 30 & else sleep 1 & fi
        tick=$!
    fi
    pid=""
    wait -n -p pid "${running_pid[@]}" "$tick" 2>/dev/null
    if [ "$pid" = "$tick" ]; then
        tick=""
        now=$(date +%s)
        if [ $((now - last_note)) -ge 60 ] && [ ${#running_pid[@]} -gt 0 ]; then
            last_note=$now
            line=""
            for n in "${!running_pid[@]}"; do line+=" $n ($(((now * 1000000000 - started[$n]) / 1000000000))s)"; done
            echo "...   running:$line"
        fi
    elif [ -n "$pid" ]; then
        finish "$pid"
    fi
done
[ -n "$tick" ] && kill "$tick" 2>/dev/null

# ---- the summary ----
wall_total=$((($(date +%s%N) - t0) / 1000000))
sum=0 cpu_sum=0
printf 'name\tstatus\twall_ms\tcpu_ms\n' >"$logdir/times.tsv"
for r in "${results[@]}"; do
    printf '%s\n' "$r" >>"$logdir/times.tsv"
    IFS=$'\t' read -r _ _ w c <<<"$r"
    sum=$((sum + w)) cpu_sum=$((cpu_sum + c))
done
echo "logs: $logdir"
echo "time: $(secs "$wall_total") s for the $tier tier on $ncpu CPUs (the tests' own times add up to $(secs "$sum") s, their CPU time to $(secs "$cpu_sum") s)"
echo "slowest:"
tail -n +2 "$logdir/times.tsv" | sort -t $'\t' -k3,3nr | head -n 10 |
    while IFS=$'\t' read -r n st w c; do printf '  %7s s  %s%s\n' "$(secs "$w")" "$n" "$([ "$st" = PASS ] || echo " ($st)")"; done
summary="$pass passed, $fail failed"
[ $skip -gt 0 ] && summary="$summary, $skip skipped"
echo "$summary"
[ $fail -eq 0 ]
