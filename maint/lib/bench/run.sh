# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# run.sh - running one benchmark program across the cluster and timing it: which MPI
# side A and side B are, the time limit of a run, watching it (a run that printed all its
# results but does not exit is killed), what its ending means, and its records.
#
# Owns: the columns of runs.csv and raw.csv (their header lines are written by
# measure.sh); run_mpi, side_command, run_limit, watch_run, run_status, count_sizes,
# datalink_bytes, reap.
# Expects: options.sh's settings; scenarios.sh's current scenario and cluster (sc
# snodes stopo sppn saenv cl if0 ucx_devs); from measure.sh: work (the built
# programs), logs, out, a_mpiexec, tcp_mpiexec, la, lb; vc (maint/vcluster); root.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

# reap CLUSTER: end whatever still runs in the cluster's nodes (all of it is ours).
reap() {
    local c=$1 i pids n
    n=$(jq -r .node_count "/run/vcluster/$c/cluster.json" 2>/dev/null) || return 0
    for ((i = 0; i < n; i++)); do
        pids=$(ip netns pids "$c-n$i" 2>/dev/null || true)
        # shellcheck disable=SC2086 # a list of pids
        [ -z "$pids" ] || kill -TERM $pids 2>/dev/null || true
    done
    sleep 0.5
    for ((i = 0; i < n; i++)); do
        pids=$(ip netns pids "$c-n$i" 2>/dev/null || true)
        # shellcheck disable=SC2086
        [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    done
}

datalink_bytes() { # tx+rx bytes of node 0's data interface
    ip netns exec "$cl-n0" cat "/sys/class/net/$if0/statistics/tx_bytes" \
        "/sys/class/net/$if0/statistics/rx_bytes" 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'
}

# count_sizes ARGS...: about how many (benchmark, size) pairs an mpibench run has
count_sizes() {
    local a n=0
    for a in "$@"; do
        case $a in
        -s) ;;
        *@*) n=$((n + $(awk -v s="${a#*@}" 'BEGIN {n = split(s, p, ","); c = 0
                for (i = 1; i <= n; i++) if (p[i] ~ /\.\./) c += 23; else c++; print c}'))) ;;
        *) n=$((n + 23)) ;;
        esac
    done
    echo "$n"
}

# run_limit ARGS...: REPLY = the time limit (s) of an mpibench run: --timeout, or what
# its sizes need (each: warm-up and measurement, several times over, plus start-up).
run_limit() {
    REPLY=${timeout_s:-$(count_sizes "$@" | awk -v t="$time_s" -v w="$warm" '{printf "%d", 60 + $1 * (4 * (t + w) + 3)}')}
}

# side_command IMPL: side_mpiexec, side_bin and side_envs (mpiexec -genv arguments) of
# side IMPL: A is PME's MPICH (unless --baseline-only), B (or a baseline A) is
# Debian's MPICH with UCX held to TCP on the data interfaces.
side_command() {
    local impl=$1 e
    side_envs=()
    if [ "$impl" = A ] && [ "$baseline_only" = 0 ]; then
        side_mpiexec=$a_mpiexec
        [ "$stopo" != switch ] || side_envs+=(-genv MPIR_CVAR_CH4_PME_IFACE "$if0")
        for e in "${pme_env[@]}" "${saenv[@]}"; do side_envs+=(-genv "${e%%=*}" "${e#*=}"); done
        side_bin=$work/A/mpibench
    else
        side_mpiexec=$tcp_mpiexec
        side_envs+=(-genv UCX_TLS "tcp,self" -genv UCX_NET_DEVICES "$ucx_devs")
        for e in "${tcp_env[@]}"; do side_envs+=(-genv "${e%%=*}" "${e#*=}"); done
        side_bin=$work/$impl/mpibench
    fi
}

# watch_run PID LOG T0 LIMIT: wait for the run PID (a process group) to end. A run that
# printed "# end" (all its results, flushed before MPI_Finalize) but does not exit
# within the grace period is killed: REPLY=finalize-hang; one past LIMIT seconds since
# T0 is killed too: REPLY=timeout; otherwise REPLY is empty.
watch_run() {
    local pid=$1 log=$2 t0=$3 limit=$4 now ended=0
    REPLY=''
    while kill -0 "$pid" 2>/dev/null; do
        sleep 0.2
        now=$(date +%s.%N)
        if [ "$ended" = 0 ] && grep -q '^# end errors=' "$log"; then ended=$now; fi
        if [ "$ended" != 0 ] && awk -v a="$now" -v b="$ended" -v g="$grace" 'BEGIN {exit !(a - b > g)}'; then
            REPLY=finalize-hang
        elif awk -v a="$now" -v b="$t0" -v l="$limit" 'BEGIN {exit !(a - b > l)}'; then
            REPLY=timeout
        fi
        if [ -n "$REPLY" ]; then
            kill -TERM -- "-$pid" 2>/dev/null || true
            sleep 1
            kill -KILL -- "-$pid" 2>/dev/null || true
            reap "$cl"
            return 0
        fi
    done
}

# run_status WATCHED RC LOG: REPLY = how the run ended, for runs.csv: ok, verify-failed
# (the program found a wrong result), failed, timeout or finalize-hang. A hang in
# MPI_Finalize keeps its results only if they all verified.
run_status() {
    local watched=$1 rc=$2 log=$3
    REPLY=$watched
    if [ -z "$watched" ]; then
        if grep -q '^# end errors=0' "$log" && [ "$rc" = 0 ]; then
            REPLY=ok
        elif grep -q '^# end errors=[1-9]' "$log"; then
            REPLY=verify-failed
        else
            REPLY=failed
        fi
    elif [ "$watched" = finalize-hang ] && ! grep -q '^# end errors=0' "$log"; then
        REPLY=verify-failed
    fi
}

# run_mpi IMPL REP RUNINDEX ARGS...: one mpiexec of mpibench on side IMPL with a time
# limit; its ending goes to runs.csv, its measurements to raw.csv. A run counted as hung
# in MPI_Finalize keeps its results (openucx/ucx#8738 makes Debian's MPICH hang there
# with 3 or more ranks, now and then with 2).
run_mpi() {
    local impl=$1 rep=$2 idx=$3
    shift 3
    local log=$logs/$sc-$impl-r$rep-$idx.out np=$((snodes * sppn)) limit
    run_limit "$@"
    limit=$REPLY
    side_command "$impl"
    local before after t0 now status rc=0 pid load
    load=$(cut -d' ' -f1 /proc/loadavg)
    before=$(datalink_bytes)
    t0=$(date +%s.%N)
    setsid "$vc" mpiexec --name "$cl" --mpiexec "$side_mpiexec" -n "$np" -ppn "$sppn" "${side_envs[@]}" \
        "$side_bin" -t "$time_s" -W "$warm" -L "$((limit * 7 / 10))" "$@" >"$log" 2>&1 &
    pid=$!
    watch_run "$pid" "$log" "$t0" "$limit"
    status=$REPLY
    wait "$pid" 2>/dev/null || rc=$?
    after=$(datalink_bytes)
    now=$(date +%s.%N)
    run_status "$status" "$rc" "$log"
    status=$REPLY
    printf '%s,%s,%s,%s,%s,%s,%.1f,%s,%s,%s\n' "$sc" "$impl" "$rep" "$idx" "$status" "$rc" \
        "$(awk -v a="$now" -v b="$t0" 'BEGIN {print a - b}')" "$((after - before))" "$load" "${log##*/}" >>"$out/runs.csv"
    # Measurements count whenever the program printed them: their verify column says
    # whether they are good.
    awk -v p="$sc,$impl,$rep," '/^[a-z0-9]+,[0-9]+,/ {print p $0}' "$log" >>"$out/raw.csv"
    say "  $sc rep $rep run $idx $([ "$impl" = A ] && echo "$la" || echo "$lb"): $status ($(grep -c '^[a-z0-9]*,[0-9]*,' "$log") results)"
    [ "$status" = ok ] || [ "$status" = finalize-hang ] || tail -n 5 "$log" | sed 's/^/    | /' >&2
}
