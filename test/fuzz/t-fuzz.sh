#!/bin/bash
# t-fuzz.sh - the fuzzers, for a fixed time: the frame receive path (fuzz_rx, seeded
# with real exchanges recorded by mkcorpus) and the netmod's header parser (fuzz_am),
# built with clang's libFuzzer, AddressSanitizer and UBSan. Every input that ever
# crashed them is kept under test/fuzz/regress/ and replayed first.
#   PME_FUZZ_SECONDS   time per fuzzer (default 60)
set -euo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${builddir:-$PWD}/fuzz
secs=${PME_FUZZ_SECONDS:-60}
for tool in clang; do
    command -v "$tool" >/dev/null || { echo "t-fuzz: $tool is missing (maint/deps.sh test installs it)"; exit 1; }
done
mkdir -p "$out/obj" "$out/corpus-rx" "$out/corpus-am" "$out/crashes"

# pme_core for fuzzing: deterministic "random" numbers (PME_FUZZING), sanitizers,
# coverage for libFuzzer. hwloc and libpcap are needed by the devices it links.
flags=(-std=gnu11 -D_GNU_SOURCE -DPME_FUZZING -g -O1 -fsanitize=address,undefined
       -fno-sanitize-recover=undefined -fno-omit-frame-pointer
       -I"$src/src/pme_core" -I"$src/test" -I"$src/test/loop" -I"$src/test/fuzz"
       -I"$src/src/mpid/ch4/netmod/pme")
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

"$out/mkcorpus" "$out/corpus-rx"
printf '\0\0\0\0\0\0\0\0' >"$out/corpus-am/zero"
printf '\0\1\2\0\0\0\0\0AAAAAAAA' >"$out/corpus-am/short-am"

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
exit $fail
