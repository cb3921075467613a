#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-errors.sh - ch4:pme's failures are clear MPI errors that name the cause and the fix,
# and none of them hangs:
#   1. an interface that does not exist (PME_IFACE=nosuch0);
#   2. an interface that is down (eth0 of one virtual node set down);
#   3. no CAP_NET_RAW (the ranks run as root without it: setpriv --bounding-set=-net_raw);
#   4. a peer that dies (SIGKILL): the survivors get an MPI error naming the dead rank
#      within PME_PEER_TIMEOUT_MS (2000 ms here), and each says so on stderr itself;
#   5. a job mixing two PME wire versions (one rank publishes a business card of the
#      next version through the test-only MPIR_CVAR_CH4_PME_TEST_CARD_VERSION): MPI_Init
#      fails;
#   6. a job mixing two builds of the netmod that share the wire version (rank 0 publishes
#      revision 0, as builds from before the revision did, through the test-only
#      MPIR_CVAR_CH4_PME_TEST_CARD_REVISION): MPI_Init fails instead of hanging later.
# Runs on a 4-node virtual cluster, one rank per node (so that every pair talks over PME).
# pme-test: tier=default cpu=80 time=11 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/whoami" "$pme_repo/test/mpi/pme_whoami.c"
pme_compile "$work/peerdeath" "$pme_repo/test/mpi/pme_peerdeath.c"
pme_cluster_name nmerr; name=$REPLY
pme_cluster_up "$name" --nodes 4

fails=0
out=$work/out
# verdict CASE OK SUMMARY: report a case; a failed one shows the job's output and counts.
verdict() {
    if [ "$2" = 1 ]; then
        echo "ok   $1 $3"
    else
        sed 's/^/    | /' "$out" | head -30
        fails=$((fails + 1))
    fi
}

# expect_failure CASE PATTERN... -- MPIEXEC-ARGS...: the job must end within 60 s with a
# non-zero status and its output must contain every PATTERN (fixed strings), every time
# (rank 0 states the reason of a failed MPI_Init before hydra tears the job down).
expect_failure() {
    local case=$1; shift
    local pats=()
    while [ "$1" != -- ]; do pats+=("$1"); shift; done
    shift
    local start=$SECONDS rc=0
    PME_MPIEXEC_TIMEOUT=60 pme_mpiexec "$name" "$@" >"$out" 2>&1 || rc=$?
    local secs=$((SECONDS - start)) ok=1 p
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        echo "FAIL $case: hung (killed after 60 s)"; ok=0
    elif [ $rc = 0 ]; then
        echo "FAIL $case: the job succeeded"; ok=0
    fi
    for p in "${pats[@]}"; do
        grep -qF -- "$p" "$out" || { echo "FAIL $case: no \"$p\" in the output"; ok=0; }
    done
    verdict "$case" $ok "(exit $rc after ${secs}s): $(grep -m1 -oE 'ch4:pme.*' "$out" | cut -c1-150)"
}

# 1. no such interface
expect_failure "missing interface" \
    "ch4:pme: rank 0 could not start PME on host $name-n0" \
    'interface "nosuch0" does not exist' -- \
    -n 4 -ppn 1 -genv PME_IFACE nosuch0 "$work/whoami"

# 2. interface down on one node: every rank fails, naming rank 1 and its host
"$pme_vc" exec --name "$name" 1 ip link set dev eth0 down
expect_failure "interface down" \
    'interface eth0 is down: bring it up (ip link set dev eth0 up)' \
    "rank 1 could not start PME on host $name-n1" -- \
    -n 4 -ppn 1 "$work/whoami"
"$pme_vc" exec --name "$name" 1 ip link set dev eth0 up

# 3. no CAP_NET_RAW: root without that capability (an unprivileged user could not even
#    read the default install prefix in root's cache directory)
expect_failure "no CAP_NET_RAW" \
    'no permission for raw Ethernet frames on eth0' 'CAP_NET_RAW' -- \
    -n 4 -ppn 1 setpriv --bounding-set=-net_raw "$work/whoami"

# 4. a peer dies: every survivor gets an MPI error within the peer timeout (each has a
#    128 KiB message, a rendezvous above the 68 KiB eager threshold, open with the
#    victim: see pme_peerdeath.c)
start=$SECONDS
rc=0
PME_MPIEXEC_TIMEOUT=90 pme_mpiexec "$name" -disable-auto-cleanup -n 4 -ppn 1 \
    -genv PME_PEER_TIMEOUT_MS 2000 "$work/peerdeath" 2 20 131072 >"$out" 2>&1 || rc=$?
secs=$((SECONDS - start))
ok=1
[ $rc = 124 ] || [ $rc = 137 ] && { echo "FAIL peer death: hung (killed after 90 s)"; ok=0; }
for r in 0 1 3; do
    line=$(grep -m1 "^rank $r: MPI error after" "$out" || true)
    if [ -z "$line" ]; then
        echo "FAIL peer death: rank $r got no MPI error"; ok=0; continue
    fi
    ms=$(echo "$line" | sed -n 's/.*after \([0-9-]*\) ms.*/\1/p')
    # Not before the timeout (1500 ms allows for clock and kill skew), not long after it.
    if ! [[ $ms =~ ^[0-9]+$ ]] || [ "$ms" -lt 1500 ] || [ "$ms" -gt 6000 ]; then
        echo "FAIL peer death: rank $r got its error after ${ms:-?} ms (PME_PEER_TIMEOUT_MS=2000)"; ok=0
    fi
    echo "$line" | grep -q 'rank 2 stopped answering for 2000 ms (PME_PEER_TIMEOUT_MS)' ||
        { echo "FAIL peer death: rank $r's error does not name rank 2 and PME_PEER_TIMEOUT_MS"; ok=0; }
done
# Each survivor also says it on stderr before anything may abort the job (hydra drops
# output still on its way when one process aborts; see MPIDI_PME_say_peer_failure).
for r in 0 1 3; do
    grep -q "^ch4:pme: communication: rank 2 stopped answering for 2000 ms (PME_PEER_TIMEOUT_MS) (seen by rank $r): peer .* did not answer" "$out" ||
        { echo "FAIL peer death: rank $r did not say the failure on stderr"; ok=0; }
done
verdict "peer death" $ok "(${secs}s): $(grep -m1 '^rank 0:' "$out" | cut -c1-200)"

# 5. two PME versions in one job: rank 0 poses as the next version
wire=$(sed -n 's/^#define PME_WIRE_VERSION \([0-9]*\).*/\1/p' "$pme_repo/src/pme_core/pme_wire.h")
[ -n "$wire" ] || pme_fail "no PME_WIRE_VERSION in src/pme_core/pme_wire.h"
expect_failure "mixed PME versions" \
    "rank 1 runs another PME version (wire version pme$wire) than rank 0 (wire version pme$((wire + 1)))" \
    'run every process of the job with the same PME build' -- \
    -ppn 1 -n 1 -env MPIR_CVAR_CH4_PME_TEST_CARD_VERSION $((wire + 1)) "$work/whoami" : -n 3 "$work/whoami"

# 6. two builds of the netmod on the same wire version
expect_failure "mixed netmod builds" \
    'rank 1 runs another build of ch4:pme (netmod revision 1) than rank 0 (netmod revision 0, a build from before revisions)' \
    'run every process of the job with the same PME build' -- \
    -ppn 1 -n 1 -env MPIR_CVAR_CH4_PME_TEST_CARD_REVISION 0 "$work/whoami" : -n 3 "$work/whoami"

[ $fails = 0 ] || { echo "$fails error case(s) failed"; exit 1; }
echo "all error cases give clear MPI errors"
