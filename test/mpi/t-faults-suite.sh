#!/bin/bash
# t-faults-suite.sh - the pt2pt and coll lines of the CI subset of MPICH's test suite
# (maint/mpich-tests --set loss) over ch4:pme on a 4-node switched cluster whose data
# links suffer one kind of fault at a time (maint/faults: drop 1%, duplicate 1%, corrupt
# 0.5%, delay 5% of frames by 1 ms, reorder 2% by 1 ms): every test passes under each,
# and the injector's counters show that it acted. With PME_TEST_FULL=1 once more with
# every kind at once. About a minute and a half per kind on an idle 2-core machine.
# The seed is fixed (PME_FAULT_SEED overrides).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faults-lib.sh"
pme_faults_begin

for kind in "${kinds[@]}"; do suite_under "$kind" "$kind"; done
if [ "${PME_TEST_FULL:-0}" = 1 ]; then
    suite_under "every kind at once" "${kinds[@]}"
fi
