#!/bin/bash
# t-layers.sh - pme_core, the netmod and the tools read from the bottom up: no call
# circle between their files (doc/design/core.md, doc/design/netmod.md). A change that
# makes a lower file call back into a higher one fails here, naming the calls that
# close the circle.
#
# kmod/ is not checked: a PING between two endpoints of one host is answered while it
# is delivered (pme_rx -> pme_live -> pme_tx -> pme_rx), a recursion by design.
set -u
. "$srcdir/test/tools/lib.sh"

if ! command -v python3 >/dev/null; then
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || tools_skip "needs python3"
    env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300 install \
        --no-install-recommends python3 >/dev/null 2>&1 || tools_skip "cannot install python3"
fi

check="python3 $srcdir/test/tools/layers.py"

# The checker itself: it must find a circle where there is one.
tmp=$(mktemp -d /tmp/pme-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'int a(void) { return b(); }\n' >"$tmp/a.c"
printf '/* a() in a comment is no call */\nint b(void) { return c(); }\n' >"$tmp/b.c"
printf 'int c(void)\n{\n    return 0;\n}\n' >"$tmp/c.c"
$check "$tmp" >"$tmp/out" || tools_fail "a chain a -> b -> c taken for a circle: $(cat "$tmp/out")"
printf 'int c(void)\n{\n    return a();\n}\n' >"$tmp/c.c"
$check "$tmp" >"$tmp/out" && tools_fail "the circle a -> b -> c -> a was not found"
grep -q 'c.c calls a (a.c)' "$tmp/out" || tools_fail "the report does not name the call: $(cat "$tmp/out")"

rc=0
for d in src/pme_core src/mpid/ch4/netmod/pme src/tools; do
    $check "$srcdir/$d" || rc=1
done
[ $rc = 0 ] || tools_fail "call circles (see above): move the shared function down, or pass a callback up"
echo "PASS: no call circle in pme_core, the netmod or the tools"
