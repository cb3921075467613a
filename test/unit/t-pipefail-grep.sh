#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-pipefail-grep.sh - no script that sets pipefail pipes a command into `grep -q`.
# grep -q leaves at its first match; whatever the command still writes then dies of
# SIGPIPE, and pipefail turns the match into a failure. It happens only when the reader
# wins the race (a busy machine), so it shows as a flaky test: CI lost a run of
# t-make-install to `nm -D lib | grep -q sym`. Read the output whole first
# (`grep -q X <<<"$(cmd)"`), or let grep read the file itself (`grep -qv X file`).
# Checks itself first on a made-up script, so that it can fail.
# pme-test: tier=default cpu=30 time=1
set -uo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# offenders DIR...: file:line of each `... | grep -q` in a bash script that sets
# pipefail. A pipe from echo or printf of a string is harmless (one write) and allowed.
offenders() {
    local f
    for f in $(grep -rlE --exclude-dir=.git --exclude-dir='build*' \
        'set -[a-z]*o pipefail|set -o pipefail' "$@" 2>/dev/null); do
        local first
        IFS= read -r first <"$f" || continue
        [[ $first =~ ^#!.*(bash|/sh) ]] || continue
        grep -nE '(^|[^|])\|[[:space:]]*grep[[:space:]]+(-[a-zA-Z]*q|.*[[:space:]]-[a-zA-Z]*q)' "$f" |
            grep -vE '(echo|printf)[^|]*\|[[:space:]]*grep' |
            grep -vE '^[0-9]+:[[:space:]]*#' | sed "s|^|$f:|"
    done
}

mkdir -p "$work/bad"
printf '#!/bin/bash\nset -uo pipefail\nnm -D lib.so | grep -q sym || exit 1\n' >"$work/bad/x.sh"
printf '#!/bin/bash\nset -uo pipefail\necho "$v" | grep -q sym || exit 1\n' >"$work/bad/y.sh"
self=$(offenders "$work/bad")
if ! grep -q 'x.sh:3:' <<<"$self" || grep -q 'y.sh' <<<"$self"; then
    echo "FAIL: the check itself is broken on a made-up script: '$self'"
    exit 1
fi

found=$(cd "$src" && offenders maint test src kmod debian .ci 2>/dev/null)
if [ -n "$found" ]; then
    echo "FAIL: a command piped into grep -q under pipefail (flaky: SIGPIPE on an early match):"
    echo "$found"
    exit 1
fi
echo "ok: no script pipes a command into grep -q under pipefail"
