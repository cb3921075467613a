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
