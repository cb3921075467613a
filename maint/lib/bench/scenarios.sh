# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# scenarios.sh - what maint/bench measures and on what: the scenarios of --quick, --full
# and of a custom command line, and the virtual cluster each one runs on.
#
# A scenario is one cluster and the mpiexec runs made on it; runs are separated by ';',
# each is the benchmark arguments of one mpibench invocation. Its ENV is extra
# environment of side A in this scenario (VAR=VALUE, space-separated), on top of
# --pme-env.
#
# Owns: the scenario table (sc_names sc_nodes sc_topo sc_ppn sc_mtu sc_rate sc_loss
# sc_runs sc_aenv), warm and ppiters (warm-up seconds, raw ping-pong iterations);
# scenario, plan_scenarios, custom_runs; the current scenario's globals (sc snodes stopo
# sppn smtu srate sloss saenv sruns) set by scenario_load; its cluster (cl, srate_bps,
# the common link of nodes 0 and 1: if0 mac0 if1 mac1 ip1, ucx_devs) set by
# scenario_cluster_up, which also writes OUT/SCENARIO.scenario.
# Expects: options.sh's settings (checked); for scenario_cluster_up: vc (maint/vcluster),
# out, logs, clusters (the array of clusters to remove at exit), jq, root.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

sc_names=() sc_nodes=() sc_topo=() sc_ppn=() sc_mtu=() sc_rate=() sc_loss=() sc_runs=() sc_aenv=()
# shellcheck disable=SC2034 # read by the runners
warm=0.1 ppiters=20000

scenario() { # name nodes topology ppn mtu rate loss runs [env]
    sc_names+=("$1") sc_nodes+=("$2") sc_topo+=("$3") sc_ppn+=("$4") sc_mtu+=("$5")
    sc_rate+=("$6") sc_loss+=("$7") sc_runs+=("$8") sc_aenv+=("${9:-}")
}

# plan_scenarios: the scenario table of the mode, and the mode's defaults of reps,
# time_s, warm, ppiters and (full) out.
plan_scenarios() {
    case $mode in
    quick)
        # shellcheck disable=SC2034 # read by the runners
        reps=${reps:-2} time_s=${time_s:-0.2} warm=0.05 ppiters=5000
        scenario quick 2 switch 1 9000 "" "" \
            "pingpong@0,8,1k,64k,1m bw@8,1k,64k,1m,4m;halo3d@4,16 isort@1k,64k"
        ;;
    full)
        reps=${reps:-3} time_s=${time_s:-0.3}
        out=${out:-$top/doc/perf}
        scenario mtu9000 2 switch 1 9000 "" "" "pingpong bw bibw msgrate"
        scenario mtu65535 2 switch 1 65535 "" "" "pingpong bw bibw"
        # Standard frames, where TCP's per-segment cost shows (issue 17).
        scenario mtu1500 2 switch 1 1500 "" "" "pingpong@0..4m bw@64k,1m,4m bibw@64k,1m,4m msgrate@8"
        scenario rate1g 2 switch 1 9000 1gbit "" "pingpong@8,1k,64k bw@1k..4m bibw@1k..4m"
        scenario rate10g 2 switch 1 9000 10gbit "" "pingpong@8,1k,64k bw@1k..4m bibw@1k..4m"
        scenario nodes4 4 switch 1 9000 "" "" \
            "pingpong@8 msgrate@0..64k;allreduce alltoall bcast barrier;halo2d halo3d wavefront;isort@1k..1m transpose"
        # Waiting with a core per rank: PME's default against PME polling, in one run.
        scenario nodes2 2 switch 1 9000 "" "" "alltoall@64k,1m;isort@64k,1m"
        scenario nodes2spin 2 switch 1 9000 "" "" "alltoall@64k,1m;isort@64k,1m" PME_WAIT=spin
        # One-sided put and get, latency and bandwidth, against the baseline's (issue 17).
        scenario rma 2 switch 1 9000 "" "" "put@8..4m get@8..4m putbw@8..4m getbw@8..4m"
        # The control: 4 ranks on this machine's cores share them when it has fewer than 4,
        # where a library that polls (UCX) waits for the scheduler and PME's default waiting
        # sleeps. PME_WAIT=spin makes PME poll too: what remains is the transport.
        [ "$(nproc)" -ge 4 ] || scenario nodes4spin 4 switch 1 9000 "" "" \
            "pingpong@8;allreduce@8,64k barrier;halo2d@16,64,256 halo3d@4,8,16 wavefront@32;isort@1k,16k,256k" PME_WAIT=spin
        ;;
    custom)
        reps=${reps:-3} time_s=${time_s:-0.3}
        custom_runs "$bench"
        scenario custom "$nodes" "$topology" "$ppn" "$mtu" "$rate" "$loss" "$REPLY"
        ;;
    esac
}

# custom_runs LIST: REPLY = the runs of --bench LIST: one run per group (point-to-point,
# collectives, applications, one-sided), in that order, so that a run's benchmarks have
# the same needs. LIST is comma-separated, and a comma followed by a digit continues the
# sizes of the benchmark before it (pingpong@8,1k,bw).
custom_runs() {
    local runs='' b g list=()
    local -A grp=()
    for b in ${1//,/ }; do
        if [[ $b =~ ^[0-9] ]] && [ ${#list[@]} -gt 0 ]; then
            list[-1]="${list[-1]},$b"
        else
            list+=("$b")
        fi
    done
    for b in "${list[@]}"; do
        case ${b%%@*} in
        pingpong | bw | bibw | msgrate) g=p2p ;;
        allreduce | alltoall | bcast | barrier) g=coll ;;
        halo2d | halo3d | isort | wavefront | transpose) g=app ;;
        put | get | putbw | getbw | acc | epochput | epochget | epochacc) g=rma ;;
        *) bad "unknown benchmark ${b%%@*} (pingpong bw bibw msgrate allreduce alltoall bcast barrier halo2d halo3d isort wavefront transpose put get putbw getbw acc epochput epochget epochacc)" ;;
        esac
        grp[$g]="${grp[$g]:-} $b"
    done
    for g in p2p coll app rma; do
        [ -z "${grp[$g]:-}" ] || runs="$runs;${grp[$g]# }"
    done
    REPLY=${runs#;}
}

# scenario_load SI: the current scenario's globals from row SI of the table.
# shellcheck disable=SC2034 # read by the runners
scenario_load() {
    local si=$1
    sc=${sc_names[si]} snodes=${sc_nodes[si]} stopo=${sc_topo[si]} sppn=${sc_ppn[si]}
    smtu=${sc_mtu[si]} srate=${sc_rate[si]} sloss=${sc_loss[si]}
    read -r -a saenv <<<"${sc_aenv[si]}"
    IFS=';' read -r -a sruns <<<"${sc_runs[si]}"
}

# scenario_cluster_up SI: bring up a fresh cluster for scenario SI (loaded) with IPv4 on
# its data links (the baseline's TCP needs it); find the link nodes 0 and 1 share; record
# the scenario in OUT/SCENARIO.scenario.
# shellcheck disable=SC2034 # read by the runners
scenario_cluster_up() {
    local si=$1 upargs json
    cl=''
    for _ in 1 2 3 4 5 6 7 8 9; do
        cl=bn$((RANDOM % 100000))
        [ -e "/run/vcluster/$cl" ] || break
    done
    upargs=(--name "$cl" --nodes "$snodes" --topology "$stopo" --mtu "$smtu" --data-ip)
    [ -z "$srate" ] || upargs+=(--rate "$srate")
    [ -z "$sloss" ] || upargs+=(--loss "$sloss")
    say "scenario $sc: maint/vcluster up ${upargs[*]}"
    clusters+=("$cl")
    "$vc" up "${upargs[@]}" >"$logs/$sc-vcluster.out" 2>&1 || { cat "$logs/$sc-vcluster.out" >&2; die "vcluster up failed"; }
    json=/run/vcluster/$cl/cluster.json
    srate_bps=$(jq -r '.rate_bps // 0' "$json")
    # node 0 and node 1 on a common link: the first interface of node 0 reaching node 1
    if0='' mac0='' if1='' mac1=''
    read -r if0 mac0 if1 mac1 < <(awk -F'\t' '$1 == "iface" && $2 == 0 && $6 == 1 {print $3, $4, $7, $8; exit}' "/run/vcluster/$cl/cluster.tsv") || true
    [ -n "$if0" ] || die "node 0 and node 1 share no link in $stopo"
    ip1=$(jq -r --arg i "$if1" '.nodes[1].ifaces[] | select(.name == $i) | .ip // "" | sub("/.*"; "")' "$json")
    ucx_devs=$(jq -r '[.nodes[0].ifaces[].name] | join(",")' "$json")
    [ "$stopo" = switch ] || say "warning: on $stopo the baseline's TCP reaches only direct neighbours (the data links are not routed)"
    echo "nodes=$snodes topology=$stopo ppn=$sppn mtu=$smtu rate=${srate:-none} loss=${sloss:-0} iface=$if0 ucx_devices=$ucx_devs${sc_aenv[si]:+ A_env=${sc_aenv[si]// /,}} runs=${sc_runs[si]}" >"$out/$sc.scenario"
}
