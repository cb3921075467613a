#!/bin/bash
# t-faults-suite.sh - the CI subset of MPICH's test suite (test/mpi/ci-tests.txt, without
# the lines marked noloss) over ch4:pme on a 4-node switched cluster whose data links
# suffer injected faults (maint/faults: drop 1%, duplicate 1%, corrupt 0.5%, delay 5% of
# frames by 1 ms, reorder 2% by 1 ms): the groups whose tests move most data between
# nodes (pt2pt, coll, rma) under each kind alone, then the other groups (basic, comm,
# group, datatype, attr, info, init, errhan, topo) under every kind at once. Every test
# passes, and the injector's counters show that each kind acted. With PME_TEST_FULL=1
# the whole subset runs under every kind at once as well. The seed is fixed
# (PME_FAULT_SEED overrides).
# pme-test-timeout: 1200
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faults-lib.sh"
pme_faults_begin

data="pt2pt coll rma"
rest="basic comm group datatype attr info init errhan topo"
for kind in "${kinds[@]}"; do suite_under "$kind" "$data" "$kind"; done
if [ "${PME_TEST_FULL:-0}" = 1 ]; then
    suite_under "every kind at once" "$data $rest" "${kinds[@]}"
else
    suite_under "every kind at once" "$rest" "${kinds[@]}"
fi
