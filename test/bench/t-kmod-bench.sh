#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/kmod-bench without measuring (no root, no guest): its command line (--help, an
# unknown option), and its tables (maint/lib/tables/kmod-bench.sh) on made-up
# measurements: medians over the runs to 4 significant digits, ratios taken run by run
# (runs where either side failed, "-", left out) and their median, "-" where no run is
# left, an empty cell where a row has no TCP figure. Every expected number is worked
# out by hand.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=1
. "$(dirname "$0")/lib.sh"

check_cli kmod-bench "maint/kmod-bench [--runs R] [--iters N] [--markdown FILE]"

# shellcheck source=maint/lib/stats.sh
. "$top/maint/lib/stats.sh"
# shellcheck source=maint/lib/tables/kmod-bench.sh
. "$top/maint/lib/tables/kmod-bench.sh"
# shellcheck disable=SC2034 # read by the tables
declare -A vals
# shellcheck disable=SC2034
runs=3
vals[pp_kernel_spin]=" 10 11 12" vals[pp_ring_spin]=" 20 20 24" vals[pp_tcp_spin]=" 40 - 48"
vals[pp_kernel_block]=" 30 100 50" vals[pp_ring_block]=" 60 - 100" vals[pp_tcp_block]=" 90 100 110"
vals[bw_kernel]=" 1000 1200 900" vals[bw_ring]=" 800 1000 1000"
vals[cpu_kernel]=" 0.5 0.6 0.7" vals[cpu_kcopy]=" 1 1.2 1.4" vals[cpu_ring]=" 1.5 1.5 1.5" vals[cpu_tcp]=" - - -"
# spin: 11, 20, (40 + 48) / 2; kernel/ring 0.5 0.55 0.5, kernel/TCP 0.25 - 0.25.
# block: 50, (60 + 100) / 2, 100; kernel/ring 0.5 - 0.5, kernel/TCP 0.333 1 0.455.
# stream: 1000, 1000; 1.25 1.2 0.9. CPU: 0.6, 1.5, no TCP; kernel/ring 0.333 0.4
# 0.467; zero copy/copying 0.5 0.5 0.5.
same "$(kmod_table)" \
"kmod-bench: 3 runs in a TCG guest, veth MTU 9000 (ratios only mean anything)

| measure | kernel | ring | TCP | kernel/ring | kernel/TCP |
|---|---|---|---|---|---|
| 8 B half round trip, spin (us) | 11 | 20 | 44 | 0.50 | 0.25 |
| 8 B half round trip, block (us) | 50 | 80 | 100 | 0.50 | 0.45 |
| 1 MiB stream (MB/s) | 1000 | 1000 |  | 1.20 |  |
| CPU s per GB, 4 MiB stream | 0.6 | 1.5 | - | 0.40 | - |

| CPU s per GB, 4 MiB stream | kernel, zero copy | kernel, copying | ring | TCP | zero copy/copying | zero copy/TCP |
|---|---|---|---|---|---|---|
| both processes | 0.6 | 1.2 | 1.5 | - | 0.50 | - |" "kmod-bench's tables"
say "ok: kmod-bench's tables: medians, ratios run by run, '-' where no run is left"
