#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-layers.sh - pme_core, the netmod and the tools read from the bottom up: no call
# circle between their files (doc/design/core.md, doc/design/netmod.md). A change that
# makes a lower file call back into a higher one fails here, naming the calls that
# close the circle. pme_core's files are placed in layers by the table in
# doc/design/core.md: a file missing from it fails, and so does a call by name from a
# file to a function of a file in a higher layer (caller, callee and both files named),
# and so does an include of a header of a higher layer (pme.h and pme_internal.h, which
# every layer reads, exempt by name).
# The netmod's files must each be named in doc/design/netmod.md's table.
#
# kmod/ is not checked: a PING between two endpoints of one host is answered while it
# is delivered (pme_rx -> pme_live -> pme_tx -> pme_rx), a recursion by design.
# pme-test: tier=default cpu=100 time=2
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

# The layer check: a table places a.c above b.c above c.c; a call downward passes, a
# call upward fails and is named, and so do a file the table leaves out and a row for a
# file that does not exist.
printf 'int c(void)\n{\n    return 0;\n}\n' >"$tmp/c.c"
printf '| layer | file | owns |\n|---|---|---|\n| 2 | `a.c` | top |\n| 1 | `b.c` | middle |\n| 0 | `c.c` | bottom |\n' >"$tmp/t.md"
$check --table "$tmp/t.md" "$tmp" >"$tmp/out" || tools_fail "calls downward taken for wrong: $(cat "$tmp/out")"
printf 'int c(void)\n{\n    return b() + 0;\n}\n' >"$tmp/c.c"
printf 'int b(void) { return 1; }\n' >"$tmp/b.c"
$check --table "$tmp/t.md" "$tmp" >"$tmp/out" && tools_fail "the upward call c.c -> b() (b.c) was not found"
grep -q 'upward call: c.c (layer 0) calls b, defined in b.c (layer 1)' "$tmp/out" ||
    tools_fail "the report does not name the upward call: $(cat "$tmp/out")"
printf 'int c(void)\n{\n    return 0;\n}\n' >"$tmp/c.c"
printf 'int d(void) { return c(); }\n' >"$tmp/d.c"
$check --table "$tmp/t.md" "$tmp" >"$tmp/out" && tools_fail "d.c, in no layer, was taken"
grep -q 'd.c is not placed' "$tmp/out" || tools_fail "the report does not name the unplaced file: $(cat "$tmp/out")"
rm "$tmp/d.c" "$tmp/c.c"
$check --table "$tmp/t.md" "$tmp" >"$tmp/out" && tools_fail "a row for c.c, which is gone, was taken"
grep -q 'names c.c, which does not exist' "$tmp/out" || tools_fail "the report does not name the stale row: $(cat "$tmp/out")"

# The include check: in a numbered table a file includes headers of its own layer and
# lower ones; a header of a higher layer fails and is named; pme.h is exempt by name (an
# include in a comment is none).
inc="$tmp/inc"
mkdir "$inc"
printf '| layer | file | owns |\n|---|---|---|\n| 0 | `b.c` | low |\n| 0 | `b.h` | low |\n| 1 | `a.c` | high |\n| 1 | `a.h` | high |\n| 6 | `pme.h` | types |\n' >"$tmp/inc.md"
printf '#include "a.h"\n#include "b.h"\nint a(void) { return b(); }\n' >"$inc/a.c"
printf '#include "b.h"\n' >"$inc/a.h"
printf '#include "b.h"\n#include "pme.h"\n/* #include "a.h" */\nint b(void) { return 0; }\n' >"$inc/b.c"
printf '#include <stdint.h>\n#include "pme.h"\nint b(void);\n' >"$inc/b.h"
printf '#define PME_OK 0\n' >"$inc/pme.h"
$check --table "$tmp/inc.md" "$inc" >"$tmp/out" || tools_fail "includes downward (and of pme.h) taken for wrong: $(cat "$tmp/out")"
grep -q 'no include upward' "$tmp/out" || tools_fail "the report does not say includes were checked: $(cat "$tmp/out")"
printf '#include <stdint.h>\n  #  include "a.h"\nint b(void);\n' >"$inc/b.h"
$check --table "$tmp/inc.md" "$inc" >"$tmp/out" && tools_fail "the upward include b.h -> a.h was not found"
grep -q 'upward include: b.h (layer 0) includes a.h (layer 1)' "$tmp/out" ||
    tools_fail "the report does not name the upward include: $(cat "$tmp/out")"
printf '#include "b.h"\n' >"$inc/b.h"
printf '| layer | file | owns |\n|---|---|---|\n| 0 | `b.c` | low |\n| 0 | `b.h` | low |\n| 1 | `a.c` | high |\n| 1 | `a.h` | high |\n| 6 | `top.h` | types |\n' >"$tmp/inc.md"
rm "$inc/pme.h"
printf '#define PME_OK 0\n' >"$inc/top.h"
sed -i 's/"pme.h"/"top.h"/' "$inc/b.c"
$check --table "$tmp/inc.md" "$inc" >"$tmp/out" && tools_fail "top.h, not exempt, was included from layer 0 and taken"
grep -q 'upward include: b.c (layer 0) includes top.h (layer 6)' "$tmp/out" ||
    tools_fail "the report does not name the include of top.h: $(cat "$tmp/out")"

rc=0
$check --table "$srcdir/doc/design/core.md" "$srcdir/src/pme_core" || rc=1
$check --table "$srcdir/doc/design/netmod.md" "$srcdir/src/mpid/ch4/netmod/pme" || rc=1
$check "$srcdir/src/tools" || rc=1
[ $rc = 0 ] || tools_fail "layers (see above): place new files in the design page's table; move a shared function or type down, or pass a callback up"
echo "PASS: pme_core calls and includes only downward through the layers of doc/design/core.md (pme.h and pme_internal.h read by all); every file of pme_core and the netmod placed; no call circle in pme_core, the netmod or the tools"
