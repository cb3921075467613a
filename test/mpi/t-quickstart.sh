#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-quickstart.sh - the README's quick start: maint/quickstart builds MPICH with ch4:pme
# (or reuses the build), brings up 4 virtual nodes and runs pme_whoami, MPICH's
# examples/cpi and a ping-pong with 8 ranks, 2 per node. Checks what a user would look
# at: every rank reports the device ch4:pme and PME traffic, cpi prints pi and where its
# 8 processes ran (4 different nodes), the ping-pong data is intact.
# pme-test: tier=default cpu=120 time=11 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_tmpdir; work=$REPLY
pme_cluster_name nmqs; name=$REPLY
pme_clusters+=("$name")
out=$work/out
# MPICH is already built here (maint/test builds it first); run-tests stops a test at 600 s.
timeout -k 5 540 "$pme_repo/maint/quickstart" --name "$name" >"$out" 2>&1 ||
    { tail -60 "$out"; pme_fail "maint/quickstart failed"; }
cat "$out"
[ "$(grep -c 'MPI device ch4:pme, PME interface eth0' "$out")" = 8 ] ||
    pme_fail "not all 8 ranks report ch4:pme on eth0"
grep -q '^pme_whoami: OK' "$out" || pme_fail "pme_whoami did not succeed"
grep -q '^pi is approximately 3.14159' "$out" || pme_fail "cpi printed no pi"
[ "$(grep -o 'Process [0-9] of 8 is on [a-z0-9-]*' "$out" | awk '{print $NF}' | sort -u | wc -l)" = 4 ] ||
    pme_fail "cpi's 8 processes did not run on 4 nodes"
grep -q '^pingpong: OK' "$out" || pme_fail "pingpong did not succeed"
grep -q '^quickstart: OK' "$out" || pme_fail "no 'quickstart: OK'"
