# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# report.sh - report.md: what was compared and how, a section per scenario (its setting,
# its floor, a table per benchmark: maint/lib/report.awk), the targets, and every run.
#
# Owns: the format of report.md; write_report, report_header, report_scenario,
# report_runs.
# Expects: results.sh (floor_med, count_outcomes' counts), targets.sh (target_rows),
# targets-mpi.sh (mpi_target_rows);
# out (summary.csv, runs.csv, floor.csv, the .scenario files), here (maint/lib); the
# variables of meta (mode la lb reps time_s grace baseline_only pme_version pme_prefix
# pme_device pme_env tcp_env tcp_version ucx_version machine started load0 load1
# command_line sc_names) and plots.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

write_report() {
    local sc
    {
        report_header
        for sc in "${sc_names[@]}"; do report_scenario "$sc"; done
        echo
        echo "### Targets (issue 5)"
        echo
        echo "| target | measured | ratio | goal | |"
        echo "|---|---|---|---|---|"
        target_rows
        echo
        echo "### Targets (issue 17)"
        echo
        echo "| target | measured | ratio | goal | |"
        echo "|---|---|---|---|---|"
        mpi_target_rows
        report_runs
    } >"$out/report.md"
}

report_header() {
    echo "# $la against $lb: maint/bench, $mode mode"
    echo
    echo "- command: \`$command_line\`"
    echo "- date: $started; machine: $machine; load average $load0 at the start, $load1 at the end (the machine is shared: only ratios measured in the same run mean anything)"
    if [ "$baseline_only" = 1 ]; then
        echo "- A and B: both Debian's MPICH $tcp_version (ch4:ucx), UCX $ucx_version held to TCP (\`UCX_TLS=tcp,self UCX_NET_DEVICES=<data interface>\`): a test of the runner, A/B should be near 1"
    else
        echo "- $la: PME's MPICH ($pme_version, ch4:pme) from \`${pme_prefix/#$HOME/\~}\`: MPI over raw Ethernet frames (EtherType 0x88B5) on the data interface, default settings${pme_env[*]:+ plus ${pme_env[*]}}${pme_device:+; device: $pme_device}"
        echo "- $lb (the baseline): Debian's MPICH $tcp_version (ch4:ucx) over UCX $ucx_version held to TCP on the same data interface: \`UCX_TLS=tcp,self UCX_NET_DEVICES=<data interface>\`${tcp_env[*]:+ plus ${tcp_env[*]}}"
    fi
    echo "- method: the same benchmark sources (test/perf) built with each MPI's mpicc; one maint/vcluster cluster per scenario (its data links also carry IPv4 for the baseline); runs interleaved A B A B, $reps repetitions, medians; ratios are $la/$lb (us: lower is better; MB/s and Mmsg/s: higher is better); $time_s s measured per size after warm-up"
    echo "- CPU: user+sys time (getrusage) of the ranks doing the work during the measured loop: for latency in % of one core per rank, for bandwidth in CPU seconds per 10^9 payload bytes (all those ranks together)"
    echo "- runs: $nruns mpiexec runs; $hangs of the baseline printed every result but hung in MPI_Finalize and were killed after ${grace} s (their results count; Debian's MPICH 4.0.2 with UCX 1.13, mostly with 3 or more ranks, openucx/ucx#8738); $failures failed, timed out or (PME) hung"
    echo "- verification: $((nres - fails)) of $nres results verified$([ "$fails" = 0 ] || echo "; **$fails FAILED**, left out of the medians")"
}

# report_scenario SCENARIO: its setting, its floor and its tables.
report_scenario() {
    local sc=$1 conf np fl t v
    echo
    echo "### Scenario $sc"
    echo
    conf=$(cat "$out/$sc.scenario")
    np=$(awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); c[kv[1]] = kv[2]}} END {print c["nodes"] * c["ppn"]}' <<<"$conf")
    echo "${conf%% runs=*}: $np ranks on $(nproc) cores$([ "$np" -gt "$(nproc)" ] && echo " (oversubscribed: a library that busy-polls loses the core it waits on)"). Runs: \`${conf##* runs=}\`."
    fl=''
    for t in raw-pp-spin raw-pp-block tcp-pp-spin tcp-pp-block raw-bw pme-bw-1m pme-bw-4m; do
        v=$(floor_med "$sc" "$t" || true)
        [ -z "$v" ] || fl="$fl $t $v$(case $t in *-bw*) echo " MB/s" ;; *) echo " us" ;; esac);"
    done
    [ -z "$fl" ] || { echo; echo "Floor on the same link (rawwire: 8 B half round trip of raw frames and of TCP, polling and blocking; a stream of MTU-sized raw frames; pme_perf: pme_core's own stream of 1 and 4 MiB messages, authenticated as MPI jobs are), medians:${fl%;}."; }
    awk -F, -v scenario="$sc" -v la="$la" -v lb="$lb" -v plots="$plots" -f "$here/report.awk" "$out/summary.csv"
}

report_runs() {
    echo
    echo "### Runs"
    echo
    echo "| scenario | MPI | rep | run | status | seconds | data-link bytes (node 0) | load average at start |"
    echo "|---|---|---|---|---|---:|---:|---:|"
    awk -F, -v la="$la" -v lb="$lb" 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
        {printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, ($2 == "A" ? la : lb), $3, $4, $5, $7, $8, $(col["load"])}' "$out/runs.csv"
}
