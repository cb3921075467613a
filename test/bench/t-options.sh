#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/bench's command line, without root and without running anything: the settings
# and scenarios each mode gives (maint/lib/bench/options.sh and scenarios.sh, called
# directly: the defaults, --quick, --full, a custom scenario whose --bench list becomes
# one run per kind of benchmark), and through maint/bench itself: --help prints the
# manual at the top of the script, bad usage exits 2 with the reason, a --report-only
# directory without measurements exits 1.
# shellcheck source=test/bench/lib.sh
# pme-test: tier=default cpu=100 time=1
. "$(dirname "$0")/lib.sh"

# plan ARGS...: the settings and the scenario table maint/bench makes of ARGS, as
# "name=value" lines (a fresh shell each time: the parts keep their state in globals).
plan() {
    # shellcheck disable=SC2016 # expanded by the inner shell
    top=$top bash -c '
        set -euo pipefail
        usage() { echo usage; }
        . "$top/maint/lib/bench/options.sh"
        . "$top/maint/lib/bench/scenarios.sh"
        parse_options "$@"
        check_options
        plan_scenarios
        echo "mode=$mode reps=$reps time_s=$time_s warm=$warm ppiters=$ppiters out=$out"
        echo "raw=$raw plots=$plots keep=$keep baseline_only=$baseline_only sizes=$sizes grace=$grace timeout=$timeout_s"
        echo "pme_env=${pme_env[*]} tcp_env=${tcp_env[*]}"
        for i in "${!sc_names[@]}"; do
            echo "scenario=${sc_names[i]} nodes=${sc_nodes[i]} topology=${sc_topo[i]} ppn=${sc_ppn[i]} mtu=${sc_mtu[i]} rate=${sc_rate[i]} loss=${sc_loss[i]} env=${sc_aenv[i]} runs=${sc_runs[i]}"
        done' plan "$@"
}

# expect WANT ARGS...: plan ARGS gives exactly WANT.
expect() {
    local want=$1 got
    shift
    got=$(plan "$@") || fail "plan $*: exit $?"
    [ "$got" = "$want" ] || fail "maint/bench $*:
got:
$got
want:
$want"
}

expect "mode=custom reps=3 time_s=0.3 warm=0.1 ppiters=20000 out=
raw=1 plots=1 keep=0 baseline_only=0 sizes= grace=10 timeout=
pme_env= tcp_env=
scenario=custom nodes=2 topology=switch ppn=1 mtu=9000 rate= loss= env= runs=pingpong bw"
say "ok: the defaults: one custom scenario, 2 nodes, switch, MTU 9000, pingpong and bw, 3 repetitions of 0.3 s"

expect "mode=quick reps=2 time_s=0.2 warm=0.05 ppiters=5000 out=
raw=1 plots=1 keep=0 baseline_only=0 sizes= grace=10 timeout=
pme_env= tcp_env=
scenario=quick nodes=2 topology=switch ppn=1 mtu=9000 rate= loss= env= runs=pingpong@0,8,1k,64k,1m bw@8,1k,64k,1m,4m;halo3d@4,16 isort@1k,64k" \
    --quick
expect "mode=quick reps=5 time_s=0.5 warm=0.05 ppiters=5000 out=/x
raw=0 plots=0 keep=1 baseline_only=1 sizes=8,1k grace=3 timeout=90
pme_env= tcp_env=
scenario=quick nodes=2 topology=switch ppn=1 mtu=9000 rate= loss= env= runs=pingpong@0,8,1k,64k,1m bw@8,1k,64k,1m,4m;halo3d@4,16 isort@1k,64k" \
    --quick --reps 5 --time=0.5 --out /x --no-raw --no-plots --keep --baseline-only --sizes 8,1k --grace 3 --timeout=90
say "ok: --quick, and options over its defaults (--reps, --time=, --out, flags)"

spin=''
[ "$(nproc)" -ge 4 ] || spin="
scenario=nodes4spin nodes=4 topology=switch ppn=1 mtu=9000 rate= loss= env=PME_WAIT=spin runs=pingpong@8;allreduce@8,64k barrier;halo2d@16,64,256 halo3d@4,8,16 wavefront@32;isort@1k,16k,256k"
expect "mode=full reps=3 time_s=0.3 warm=0.1 ppiters=20000 out=$top/doc/perf
raw=1 plots=1 keep=0 baseline_only=0 sizes= grace=10 timeout=
pme_env= tcp_env=
scenario=mtu9000 nodes=2 topology=switch ppn=1 mtu=9000 rate= loss= env= runs=pingpong bw bibw msgrate
scenario=mtu65535 nodes=2 topology=switch ppn=1 mtu=65535 rate= loss= env= runs=pingpong bw bibw
scenario=mtu1500 nodes=2 topology=switch ppn=1 mtu=1500 rate= loss= env= runs=pingpong@0..4m bw@64k,1m,4m bibw@64k,1m,4m msgrate@8
scenario=rate1g nodes=2 topology=switch ppn=1 mtu=9000 rate=1gbit loss= env= runs=pingpong@8,1k,64k bw@1k..4m bibw@1k..4m
scenario=rate10g nodes=2 topology=switch ppn=1 mtu=9000 rate=10gbit loss= env= runs=pingpong@8,1k,64k bw@1k..4m bibw@1k..4m
scenario=nodes4 nodes=4 topology=switch ppn=1 mtu=9000 rate= loss= env= runs=pingpong@8 msgrate@0..64k;allreduce alltoall bcast barrier;halo2d halo3d wavefront;isort@1k..1m transpose
scenario=nodes2 nodes=2 topology=switch ppn=1 mtu=9000 rate= loss= env= runs=alltoall@64k,1m;isort@64k,1m
scenario=nodes2spin nodes=2 topology=switch ppn=1 mtu=9000 rate= loss= env=PME_WAIT=spin runs=alltoall@64k,1m;isort@64k,1m
scenario=rma nodes=2 topology=switch ppn=1 mtu=9000 rate= loss= env= runs=put@8..4m get@8..4m putbw@8..4m getbw@8..4m$spin" \
    --full
say "ok: --full: the scenarios of doc/benchmarks.md into doc/perf (the PME_WAIT=spin control only on fewer than 4 cores: $(nproc) here)"

expect "mode=custom reps=3 time_s=0.3 warm=0.1 ppiters=20000 out=
raw=1 plots=1 keep=0 baseline_only=0 sizes= grace=10 timeout=
pme_env=A=1 B=x=y tcp_env=C=3
scenario=custom nodes=4 topology=torus:2x2 ppn=2 mtu=1500 rate=1gbit loss=1 env= runs=pingpong@8,1k bw;allreduce;isort@1k..64k halo2d" \
    --nodes=4 --topology torus:2x2 --ppn 2 --mtu 1500 --rate 1gbit --loss 1 \
    --bench pingpong@8,1k,bw,isort@1k..64k,allreduce,halo2d --pme-env A=1 --pme-env B=x=y --tcp-env C=3
say "ok: a custom scenario: --bench grouped into point-to-point, collective and application runs; --pme-env/--tcp-env kept"

expect "mode=custom reps=2 time_s=0.2 warm=0.1 ppiters=20000 out=
raw=1 plots=1 keep=0 baseline_only=0 sizes= grace=10 timeout=
pme_env= tcp_env=
scenario=custom nodes=2 topology=switch ppn=1 mtu=9000 rate= loss= env= runs=pingpong@8;put@8,1k get putbw@4m getbw acc@4 epochput epochget epochacc" \
    --bench put@8,1k,get,pingpong@8,putbw@4m,getbw,acc@4,epochput,epochget,epochacc --reps 2 --time 0.2
say "ok: the one-sided benchmarks make a run of their own, after the others"

# through maint/bench: --help, and bad usage
help=$("$top/maint/bench" --help)
grep -q '^usage: maint/bench \[--quick | --full\] \[options\]$' <<<"$help" || fail "--help: no usage line"
grep -q '^  --report-only DIR make summary.csv' <<<"$help" || fail "--help does not explain --report-only"
[ "$(tail -n 1 <<<"$help")" = "Exit status: 0, 1 when a run failed or a result did not verify, 2 bad usage." ] ||
    fail "--help ends with: $(tail -n 1 <<<"$help")"
! grep -q 'set -euo\|^#!' <<<"$help" || fail "--help prints code"

# bad CODE WORDS ARGS...: maint/bench ARGS exits CODE, saying WORDS. Should a check
# let bad usage through, the measurement must not start (it needs root and makes
# clusters): an `id` that answers "not root" stops it first, with exit 3.
mkdir "$tmp/bin"
printf '#!/bin/sh\necho 1000\n' >"$tmp/bin/id"
chmod 755 "$tmp/bin/id"
bad() {
    local want=$1 words=$2 rc=0 err
    shift 2
    err=$(PATH=$tmp/bin:$PATH "$top/maint/bench" "$@" 2>&1 >/dev/null) || rc=$?
    [ "$rc" = "$want" ] || fail "maint/bench $*: exit $rc, expected $want ($err)"
    [[ $err == *"$words"* ]] || fail "maint/bench $*: '$err' does not say '$words'"
}
bad 2 "unknown option --bogus" --bogus
bad 2 "--nodes needs a value" --nodes
bad 2 "--nodes: at least 2" --nodes 1
bad 2 "--ppn wants a number, not 'x'" --ppn x
bad 2 "--ppn: at least 1" --ppn 0
bad 2 "--reps wants a positive number" --reps 0
bad 2 "--timeout wants seconds" --timeout 1.5
bad 2 "--time wants seconds" --time abc
bad 2 "want VAR=VALUE, not 'FOO'" --pme-env FOO
bad 2 "want VAR=VALUE, not '1A=2'" --tcp-env 1A=2
bad 2 "unknown benchmark nope (pingpong bw" --bench pingpong@8,1k,nope
bad 1 "no directory $tmp/none" --report-only "$tmp/none"
mkdir "$tmp/empty"
bad 1 "has no measurements (meta, raw.csv)" --report-only "$tmp/empty"
say "ok: --help prints the manual; bad usage exits 2 with the reason; --report-only without measurements exits 1"
