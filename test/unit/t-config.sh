#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-config.sh - the one list of variables (src/pme_core/env_vars.c, and the netmod's
# CVAR blocks read at build time) keeps up with the sources and the documents, and
# pme_info --config and the endpoint use it:
#   - every PME_* variable the sources read or set (getenv, setenv), every PME_* or
#     MPIR_CVAR_CH4_PME_* variable named in the first cell of a table of doc/*.md, and
#     every PME_* variable the build and test scripts use is in the list;
#   - every variable of the list that the library reads is described in doc/ (a page or
#     a manual), and every CVAR in doc/mpi.md;
#   - pme_info --config shows a value set in the environment, where it came from, and
#     a PME_* variable that is none of them; an endpoint warns about that one on stderr,
#     once, and not with PME_WARN_UNKNOWN=0.
# Runs as any user. The compiled tools come from $builddir (exported by run-tests.sh).
# pme-test: tier=default cpu=100 time=3
set -euo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${builddir:-.}
PME_INFO=$build/src/tools/pme_info
LOOPT=$build/test/loop/t_hello_unanswered
failures=0
fail() { printf 'FAIL: %s\n' "$*"; failures=$((failures + 1)); }
[ -x "$PME_INFO" ] || { echo "FAIL: $PME_INFO not built"; exit 1; }
work=$(mktemp -d /tmp/pme-t-config.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$PME_INFO" --config --names >"$work/names" || fail "pme_info --config --names failed"
known() { awk -F'\t' -v n="$1" '$1 == n { f = 1 } END { exit !f }' "$work/names"; }
kind() { awk -F'\t' -v n="$1" '$1 == n { print $2 }' "$work/names"; }
[ "$(wc -l <"$work/names")" -gt 40 ] || fail "the list is too short: $(wc -l <"$work/names") names"

echo "== the sources' getenv and setenv calls"
grep -rhoE '(get|set)env\("PME_[A-Z0-9_]+"' "$src/src" "$src/test" --include='*.c' --include='*.h' |
    sed -E 's/(get|set)env\("//; s/"$//' | sort -u >"$work/read"
[ -s "$work/read" ] || fail "found no getenv(\"PME_...\") in the sources: the extraction is broken"
while read -r v; do known "$v" || fail "$v is read by the sources but missing from src/pme_core/env_vars.c"; done <"$work/read"

echo "== the documents' tables"
# First cells of table rows: every `PME_X` or `MPIR_CVAR_CH4_PME_X` in them ("PME_X=VALUE" too).
for f in "$src"/doc/*.md; do
    grep -E '^\| *`' "$f" | awk -F'|' '{ print $2 }' |
        grep -oE '`(PME|MPIR_CVAR_CH4_PME)_[A-Z0-9_]+' | tr -d '`' || true
done | sort -u >"$work/documented"
grep -qx PME_PEER_TIMEOUT_MS "$work/documented" || fail "found no PME_PEER_TIMEOUT_MS row in doc/: the extraction is broken"
grep -qx MPIR_CVAR_CH4_PME_IFACE "$work/documented" || fail "found no MPIR_CVAR_CH4_PME_IFACE row in doc/: the extraction is broken"
while read -r v; do known "$v" || fail "$v is documented in a table of doc/ but missing from the list"; done <"$work/documented"

echo "== the scripts' variables"
# ($PME_X, PME_X=..., and mpiexec's -genv PME_X VALUE)
{ grep -rhoE '\$\{?PME_[A-Z][A-Z0-9_]*|\bPME_[A-Z][A-Z0-9_]*=|-g?env +PME_[A-Z0-9_]+' "$src/maint" "$src/test" \
      --include='*.sh' --include='*.py' --exclude=t-config.sh 2>/dev/null || true
  for f in "$src"/maint/* "$src"/.ci/*; do [ -f "$f" ] && grep -hoE '\$\{?PME_[A-Z][A-Z0-9_]*|\bPME_[A-Z][A-Z0-9_]*=' "$f" || true; done
} | sed -E 's/^\$\{?//; s/=$//; s/^-g?env +//' | sort -u >"$work/scripts"
while read -r v; do known "$v" || fail "$v is used by a script but missing from the list (its jobs would be warned about it)"; done <"$work/scripts"

echo "== every variable of the library documented"
while IFS=$'\t' read -r v k; do
    case $k in
    pme) grep -rqw -- "$v" "$src/doc"/*.md "$src/doc/man" || fail "$v is in the list but no page of doc/ describes it" ;;
    cvar) grep -q "^| \`$v\`" "$src/doc/mpi.md" || fail "$v (a CVAR of the netmod) has no row in doc/mpi.md" ;;
    esac
done <"$work/names"

echo "== pme_info --config"
env PME_WINDOW=32 MPIR_CVAR_CH4_PME_RMA=0 PME_WINDOWS=8 "$PME_INFO" --config >"$work/out" 2>&1 ||
    fail "pme_info --config failed"
grep -qE '^  PME_WINDOW +64 +32 +environment ' "$work/out" || fail "PME_WINDOW=32 is not shown as set (default 64)"
grep -qE '^  PME_PEER_TIMEOUT_MS +60000 +60000 +default ' "$work/out" || fail "an unset variable is not shown with its default"
grep -qE '^  MPIR_CVAR_CH4_PME_RMA +boolean +true +0 +environment \(MPIR_CVAR_CH4_PME_RMA\)' "$work/out" ||
    fail "the CVAR set in the environment is not shown"
grep -qE '^  PME_WINDOWS=8$' "$work/out" || fail "the unknown PME_WINDOWS is not listed"
[ $failures = 0 ] || cat "$work/out"

echo "== the warning at endpoint open"
if [ -x "$LOOPT" ]; then
    env PME_WINDOWS=8 "$LOOPT" >"$work/out" 2>"$work/err" || fail "$LOOPT failed"
    n=$(grep -c 'PME: warning: PME_WINDOWS is set but PME has no such variable' "$work/err" || true)
    [ "$n" = 1 ] || { cat "$work/err"; fail "the warning came $n times, not once"; }
    grep -q 'PME_WARN_UNKNOWN=0' "$work/err" || fail "the warning does not say how to silence it"
    grep -q 'PME: warning: PME_WINDOW ' "$work/err" && fail "a known variable was warned about"
    env PME_WINDOWS=8 PME_WARN_UNKNOWN=0 "$LOOPT" >"$work/out" 2>"$work/err" || fail "$LOOPT failed"
    ! grep -q 'PME: warning' "$work/err" || fail "PME_WARN_UNKNOWN=0 did not silence the warning"
else
    fail "$LOOPT not built"
fi

[ $failures = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "one list of variables: sources, documents, scripts, pme_info --config and the endpoint agree"
