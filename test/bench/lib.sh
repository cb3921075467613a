# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# lib.sh - what the maint/bench tests share (sourced by test/bench/t-*.sh): top (the
# source tree), fail, say, and tmp, a scratch directory removed at exit.
set -euo pipefail
# shellcheck disable=SC2034 # for the tests
top=${srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
say() { printf '%s\n' "$*"; }
tmp=$(mktemp -d /tmp/bench-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# check_cli NAME USAGE: maint/NAME's command line, without root and without running
# anything: --help exits 0 and prints the manual at the top of the script (USAGE, its
# usage line, among it); an unknown option exits 2 with a message naming it. Every
# benchmark parses its options before it checks for root, so this holds as root too.
check_cli() {
    local name=$1 usage=$2 out rc=0
    out=$("$top/maint/$name" --help 2>&1) || fail "maint/$name --help: exit $?"
    grep -qF -- "$usage" <<<"$out" || fail "maint/$name --help lacks its usage line '$usage':
$out"
    grep -q "^$name - \|^maint/$name - " <<<"$out" || fail "maint/$name --help does not start its manual with what it is:
$out"
    out=$("$top/maint/$name" --no-such-option 2>&1) || rc=$?
    [ "$rc" = 2 ] || fail "maint/$name --no-such-option: exit $rc, want 2 (bad usage): $out"
    grep -q "^$name: unknown .*--no-such-option" <<<"$out" ||
        fail "maint/$name --no-such-option: no message naming the option: $out"
    say "ok: maint/$name --help prints its manual, an unknown option exits 2 naming it"
}

# same GOT WANT WHAT: GOT is exactly WANT, or fail showing both.
same() {
    [ "$1" = "$2" ] || fail "$3:
got:
$1
want:
$2"
}
