#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/shmwake-bench without measuring (no root, no cluster, no MPICH): its command
# line (--help, an unknown option), and its three tables
# (maint/lib/tables/shmwake-bench.awk) on made-up results: send to receive (the median
# over the rounds of each run's median and 90th percentile, doorbell against none), the
# polling ping-pong, and the collectives in the order first seen; a ratio is 0 where
# none measured nothing; a table of another name is refused. Every expected number is
# worked out by hand.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=1
. "$(dirname "$0")/lib.sh"

check_cli shmwake-bench "maint/shmwake-bench [--rounds R] [--msgs N] [--gap-us G]"
tables=(-f "$top/maint/lib/median.awk" -f "$top/maint/lib/tables/shmwake-bench.awk")

printf 'doorbell 100 200\nnone 150 300\ndoorbell 110 1.9e2\nnone 140 310\ndoorbell 90 220\n' >"$tmp/results"
# medians 100 of 90 100 110 against (150 + 140) / 2 = 145: 0.690; 90th percentiles 200
# of 190 200 220 against 305: 0.656.
same "$(awk -v table=wake "${tables[@]}" "$tmp/results")" \
"send to receive (us)       doorbell         none   ratio
median                        100.0        145.0   0.690
90th percentile               200.0        305.0   0.656
(ratio: doorbell / none; below 1 the doorbell is faster)" "shmwake-bench's wake table"

printf 'doorbell 3.2\nnone 3.0\ndoorbell 3.4\nnone 2.9\n' >"$tmp/pingpong"
# 3.3 against 2.95: 1.119
same "$(awk -v table=pingpong "${tables[@]}" "$tmp/pingpong")" \
"8 B ping-pong, spin           3.300        2.950   1.119
(half round trip in us of two polling ranks: what the hook costs)" "shmwake-bench's ping-pong table"

printf 'doorbell alltoall@1024 500\nnone alltoall@1024 600\ndoorbell isort@65536 9000\nnone isort@65536 1e4\ndoorbell alltoall@1024 520\ndoorbell allreduce@65536 40\n' >"$tmp/colls"
# alltoall (500 + 520) / 2 against 600; isort 9000 against 10000; allreduce: no none.
same "$(awk -v table=colls "${tables[@]}" "$tmp/colls")" \
"alltoall@1024, 8 ranks        510.0        600.0   0.850
isort@65536, 8 ranks         9000.0      10000.0   0.900
allreduce@65536, 8 ranks         40.0          0.0   0.000
(us per call, 4 ranks on each of 2 nodes, more ranks than the cores, default waiting)" "shmwake-bench's collectives table"
say "ok: shmwake-bench's three tables"

rc=0
awk -v table=nonesuch "${tables[@]}" "$tmp/colls" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q 'table=wake, pingpong or colls' "$tmp/err" || fail "an unknown table: exit $rc, $(cat "$tmp/err")"
say "ok: shmwake-bench.awk refuses a table it does not know"
