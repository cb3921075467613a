# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# measure.sh - one measuring session: what it needs installed and built (PME's MPICH,
# the benchmark program built with each MPI, rawwire), the fresh CSV files, and the
# scenarios one after the other, repetitions interleaved A B A B; then the meta file
# that lets --report-only make the report again.
#
# Owns: the header lines of raw.csv, runs.csv and floor.csv; meta (the variables the
# report needs, in `declare -p` form); la, lb (the sides' labels), a_mpicc, a_mpiexec,
# pme_version, pme_device, tcp_version, ucx_version, machine, started, load0, load1;
# measure, check_pme_mpich, build_programs, build_pme_core, default_device.
# Expects: options.sh, scenarios.sh, run.sh, floor.sh; top, here, vc, tcp_mpicc,
# tcp_mpiexec, command_line, work, out, logs, clusters; root.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

# shellcheck disable=SC2034 # a_mpiexec is read by run.sh
measure() {
    [ "$(id -u)" = 0 ] || { echo "bench: run as root (namespaces, raw frames)" >&2; exit 3; }
    # shellcheck source=SCRIPTDIR/../../deps.sh
    . "$top/maint/deps.sh"
    # build: this tree's configure, which makes rawwire (and pme_perf) below
    pme_deps build bench
    local pkgs=()
    [ -x "$tcp_mpicc" ] || pkgs+=(mpich libmpich-dev)
    command -v jq >/dev/null || pkgs+=(jq)
    command -v cc >/dev/null || pkgs+=(build-essential)
    if [ ${#pkgs[@]} -gt 0 ]; then
        say "installing ${pkgs[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
    fi
    pme_version=''
    if [ "$baseline_only" = 1 ]; then
        a_mpicc=$tcp_mpicc a_mpiexec=$tcp_mpiexec la="TCP (A)" lb="TCP (B)"
    else
        check_pme_mpich
        a_mpicc=$pme_prefix/bin/mpicc a_mpiexec=$pme_prefix/bin/mpiexec la=PME lb=TCP
        pme_version=$("$pme_prefix/bin/mpichversion" | awk -F: '/MPICH Version/ {gsub(/[ \t]/, "", $2); print $2}')
    fi
    build_programs

    echo "scenario,impl,rep,bench,size,value,unit,iters,ranks,bytes,wall_s,usr_s,sys_s,cpu_max_s,verify" >"$out/raw.csv"
    echo "scenario,impl,rep,run,status,exit,seconds,datalink_bytes,load,log" >"$out/runs.csv"
    echo "scenario,rep,test,value,unit" >"$out/floor.csv"
    machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo), Debian $(cat /etc/debian_version 2>/dev/null || echo '?'), kernel $(uname -r)"
    started=$(date -u '+%Y-%m-%d %H:%M UTC')
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    ucx_version=$(dpkg-query -W -f '${Version}' libucx0 2>/dev/null || echo unknown)
    tcp_version=$(dpkg-query -W -f '${Version}' mpich 2>/dev/null || echo unknown)
    pme_device=$(default_device)
    say "output: $out"

    local si rep idx args
    for si in "${!sc_names[@]}"; do
        scenario_load "$si"
        scenario_cluster_up "$si"
        for ((rep = 1; rep <= reps; rep++)); do
            [ "$raw" = 0 ] || run_floor "$rep"
            for idx in "${!sruns[@]}"; do
                read -r -a args <<<"${sruns[idx]}"
                [ -z "$sizes" ] || args=(-s "$sizes" "${args[@]}")
                run_mpi A "$rep" "$idx" "${args[@]}"
                run_mpi B "$rep" "$idx" "${args[@]}"
            done
        done
        reap "$cl"
        if [ "$keep" = 0 ]; then
            "$vc" down --name "$cl" >/dev/null 2>&1 || say "vcluster down $cl failed"
            unset 'clusters[${#clusters[@]}-1]'
        fi
    done
    load1=$(cut -d' ' -f1-3 /proc/loadavg)
    pme_prefix=${pme_prefix/#$HOME/\~}
    declare -p mode la lb reps time_s grace baseline_only pme_version pme_prefix pme_env \
        tcp_env tcp_version ucx_version machine started load0 load1 command_line sc_names \
        pme_device >"$out/meta"
}

# default_device: the device PME's ranks use, as PME_DEVICE=auto chooses it (pme_core's
# dev.c): the kernel driver's when /dev/pme can be opened, else the raw-frame ring; or
# the one --pme-env names.
default_device() {
    local v
    for v in "${pme_env[@]}"; do
        case $v in PME_DEVICE=*) echo "${v#PME_DEVICE=} (PME_DEVICE)" && return ;; esac
    done
    if [ -c /dev/pme ] && [ -r /dev/pme ] && [ -w /dev/pme ]; then
        echo "kernel (/dev/pme, the default where the driver is loaded)"
    else
        echo "ring (the default without /dev/pme)"
    fi
}

# check_pme_mpich: pme_prefix = an installed MPICH with the ch4:pme device: the one
# given, else maint/build-mpich's (built first when it is not there), or exit 1.
check_pme_mpich() {
    if [ -z "$pme_prefix" ]; then
        pme_prefix=$("$top/maint/build-mpich" --print-prefix)
        if [ ! -x "$pme_prefix/bin/mpicc" ]; then
            say "building PME's MPICH (maint/build-mpich; the first time takes about 15 minutes)"
            "$top/maint/build-mpich" -q >&2
        fi
    fi
    [ -x "$pme_prefix/bin/mpicc" ] || die "no $pme_prefix/bin/mpicc: build PME's MPICH with maint/build-mpich, give --pme-prefix, or use --baseline-only"
    "$pme_prefix/bin/mpichversion" 2>/dev/null | grep -q 'ch4:pme' ||
        die "$pme_prefix is not an MPICH with the ch4:pme device (mpichversion)"
}

# build_programs: work/A/mpibench and work/B/mpibench (the same sources, test/perf,
# built with each side's mpicc), then build_pme_core's.
build_programs() {
    say "building the benchmarks with $a_mpicc and $tcp_mpicc"
    mkdir -p "$work/A" "$work/B"
    # (GCC 12 warns about MPI_STATUSES_IGNORE with MPICH's headers: the compiler's output
    # is kept in the logs and shown only when a build fails)
    build_logged "$logs/build-A.log" "$a_mpicc" -O2 -o "$work/A/mpibench" "$top"/test/perf/*.c
    build_logged "$logs/build-B.log" "$tcp_mpicc" -O2 -o "$work/B/mpibench" "$top"/test/perf/*.c
    build_pme_core
}

# build_pme_core: from this tree, in a private directory so that a developer's ./build
# is left alone, work/rawwire (maint/lib/rawwire, the floor's raw-frame and TCP
# references, as Makefile.am builds it) and, but with --baseline-only, work/pme_perf,
# pme_core's own benchmark (the pme_core the MPI side is built with: maint/build-mpich
# takes it from the same tree), with a job secret for it, since MPI jobs authenticate
# their frames (PME_AUTH=mac).
build_pme_core() {
    local b=$work/pmecore targets=maint/lib/rawwire
    [ "$baseline_only" = 1 ] || targets="$targets src/tools/pme_perf"
    (cd "$top" && { [ -f configure ] || ./autogen.sh >/dev/null 2>&1; })
    mkdir -p "$b"
    build_logged "$logs/build-pme_core.log" sh -c "cd '$b' && { [ -f Makefile ] || '$top/configure' -q; } && make -s -j$(nproc) $targets"
    ln -sf "$b/maint/lib/rawwire" "$work/rawwire"
    [ "$baseline_only" = 0 ] || return 0
    ln -sf "$b/src/tools/pme_perf" "$work/pme_perf"
    (umask 077 && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/secret")
}

build_logged() { # log compiler args...
    local log=$1
    shift
    "$@" >"$log" 2>&1 || { cat "$log" >&2; die "build failed: $*"; }
}
