#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-mpich-other.sh - CI subset of MPICH's own test suite over ch4:pme, groups comm, group,
# datatype, attr, info, init, errhan, topo and rma (test/mpi/ci-tests.txt), on a 4-node
# virtual cluster. Every test must pass; the exclusion list test/mpi/exclude.txt names
# known failures with their reasons.
# pme-test: tier=default cpu=170 time=72 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_cluster_name nmoth
"$pme_repo/maint/mpich-tests" --impl pme --set ci \
    --groups "comm group datatype attr info init errhan topo rma" --name "$REPLY"
