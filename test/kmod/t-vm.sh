#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/vm, the rig every kernel test runs in: a command's exit status comes back, a
# command runs as an unprivileged user with --user, the guest's writes stay in the
# guest, a warning in the guest's kernel log fails a run that would otherwise pass, and
# a guest that runs too long is stopped with status 124.
# pme-test: tier=default cpu=80 time=49
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root
vm="$srcdir/maint/vm"
mark=/tmp/pme-vm-test.$$

out=$("$vm" -- sh -c "echo inside; touch $mark && echo wrote; exit 7") && rc=0 || rc=$?
check "exit status 7 comes back (got $rc)" [ "$rc" = 7 ]
check "the command's output comes back" grep -qx inside <<<"$out"
check "a write in the guest succeeds there" grep -qx wrote <<<"$out"
check "and does not reach the host" [ ! -e "$mark" ]

out=$("$vm" --user pmevmuser -- id -un) && rc=0 || rc=$?
check "--user runs the command as that user (got '$out', exit $rc)" [ "$out" = pmevmuser ]

out=$("$vm" -- sh -c 'echo "WARNING: CPU: 0 PID: 1 at test" >/dev/kmsg' 2>&1) && rc=0 || rc=$?
check "a WARNING in the guest's kernel log fails the run (exit $rc)" [ "$rc" = 1 ]
check "and is shown" grep -q "dmesg: .*WARNING: CPU: 0 PID: 1 at test" <<<"$out"

tmp=$(mktemp -d)
out=$(TMPDIR=$tmp "$vm" --timeout 20 -- sleep 60 2>&1) && rc=0 || rc=$?
check "a guest that outlives --timeout is stopped (exit $rc)" [ "$rc" = 124 ]
check "with a message naming the fix" grep -q "raise --timeout" <<<"$out"
check "and leaves no temporary directory" [ -z "$(ls -A "$tmp")" ]
rm -rf "$tmp"
verdict
