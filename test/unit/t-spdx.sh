#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-spdx.sh - every source file, script and build file says its licence in an SPDX line,
# and says the right one (LICENSE):
#   - C sources and headers, shell, Python, awk, Lua, m4, automake and autoconf files,
#     makefiles, udev rules, DKMS and systemd files, manual pages, and any file that
#     starts with "#!": the first line (the second after "#!") is an SPDX line;
#   - kmod/ and the eBPF programs (src/bpf/*.bpf.c) are GPL-2.0-only; the headers shared
#     with the driver (pme_wire.h, pme_ioctl.h, pme_route.h) GPL-2.0-only WITH
#     Linux-syscall-note OR BSD-3-Clause; the headers the eBPF programs share with their
#     loaders GPL-2.0-only OR BSD-3-Clause; everything else BSD-3-Clause;
#   - in a clone, every other file git knows is of a kind named here as one that carries
#     no SPDX line (documentation, data, the licence texts, Debian's fixed-format files):
#     a file of a new kind fails until it gets an SPDX line (and its kind a place in
#     in_scope) or its kind is named in exempt;
#   - LICENSE carries the project's copyright line and names every licence used.
# Scans the files git knows in a clone (tracked, and new ones not ignored), the source
# tree otherwise (a release tarball), leaving out what autotools generate. Checks itself
# first on made-up trees, with and without git, so that it can fail.
# pme-test: tier=default cpu=50 time=2
set -uo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
failures=0
fail() { printf 'FAIL: %s\n' "$*"; failures=$((failures + 1)); }

BSD=BSD-3-Clause
GPL=GPL-2.0-only
UAPI="GPL-2.0-only WITH Linux-syscall-note OR BSD-3-Clause"
BPFH="GPL-2.0-only OR BSD-3-Clause"

# expected PATH: the licence the file at PATH (relative to the tree) must carry.
expected() {
    case $1 in
    kmod/*) echo "$GPL" ;;
    src/bpf/*.bpf.c) echo "$GPL" ;;
    src/bpf/pme_faults.h | src/bpf/pme_fwd.h) echo "$BPFH" ;;
    src/pme_core/pme_wire.h | src/pme_core/pme_ioctl.h | src/pme_core/pme_route.h) echo "$UAPI" ;;
    *) echo "$BSD" ;;
    esac
}

# in_scope TREE PATH: PATH is a source file, script or build file.
in_scope() {
    local tree=$1 f=$2
    case ${f##*/} in
    *.c | *.h | *.sh | *.bash | *.py | *.awk | *.lua | *.m4 | *.am | *.ac | *.mk) return 0 ;;
    *.rules | *.service | *.conf | *.pc.in | *.in | *.map) return 0 ;;
    Makefile | Kbuild | GNUmakefile) return 0 ;;
    esac
    case $f in
    doc/man/*.[1-8] | doc/man/*.[1-8].in) return 0 ;;
    debian/control | debian/rules | debian/*.postinst | debian/*.prerm | debian/*.postrm | \
        debian/*.preinst | debian/*.install | debian/*.dirs | debian/*.links | \
        debian/*.docs | debian/*.manpages | debian/*.dkms | debian/*.udev | \
        debian/*.lintian-overrides | debian/*.maintscript | debian/watch | debian/gbp.conf) return 0 ;;
    esac
    local first=
    IFS= read -r -N 2 first <"$tree/$f" 2>/dev/null
    [ "$first" = '#!' ]
}

# exempt PATH: PATH is of a kind that carries no SPDX line: documentation, data the
# tests and benchmarks read, the licence texts themselves, fuzzers' inputs, and the
# Debian files whose format has no place for one (or which state the licences).
exempt() {
    case ${1##*/} in
    *.md | *.png | *.svg | *.csv | *.tsv | *.txt | *.scenario | meta | *.sha256) return 0 ;;
    LICENSE | .gitignore | .gitattributes | .keep | testlist.*) return 0 ;;
    esac
    case $1 in
    LICENSES/* | test/fuzz/regress/* | doc/perf/*) return 0 ;;
    debian/changelog | debian/copyright | debian/source/format | debian/source/options | \
        debian/compat | debian/*.symbols | debian/*.shlibs) return 0 ;;
    esac
    return 1
}

# list_files TREE: the files to look at, relative to TREE, one a line.
list_files() {
    local tree=$1
    if [ -d "$tree/.git" ] || [ -f "$tree/.git" ]; then
        git -C "$tree" ls-files --cached --others --exclude-standard
    else
        # A tree without git: a release tarball, perhaps with a build inside. Leave out
        # build directories, the packaging's staging areas and what autotools generate.
        (cd "$tree" && find . \( -name .git -o -name autom4te.cache -o -name '_build' \
            -o -name 'build' -o -name 'build-*' -o -name .deps -o -name .libs \
            -o -path ./debian/tmp -o -path ./debian/.debhelper -o -path './debian/pme-*' \
            -o -path './debian/libpme*' \) -prune -o -type f -print) | sed 's|^\./||' |
            grep -vE '(^|/)(configure|Makefile\.in|aclocal\.m4|config\.h\.in|config\.guess|config\.sub|compile|depcomp|install-sh|missing|test-driver|ltmain\.sh|ar-lib|libtool\.m4|lt[a-z~]*\.m4)$'
    fi
}

# spdx_of TREE PATH: the licence expression of the file's SPDX line, which must be the
# first line or the one after "#!"; nothing when there is none there.
spdx_of() {
    local line=
    { IFS= read -r line; case $line in '#!'*) IFS= read -r line ;; esac; } <"$1/$2"
    case $line in *SPDX-License-Identifier:*) ;; *) return 0 ;; esac
    line=${line#*SPDX-License-Identifier: }
    line=${line%% \*/}
    printf '%s\n' "$line"
}

# problems TREE: one line per file of TREE whose SPDX line is missing or wrong (and, in
# a clone, per file of a kind that is neither in scope nor exempt); prints "checked N"
# last.
problems() {
    local tree=$1 f want got n=0 strict=
    [ -e "$tree/.git" ] && strict=1
    while IFS= read -r f; do
        [ -f "$tree/$f" ] || continue # deleted, not yet committed
        if ! in_scope "$tree" "$f"; then
            exempt "$f" || [ -z "$strict" ] ||
                echo "$f: no SPDX line, and of no kind this test exempts (give it one, or name its kind in exempt)"
            continue
        fi
        n=$((n + 1))
        want=$(expected "$f")
        got=$(spdx_of "$tree" "$f")
        if [ -z "$got" ]; then
            echo "$f: no SPDX-License-Identifier line at the top (want $want)"
        elif [ "$got" != "$want" ]; then
            echo "$f: SPDX-License-Identifier is '$got', want '$want'"
        fi
    done < <(list_files "$tree")
    echo "checked $n"
}

# ---- the check can fail: a made-up tree (no git) with one right file of each kind
# and the wrong ones it must name ----
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir -p "$fake/kmod" "$fake/src/pme_core" "$fake/src/tools" "$fake/maint" "$fake/src/bpf"
printf '// SPDX-License-Identifier: GPL-2.0-only\nint a;\n' >"$fake/kmod/good.c"
printf '// SPDX-License-Identifier: BSD-3-Clause\nint a;\n' >"$fake/kmod/bsd.c"
printf '// SPDX-License-Identifier: GPL-2.0-only\nint a;\n' >"$fake/src/tools/gpl.c"
printf '// SPDX-License-Identifier: BSD-3-Clause\nint a;\n' >"$fake/src/bpf/bsd.bpf.c"
printf '/* SPDX-License-Identifier: %s */\n' "$UAPI" >"$fake/src/pme_core/pme_wire.h"
printf '/* SPDX-License-Identifier: BSD-3-Clause */\n' >"$fake/src/pme_core/pme_ioctl.h"
printf '/* x.c - no licence */\nint a;\n' >"$fake/src/pme_core/none.c"
printf '#!/bin/bash\n# SPDX-License-Identifier: BSD-3-Clause\ntrue\n' >"$fake/maint/good"
printf '#!/bin/bash\n# a script\n# SPDX-License-Identifier: BSD-3-Clause\n' >"$fake/maint/late"
printf 'obj-m := x.o\n' >"$fake/kmod/Kbuild"
printf '# generated\n' >"$fake/configure"
printf 'notes, not a source file\n' >"$fake/notes.txt"
out=$(problems "$fake")
for bad in kmod/bsd.c src/tools/gpl.c src/bpf/bsd.bpf.c src/pme_core/pme_ioctl.h \
    src/pme_core/none.c maint/late kmod/Kbuild; do
    grep -q "^$bad: " <<<"$out" || fail "self-check: a made-up $bad is not reported: $out"
done
for good in kmod/good.c src/pme_core/pme_wire.h maint/good configure notes.txt; do
    grep -q "^$good: " <<<"$out" && fail "self-check: a made-up $good is reported: $out"
done
[ "$(tail -n 1 <<<"$out")" = "checked 10" ] ||
    fail "self-check: expected 10 files looked at, got '$(tail -n 1 <<<"$out")'"
# The same tree as a clone: a file of an unknown kind is reported there, documentation
# and data are not, and a linker map is a build file.
printf 'whatever\n' >"$fake/src/pme_core/data.bin"
printf '# a readme\n' >"$fake/README.md"
printf '{ global: a; local: *; };\n' >"$fake/src/pme_core/lib.map"
mkdir -p "$fake/debian/source"
printf '3.0 (native)\n' >"$fake/debian/source/format"
printf 'Source: x\n' >"$fake/debian/control"
if git -C "$fake" init -q 2>/dev/null && git -C "$fake" add -A 2>/dev/null; then
    out=$(problems "$fake")
    for bad in src/pme_core/data.bin src/pme_core/lib.map debian/control kmod/bsd.c; do
        grep -q "^$bad: " <<<"$out" || fail "self-check (clone): $bad is not reported: $out"
    done
    for good in README.md notes.txt debian/source/format maint/good; do
        grep -q "^$good: " <<<"$out" && fail "self-check (clone): $good is reported: $out"
    done
else
    fail "self-check: cannot make a git repository of the made-up tree"
fi

# ---- the tree ----
out=$(problems "$src")
n=$(tail -n 1 <<<"$out")
n=${n#checked }
# A scan that found (almost) nothing proves nothing.
[ "$n" -ge 200 ] || fail "only $n files were looked at in $src (git ls-files or find failed?)"
while IFS= read -r line; do
    fail "$line"
done < <(sed '$d' <<<"$out")

# ---- LICENSE ----
if [ ! -f "$src/LICENSE" ]; then
    fail "no LICENSE at the root of the tree"
else
    grep -q 'Copyright (c) 2026, the PME developers' "$src/LICENSE" ||
        fail "LICENSE lacks the project's copyright line"
    for id in BSD-3-Clause GPL-2.0-only Linux-syscall-note; do
        grep -q -- "$id" "$src/LICENSE" || fail "LICENSE does not name $id, which files use"
    done
    grep -q 'Redistribution and use in source and binary forms' "$src/LICENSE" ||
        fail "LICENSE lacks the BSD-3-Clause text"
    grep -q 'LICENSES/GPL-2.0' "$src/LICENSE" || fail "LICENSE does not point at LICENSES/GPL-2.0"
fi
grep -q 'GNU GENERAL PUBLIC LICENSE' "$src/LICENSES/GPL-2.0" 2>/dev/null ||
    fail "LICENSES/GPL-2.0 is missing or is not the GPL's text"

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok: $n files carry the right SPDX line; LICENSE names every licence"
