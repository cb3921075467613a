#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-spawn.sh - dynamic processes over ch4:pme: MPI_Comm_spawn of 4 children from 4
# parents on a 4-node virtual cluster (children land on the parents' nodes, so the test
# covers PME between processes of one node too), point-to-point and collectives across
# the intercommunicator, MPI_Intercomm_merge and MPI_Comm_disconnect. Parents and children
# are two PMI jobs, which authenticate their frames under one secret only when mpiexec
# gives them one (PME_JOB_SECRET_FILE); without it, the children's MPI_Init fails at once
# and says so.
# pme-test: tier=default cpu=90 time=7 needs=mpich
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
pme_tmpdir; work=$REPLY
pme_compile "$work/pme_spawn" "$pme_repo/test/mpi/pme_spawn.c"
pme_cluster_name nmspwn; name=$REPLY
pme_cluster_up "$name" --nodes 4
out=$work/out
rc=0
PME_MPIEXEC_TIMEOUT=90 pme_mpiexec "$name" -n 4 -ppn 1 "$work/pme_spawn" 4 >"$out" 2>&1 || rc=$?
{ [ $rc != 0 ] && [ $rc != 124 ] && grep -q 'PME_JOB_SECRET_FILE' "$out"; } ||
    { cat "$out"; pme_fail "without a shared secret the spawn should fail, naming PME_JOB_SECRET_FILE (exit $rc)"; }
echo "ok   without a shared secret, the spawned children fail MPI_Init naming PME_JOB_SECRET_FILE"
secret=$work/secret
(umask 077 && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$secret")
PME_MPIEXEC_TIMEOUT=120 pme_mpiexec "$name" -n 4 -ppn 1 -genv PME_JOB_SECRET_FILE "$secret" \
    "$work/pme_spawn" 4 >"$out" 2>&1 ||
    { cat "$out"; pme_fail "pme_spawn failed"; }
cat "$out"
grep -q '^pme_spawn: OK' "$out" || pme_fail "no 'pme_spawn: OK'"
[ "$(grep -c '^pme_spawn: child .*: ok' "$out")" = 4 ] || pme_fail "not every child reported ok"
# Every child shares its node with a parent: that is what makes this a same-node test.
hosts() { sed -n "s/^pme_spawn: $1 [0-9]* of [0-9]* on \([^:]*\): .*/\1/p" "$out" | sort -u; }
[ -n "$(hosts child)" ] && [ -z "$(comm -13 <(hosts parent) <(hosts child))" ] ||
    pme_fail "some child ran on a node without a parent: children on $(hosts child | tr '\n' ' ')"
