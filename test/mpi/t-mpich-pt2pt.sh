#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-mpich-pt2pt.sh - CI subset of MPICH's own test suite over ch4:pme, groups basic,
# pt2pt and coll (test/mpi/ci-tests.txt), on a 4-node virtual cluster with ranks spread
# over the nodes (2 per node for 8-rank tests). Every test must pass; the exclusion list
# test/mpi/exclude.txt names known failures with their reasons.
# pme-test: tier=default cpu=150 time=87 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_cluster_name nmp2p
"$pme_repo/maint/mpich-tests" --impl pme --set ci --groups "basic pt2pt coll" --name "$REPLY"
