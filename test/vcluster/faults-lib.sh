# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# faults-lib.sh - what the fault-injection tests share (sourced after lib.sh by
# test/vcluster/t-faults*.sh): the BPF half of maint/faults must be built, and the
# probes and checkers are compiled into the test's scratch directory.
export FAULTS=$VC_SRCDIR/maint/faults

# faults_init: PME_FAULTCTL for maint/faults (the build's, never a stale one elsewhere).
faults_init() {
    local c=${builddir:-$VC_SRCDIR/build}/src/bpf/pme_faultctl
    [ -x "$c" ] || fail "$c is not built: the BPF parts need clang, libbpf-dev and bpftool (apt-get install clang libbpf-dev bpftool), then configure and make again"
    export PME_FAULTCTL=$c
}

# faults_build NAME: compile test/vcluster/NAME.c into $TMPD/NAME.
faults_build() {
    cc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$TMPD/$1" "$VC_SRCDIR/test/vcluster/$1.c" ||
        fail "cannot build test/vcluster/$1.c"
}

# kv KEY TEXT: the value of KEY=VALUE in TEXT.
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -1; }

# between X LO HI: LO <= X <= HI (numbers, possibly fractional).
between() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

# vc_bg NAME NODE CMD...: run CMD inside a node in the background, registered for
# cleanup; BGPID = CMD's own process (vcluster exec replaces itself with nsenter, which
# replaces itself with CMD), so killing BGPID stops CMD. "vc_in ... &" would fork a
# subshell for the function: killing that subshell's pid leaves CMD running.
vc_bg() {
    local n=$1 node=$2
    shift 2
    "$VC" exec --name "$n" "$node" "$@" &
    BGPID=$!
    VC_BGPIDS+=("$BGPID")
}

# vc_serve NAME NODE PROGRAM ARGS...: start a server (pme_perf, pme_once) in node NODE
# (a number) of cluster NAME that writes its address to a file; returns once it has.
# SERVER = its pid, ADDR = the address; its output goes to $TMPD/server.out.
vc_serve() {
    local n=$1 node=$2
    shift 2
    rm -f "$TMPD/addr"
    vc_bg "$n" "$n-n$node" "$@" --addr-file "$TMPD/addr" >"$TMPD/server.out" 2>&1
    SERVER=$BGPID
    for ((i = 0; i < 100; i++)); do
        [ -s "$TMPD/addr" ] && break
        kill -0 "$SERVER" 2>/dev/null || { cat "$TMPD/server.out"; fail "$1 did not start"; }
        sleep 0.05
    done
    [ -s "$TMPD/addr" ] || fail "$1 wrote no address in 5 s"
    ADDR=$(cat "$TMPD/addr")
}
