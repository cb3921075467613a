#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-slurm.sh - MPI over ch4:pme launched by Slurm instead of hydra, on a 4-node virtual
# cluster with Slurm (vcluster up --slurm: munge, a slurmctld, a slurmd per node):
#   - srun --mpi=pmi2 -N 4 -n 8 cpi (--mpi=pmix when this MPICH was built with PMIx,
#     which then has no PMI-1 client): pi, two processes on each node; pme_whoami: every
#     rank on ch4:pme with PME traffic; a ping-pong checked byte for byte between two
#     nodes. No secret file is given: the job secret and the business cards can only
#     have come through Slurm's PMI;
#   - sbatch with a script of two job steps (cpi, then the ping-pong), waited for;
#   - two jobs at once on the same nodes: both correct, and a capture on the switch sees
#     frames of exactly two jobs (two job ids, each a function of its job's secret) whose
#     times overlap;
#   - vcluster down stops every daemon and leaves nothing of Slurm behind.
# pme-test: tier=default cpu=130 time=25 needs=mpich
# "a && b || fail" is the idiom of the checks here:
# shellcheck disable=SC2015
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pme_require_root
pme_need_mpich
command -v tcpdump >/dev/null || apt-get install -y -q --no-install-recommends tcpdump >/dev/null 2>&1 ||
    pme_skip "needs tcpdump"
pme_tmpdir; work=$REPLY
pme_compile "$work/cpi" "$("$pme_repo/maint/build-mpich" --print-srcdir)/examples/cpi.c" -lm
pme_compile "$work/pingpong" "$pme_repo/test/mpi/pingpong.c"
pme_compile "$work/whoami" "$pme_repo/test/mpi/pme_whoami.c"
pme_cluster_name nmslurm; name=$REPLY
unset PME_JOB_SECRET_FILE PME_JOB_KEY
pme_cluster_up "$name" --nodes 4 --slurm
dir=/run/vcluster/$name
cd "$work" || pme_fail "cannot cd to $work"

# vc_srun ARGS...: srun on the cluster, killed after 120 s.
vc_srun() { timeout -k 5 120 "$pme_vc" srun --name "$name" -- "$@"; }
# The PMI this MPICH speaks: MPICH's own client (PMI-1, which Slurm's pmi2 plugin
# serves), unless it was configured for PMIx.
mpi=pmi2
if "$PME_PREFIX/bin/mpichversion" | grep -q -- '--with-pmi=pmix'; then mpi=pmix; fi

# 1. cpi, whoami and a checked ping-pong under srun.
out=$work/out
vc_srun --mpi=$mpi -N 4 -n 8 ./cpi >"$out" 2>&1 || { cat "$out"; pme_fail "srun cpi failed"; }
grep -q '^pi is approximately 3.14159' "$out" || { cat "$out"; pme_fail "cpi printed no pi"; }
per_node=$(sed -n 's/^Process [0-9]* of 8 is on //p' "$out" | sort | uniq -c | awk '{print $1}' | sort -u)
[ "$per_node" = 2 ] && [ "$(sed -n 's/^Process [0-9]* of 8 is on //p' "$out" | sort -u | wc -l)" = 4 ] ||
    { cat "$out"; pme_fail "cpi's 8 processes are not 2 on each of 4 nodes"; }
echo "ok   srun --mpi=$mpi -N 4 -n 8 cpi: $(grep '^pi is' "$out")"
vc_srun --mpi=$mpi -N 4 -n 8 ./whoami --expect-pme >"$out" 2>&1 ||
    { cat "$out"; pme_fail "srun pme_whoami failed"; }
[ "$(grep -c 'MPI device ch4:pme, PME interface eth0' "$out")" = 8 ] ||
    { cat "$out"; pme_fail "not every rank reports ch4:pme on eth0"; }
echo "ok   every rank on ch4:pme with PME traffic"
vc_srun --mpi=$mpi -N 2 -n 2 ./pingpong -n 5 -max 1048576 >"$out" 2>&1 ||
    { cat "$out"; pme_fail "srun pingpong failed"; }
grep -q "^pingpong: rank 0 on $name-n0 <-> rank 1 on $name-n1" "$out" && grep -q '^pingpong: OK' "$out" ||
    { cat "$out"; pme_fail "the ping-pong did not run between two nodes, checked"; }
echo "ok   a ping-pong between two nodes, up to 1 MiB, every byte checked"

# 2. sbatch: one job, two steps.
cat >"$work/job.sh" <<EOF
#!/bin/bash
#SBATCH -N 4
#SBATCH -n 8
srun --mpi=$mpi ./cpi
srun --mpi=$mpi -N 2 -n 2 ./pingpong -n 5 -max 65536
EOF
timeout -k 5 120 "$pme_vc" sbatch --name "$name" -- --wait -o "$work/batch.out" "$work/job.sh" >"$out" 2>&1 ||
    { cat "$out" "$work/batch.out"; pme_fail "sbatch --wait failed"; }
grep -q '^pi is approximately 3.14159' "$work/batch.out" && grep -q '^pingpong: OK' "$work/batch.out" ||
    { cat "$work/batch.out"; pme_fail "the batch job's two steps did not both succeed"; }
echo "ok   sbatch: a script with two job steps (cpi, ping-pong) ran both"

# 3. Two jobs at once on the same four nodes, captured at node 0's switch port. Every
# rank waits at a gate until all 16 have arrived, so the two jobs' MPI runs overlap.
cap=$work/cap.pcap
mkdir "$work/gate"
cat >"$work/gate.sh" <<'EOF'
#!/bin/sh
touch "$GATE/$SLURM_JOB_ID.$SLURM_PROCID"
i=0
while [ "$(ls "$GATE" | wc -l)" -lt 16 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
exec "$@"
EOF
chmod 755 "$work/gate.sh"
ip netns exec "$name-sw" tcpdump -i n0r0 -p -s 128 -B 16384 --immediate-mode -U -w "$cap" \
    ether proto 0x88b5 2>"$work/cap.log" &
cap_pid=$!
for _ in $(seq 100); do grep -q 'listening on' "$work/cap.log" && break; sleep 0.05; done
export GATE=$work/gate
vc_srun --mpi=$mpi -N 4 -n 8 ./gate.sh ./pingpong -n 20 -max 262144 >"$work/a.out" 2>&1 &
a=$!
vc_srun --mpi=$mpi -N 4 -n 8 ./gate.sh ./pingpong -n 20 -max 262144 >"$work/b.out" 2>&1 &
b=$!
ra=0 rb=0
wait "$a" || ra=$?
wait "$b" || rb=$?
kill -INT "$cap_pid" 2>/dev/null
wait "$cap_pid" 2>/dev/null
[ $ra = 0 ] && [ $rb = 0 ] && grep -q '^pingpong: OK' "$work/a.out" && grep -q '^pingpong: OK' "$work/b.out" ||
    { cat "$work/a.out" "$work/b.out"; pme_fail "concurrent jobs: exits $ra and $rb"; }
# Each frame's job id (bytes 34-37: the PME header's offset 20 after 14 of Ethernet),
# with its time: the first and last frame of each job.
tcpdump -r "$cap" -nn -tt -xx 2>/dev/null | awk '
    /^[0-9]/ { t = $1 }
    $1 == "0x0020:" { id = $3 $4; if (!(id in first)) first[id] = t; last[id] = t }
    END { for (id in first) print id, first[id], last[id] }' >"$work/jobs"
[ "$(wc -l <"$work/jobs")" = 2 ] ||
    { cat "$work/jobs"; pme_fail "the capture shows $(wc -l <"$work/jobs") job ids, not 2"; }
read -r ida fa la idb fb lb <<<"$(tr '\n' ' ' <"$work/jobs")"
awk -v fa="$fa" -v la="$la" -v fb="$fb" -v lb="$lb" 'BEGIN { exit !(fa < lb && fb < la) }' ||
    { cat "$work/jobs"; pme_fail "the two jobs did not run at the same time"; }
echo "ok   two jobs at once on the same nodes: both correct, job ids $ida and $idb on the wire, overlapping"

# 4. down leaves no daemon, file or directory behind.
"$pme_vc" down --name "$name" >/dev/null || pme_fail "vcluster down failed"
left=$(pgrep -af -- "$dir/" || true)
[ -z "$left" ] && [ ! -e "$dir" ] || pme_fail "after down: processes $left, directory $(ls -d "$dir" 2>/dev/null)"
echo "ok   vcluster down stopped munged, slurmctld and the slurmds and removed their files"
echo "t-slurm: OK"
