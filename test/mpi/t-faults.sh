#!/bin/bash
# t-faults.sh - MPI over ch4:pme on a 4-node switched cluster whose data links drop,
# duplicate, corrupt, delay and reorder PME's frames (maint/faults, the eBPF fault
# injector): under each kind of fault a checked ping-pong from 0 bytes to 4 MiB (ranks
# on different nodes) completes with correct data; the injector's counters show that
# the faults happened. With PME_TEST_FULL=1 the pt2pt and coll lines of the CI subset of
# MPICH's test suite run too, with every kind at once and then under each kind alone
# (not by default: with every kind at once they took 390 s on a loaded 2-core machine,
# on top of about 150 s of ping-pongs, beyond CI's budget). The seed is fixed
# (PME_FAULT_SEED overrides).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
faultctl=${builddir:-$pme_repo/build}/src/bpf/pme_faultctl
[ -x "$faultctl" ] || pme_fail "$faultctl is not built: the BPF parts need clang, libbpf-dev and bpftool (apt-get install clang libbpf-dev bpftool), then configure and make again"
export PME_FAULTCTL=$faultctl
faults=$pme_repo/maint/faults
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/pingpong" "$pme_repo/test/mpi/pingpong.c"
seed=${PME_FAULT_SEED:-2024}
kinds=(drop=1% dup=1% corrupt=0.5% delay=5%:1ms reorder=2%:1ms)
counter_of() {
    case $1 in
    drop=*) echo dropped ;; dup=*) echo duplicated ;; corrupt=*) echo corrupted ;;
    delay=*) echo delayed ;; reorder=*) echo reordered ;;
    esac
}
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

# pingpong_under KIND: the checked ping-pong with that fault on every data link.
pingpong_under() {
    local kind=$1 name out totals n
    pme_cluster_name "nmf$(counter_of "$kind" | cut -c1-2)"; name=$REPLY
    pme_cluster_up "$name"
    "$faults" apply --name "$name" clear reset "$kind" "seed=$seed" >/dev/null ||
        pme_fail "maint/faults apply $kind failed"
    out=$work/pingpong.$kind.out
    PME_MPIEXEC_TIMEOUT=300 pme_mpiexec "$name" -n 2 -ppn 1 "$work/pingpong" -n 20 >"$out" 2>&1 ||
        { cat "$out"; pme_fail "pingpong under $kind failed"; }
    grep -q '^pingpong: OK' "$out" || { cat "$out"; pme_fail "pingpong under $kind: no OK"; }
    totals=$("$faults" totals --name "$name")
    n=$(kv "$(counter_of "$kind")" "$totals")
    [ "${n:-0}" -gt 0 ] || pme_fail "pingpong under $kind: the injector did nothing ($totals)"
    echo "pingpong 0 B to 4 MiB under $kind: data intact ($(counter_of "$kind") $n frames)"
    "$pme_vc" down --name "$name" >/dev/null
}

# suite_under LABEL SETTINGS...: the pt2pt and coll lines of the CI subset (maint/mpich-tests
# --set loss) with those faults. mpich-tests brings its own cluster up, so the faults go
# on as soon as that cluster is complete, while the suite's first test is still being
# compiled; the counters at the end show they were there.
suite_under() {
    local label=$1 name totals rc=0 k i
    shift
    pme_cluster_name nmfs; name=$REPLY
    pme_clusters+=("$name")
    mkdir -p "$work/suite"
    "$pme_repo/maint/mpich-tests" --impl pme --set loss --name "$name" --timeout 300 --keep \
        --results "$work/suite" >"$work/suite.out" 2>&1 &
    local suite=$!
    for ((i = 0; i < 1200; i++)); do
        "$pme_vc" describe --name "$name" --tsv >/dev/null 2>&1 && break
        kill -0 "$suite" 2>/dev/null || break
        sleep 0.05
    done
    "$faults" apply --name "$name" clear reset "$@" "seed=$seed" >/dev/null ||
        { kill "$suite" 2>/dev/null; cat "$work/suite.out"; pme_fail "maint/faults apply on the suite's cluster failed"; }
    wait "$suite" || rc=$?
    cat "$work/suite.out"
    [ "$rc" = 0 ] || pme_fail "MPICH's pt2pt and coll tests failed under $label"
    totals=$("$faults" totals --name "$name")
    for k in "$@"; do
        [ "$(kv "$(counter_of "$k")" "$totals")" -gt 0 ] ||
            pme_fail "the suite under $label: the injector did not act ($totals)"
    done
    echo "MPICH's pt2pt and coll tests pass under $label (injector: $totals)"
    "$pme_vc" down --name "$name" >/dev/null
}

for kind in "${kinds[@]}"; do pingpong_under "$kind"; done
if [ "${PME_TEST_FULL:-0}" = 1 ]; then
    suite_under "every kind at once" "${kinds[@]}"
    for kind in "${kinds[@]}"; do suite_under "$kind" "$kind"; done
fi
