# SPDX-License-Identifier: BSD-3-Clause
# faults-lib.sh - what the MPI tests under injected faults share (t-faults.sh,
# t-faults-suite.sh): the kinds of fault, the injector's counters, and the CI subset of
# MPICH's suite under a fault. Sourced after lib.sh.

# pme_faults_begin: what every such test needs first: root, the injector (faultctl,
# faults, seed), MPICH with ch4:pme, and a work directory (work).
pme_faults_begin() {
    pme_require_root
    faultctl=${builddir:-$pme_repo/build}/src/bpf/pme_faultctl
    [ -x "$faultctl" ] || pme_fail "$faultctl is not built: the BPF parts need clang, libbpf-dev and bpftool (apt-get install clang libbpf-dev bpftool), then configure and make again"
    export PME_FAULTCTL=$faultctl
    faults=$pme_repo/maint/faults
    # The full tier's runs repeat with a fixed seed; the default tier's sample rotates
    # (test/mpi/t-faults-suite.sh), its seed printed.
    if [ -n "${PME_FAULT_SEED:-}" ]; then seed=$PME_FAULT_SEED
    elif [ "${PME_TEST_FULL:-0}" = 1 ]; then seed=2024
    else seed=$((RANDOM * 32768 + RANDOM)); fi
    pme_need_mpich
    pme_tmpdir; work=$REPLY
}
kinds=(drop=1% dup=1% corrupt=0.5% delay=5%:1ms reorder=2%:1ms)
counter_of() {
    case $1 in
    drop=*) echo dropped ;; dup=*) echo duplicated ;; corrupt=*) echo corrupted ;;
    delay=*) echo delayed ;; reorder=*) echo reordered ;;
    esac
}
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

# suite_under LABEL "GROUP..." SETTINGS...: those groups' lines of the CI subset
# (maint/mpich-tests --set loss: without the lines marked noloss) with those faults;
# with sample=N in its environment, N of those lines picked by the seed.
# mpich-tests brings its own cluster up, so the faults go on as soon as that cluster is
# complete, while the suite's first test is still being compiled; the counters at the
# end show they were there.
suite_under() {
    local label=$1 groups=$2 name totals rc=0 k i start=$SECONDS
    shift 2
    pme_cluster_name nmfs; name=$REPLY
    pme_clusters+=("$name")
    mkdir -p "$work/suite"
    "$pme_repo/maint/mpich-tests" --impl pme --set loss --groups "$groups" --name "$name" \
        --timeout 300 --keep --results "$work/suite" ${sample:+--sample "$sample" --seed "$seed"} \
        >"$work/suite.out" 2>&1 &
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
    [ "$rc" = 0 ] || pme_fail "MPICH's tests ($groups) failed under $label"
    totals=$("$faults" totals --name "$name")
    for k in "$@"; do
        [ "$(kv "$(counter_of "$k")" "$totals")" -gt 0 ] ||
            pme_fail "the suite under $label: the injector did not act ($totals)"
    done
    echo "MPICH's tests ($groups) pass under $label in $((SECONDS - start)) s (injector: $totals)"
    "$pme_vc" down --name "$name" >/dev/null
}

