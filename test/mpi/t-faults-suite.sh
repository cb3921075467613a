#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-faults-suite.sh - the CI subset of MPICH's test suite (test/mpi/ci-tests.txt, without
# the lines marked noloss) over ch4:pme on a 4-node switched cluster whose data links
# suffer injected faults (maint/faults: drop 1%, duplicate 1%, corrupt 0.5%, delay 5% of
# frames by 1 ms, reorder 2% by 1 ms).
# Default tier: the groups whose tests move most data between nodes (pt2pt, coll, rma),
# 20 of their lines, under one kind of fault, and the other groups (basic, comm, group,
# datatype, attr, info, init, errhan, topo) under every kind at once; the seed picks the
# kind (it rotates from run to run), the lines and the injector's decisions, and is
# printed: PME_FAULT_SEED=N repeats a run. (test/mpi/t-faults.sh runs a ping-pong under
# each kind every time.)
# Full tier (PME_TEST_FULL=1): every line of pt2pt, coll and rma under each kind alone,
# then the whole subset under every kind at once.
# Every test passes, and the injector's counters show that each kind acted.
# pme-test: tier=default cpu=130 time=150 timeout=2400 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faults-lib.sh"
pme_faults_begin

data="pt2pt coll rma"
rest="basic comm group datatype attr info init errhan topo"
if [ "${PME_TEST_FULL:-0}" = 1 ]; then
    for kind in "${kinds[@]}"; do suite_under "$kind" "$data" "$kind"; done
    suite_under "every kind at once" "$data $rest" "${kinds[@]}"
else
    kind=${kinds[$((seed % ${#kinds[@]}))]}
    echo "seed $seed: $kind on 20 lines of $data (PME_FAULT_SEED=$seed repeats this run)"
    sample=20 suite_under "$kind" "$data" "$kind"
    suite_under "every kind at once" "$rest" "${kinds[@]}"
fi
