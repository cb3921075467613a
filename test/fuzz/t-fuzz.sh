#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-fuzz.sh - the fuzzers, for a fixed time: the frame receive path (fuzz_rx, seeded
# with real exchanges recorded by mkcorpus), the netmod's header parser (fuzz_am) and
# the route file's two readers (fuzz_route: pme_core's and the tools'), built with
# clang's libFuzzer, AddressSanitizer and UBSan. Every input that ever crashed them is
# kept under test/fuzz/regress/ and replayed first.
#   PME_FUZZ_SECONDS   time per fuzzer (default 20; 300 in the full tier, PME_TEST_FULL=1)
# pme-test: tier=default cpu=90 time=91
set -euo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${builddir:-$PWD}/fuzz
secs=${PME_FUZZ_SECONDS:-20}
[ "${PME_TEST_FULL:-0}" = 1 ] && secs=${PME_FUZZ_SECONDS:-300}
for tool in clang; do
    command -v "$tool" >/dev/null || { echo "t-fuzz: $tool is missing (maint/deps.sh test installs it)"; exit 1; }
done
mkdir -p "$out/obj" "$out/corpus-rx" "$out/corpus-am" "$out/corpus-route" "$out/crashes"

# pme_core for fuzzing: deterministic "random" numbers (PME_FUZZING), sanitizers,
# coverage for libFuzzer. hwloc and libpcap are needed by the devices it links.
flags=(-std=gnu11 -D_GNU_SOURCE -DPME_FUZZING -g -O1 -fsanitize=address,undefined
       -fno-sanitize-recover=undefined -fno-omit-frame-pointer
       -I"$src/src/pme_core" -I"$src/test" -I"$src/test/loop" -I"$src/test/fuzz"
       -I"$src/src/mpid/ch4/netmod/pme" -I"$src/src/tools")
objs=()
# An object is rebuilt when its source or any header is newer: a header that changed a
# struct's layout under objects built before would make them disagree about it.
newest_header=$(ls -t "$src"/src/pme_core/*.h "$src"/test/loop/*.h "$src"/test/*.h | head -n 1)
for c in "$src"/src/pme_core/*.c "$src"/test/loop/fakepeer.c; do
    o=$out/obj/$(basename "$c" .c).o
    if [ ! -e "$o" ] || [ "$c" -nt "$o" ] || [ "$newest_header" -nt "$o" ]; then
        clang "${flags[@]}" -fsanitize=fuzzer-no-link -c "$c" -o "$o" ||
            { echo "t-fuzz: cannot build $c"; exit 1; }
    fi
    objs+=("$o")
done
libs=($(pkg-config --libs libpcap hwloc) -lpthread)
clang "${flags[@]}" -fsanitize=fuzzer "$src/test/fuzz/fuzz_rx.c" "${objs[@]}" "${libs[@]}" \
    -o "$out/fuzz_rx"
clang "${flags[@]}" -fsanitize=fuzzer-no-link "$src/test/fuzz/mkcorpus.c" "${objs[@]}" \
    "${libs[@]}" -o "$out/mkcorpus"
clang "${flags[@]}" -fsanitize=fuzzer "$src/test/fuzz/fuzz_am.c" -o "$out/fuzz_am"
clang "${flags[@]}" -fsanitize=fuzzer "$src/test/fuzz/fuzz_route.c" "$src/src/tools/routefile.c" \
    "${objs[@]}" "${libs[@]}" -o "$out/fuzz_route"

"$out/mkcorpus" "$out/corpus-rx"
printf '\0\0\0\0\0\0\0\0' >"$out/corpus-am/zero"
printf '\0\1\2\0\0\0\0\0AAAAAAAA' >"$out/corpus-am/short-am"
# Route files as pme_route writes them: a ring node's (topology and coordinates), a
# torus node's of four interfaces, a switch's.
printf 'pme-routes 1\n# node host0; written by pme_route\nnode 1\nethertype 0x88b5\niface p0plus 02:00:00:00:01:00\niface p0minus 02:00:00:00:01:01\nroute 2 p0plus 02:00:00:00:02:01 1\nroute 3 p0minus 02:00:00:00:03:00 1\ntopology ring 3\ncoords 1 0\ncoords 2 1\ncoords 3 2\n' \
    >"$out/corpus-route/ring"
printf 'pme-routes 1\nnode 7\niface xp 02:00:00:00:07:00\niface xm 02:00:00:00:07:01\niface yp 02:00:00:00:07:02\niface ym 02:00:00:00:07:03\nroute 1 xp 02:00:00:00:01:01 1\nroute 2 xp 02:00:00:00:01:01 2\nroute 4 ym 02:00:00:00:04:02 1\nroute 5 ym 02:00:00:00:04:02 3\ntopology torus 4x2\ncoords 7 3,1\ncoords 1 0,0\ncoords 4 3,0\n' \
    >"$out/corpus-route/torus"
printf 'pme-routes 1\nnode 2\nethertype 0x9000\niface eth0 02:00:00:00:02:00\nroute 1 eth0 02:00:00:00:01:00 1\ntopology switch\n' \
    >"$out/corpus-route/switch"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1
fail=0
run() { # name, fuzzer, corpus, regress dir, extra args
    local name=$1 bin=$2 corpus=$3 regress=$4
    shift 4
    if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
        "$bin" -runs=0 "$regress" >"$out/$name-regress.log" 2>&1 ||
            { echo "t-fuzz: $name fails on a kept regression input"; tail -30 "$out/$name-regress.log"; fail=1; return; }
    fi
    if "$bin" "$@" -max_total_time="$secs" -artifact_prefix="$out/crashes/$name-" \
        -print_final_stats=1 "$corpus" >"$out/$name.log" 2>&1; then
        echo "t-fuzz: $name: $(grep -E '^stat::number_of_executed_units' "$out/$name.log" | awk '{print $2}') inputs in ${secs}s, $(grep -E 'cov:' "$out/$name.log" | tail -1 | grep -oE 'cov: [0-9]+') edges, no failure"
    else
        echo "t-fuzz: $name found a failure; the input is in $out/crashes (fix it, then keep it in test/fuzz/regress/$name/)"
        grep -E "ERROR|SUMMARY|runtime error" "$out/$name.log" | head -5
        fail=1
    fi
}
run rx "$out/fuzz_rx" "$out/corpus-rx" "$src/test/fuzz/regress/rx" -max_len=20000
run am "$out/fuzz_am" "$out/corpus-am" "$src/test/fuzz/regress/am" -max_len=2048
run route "$out/fuzz_route" "$out/corpus-route" "$src/test/fuzz/regress/route" -max_len=4096
exit $fail
