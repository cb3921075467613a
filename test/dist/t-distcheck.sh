#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-distcheck.sh - the release tarball stands on its own:
#   - `make distcheck` passes: the tarball unpacks, builds out of tree from a read-only
#     source, passes the tests that need only itself, installs, uninstalls and cleans;
#   - it holds every file of the tree (its MANIFEST, and in a clone every file git
#     knows), among them what builds the tools and pme_core, the driver (kmod/ with
#     dkms.conf), the netmod (src/mpid/ch4/netmod/pme) and maint/build-mpich;
#   - the version is one: configure's, the tarball's name, kmod/Makefile's,
#     dkms.conf's (and debian/changelog's upstream part, when there is one);
#   - the driver builds from the unpacked tarball through DKMS (`make dkms-source`,
#     `dkms build` into trees of the test's own), when dkms and Debian's 6.1 kernel
#     headers are here (else the test is skipped after the other checks);
#   - with PME_TEST_FULL=1, maint/build-mpich run from the unpacked tarball builds MPICH
#     with ch4:pme (--lean where it has it, in a cache of the test's own, taking Debian's
#     source files from the default cache when they are there), whose mpichversion names
#     ch4:pme and whose mpicc builds a program.
# pme-test: tier=default cpu=60 time=110 timeout=3600
set -uo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
failures=0
fail() { printf 'FAIL: %s\n' "$*"; failures=$((failures + 1)); }
ok() { printf 'ok: %s\n' "$*"; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
# The calling make's job server and a filter of the caller's are not distcheck's.
quiet_env=(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u PME_TEST_FILTER -u PME_TEST_LOGDIR)

[ -x "$src/configure" ] || { echo "FAIL: no configure in $src (./autogen.sh first)"; exit 1; }
mkdir -p "$work/b"
(cd "$work/b" && "${quiet_env[@]}" "$src/configure" >"$work/configure.log" 2>&1) ||
    { tail -20 "$work/configure.log"; echo "FAIL: configure"; exit 1; }
if (cd "$work/b" && nice -n 10 "${quiet_env[@]}" make -j2 distcheck >"$work/distcheck.log" 2>&1); then
    ok "make distcheck passed ($(grep -cE '^PASS ' "$work/distcheck.log") tests in the unpacked tarball)"
else
    tail -40 "$work/distcheck.log"
    echo "FAIL: make distcheck"
    exit 1
fi
grep -qE '^[0-9]+ passed, 0 failed' "$work/distcheck.log" ||
    fail "distcheck's make check did not end with 0 failed"
[ "$(grep -cE '^PASS ' "$work/distcheck.log")" -ge 20 ] ||
    fail "distcheck's make check ran fewer than 20 tests"

# ---- what the tarball holds ----
version=$(sed -n 's/^PACKAGE_VERSION=.\(.*\).$/\1/p' "$work/b/config.log" | head -n 1)
tarball=$work/b/pme-$version.tar.gz
[ -f "$tarball" ] || { echo "FAIL: no $tarball after make distcheck"; exit 1; }
tar -C "$work" -xzf "$tarball" || { echo "FAIL: cannot unpack $tarball"; exit 1; }
x=$work/pme-$version
[ -f "$x/MANIFEST" ] || fail "the tarball has no MANIFEST"
missing=$(while IFS= read -r f; do [ -f "$x/$f" ] || echo "$f"; done <"$x/MANIFEST")
[ -z "$missing" ] || fail "files of the MANIFEST missing from the tarball: $(echo $missing)"
if [ -e "$src/.git" ] && command -v git >/dev/null; then
    gone=$(cd "$src" && git ls-files | while IFS= read -r f; do
        [ -f "$f" ] && ! [ -f "$x/$f" ] && echo "$f"; done)
    [ -z "$gone" ] || fail "files git knows that the tarball lacks: $(echo $gone)"
fi
for f in configure Makefile.in LICENSE README.md autogen.sh configure.ac Makefile.am \
    src/pme_core/pme.h src/pme_core/libpme.map pme.pc.in system/pme-routes.service.in \
    kmod/Kbuild kmod/Makefile kmod/dkms.conf kmod/60-pme.rules kmod/pme_main.c \
    src/mpid/ch4/netmod/pme/Makefile.mk src/mpid/ch4/netmod/pme/subconfigure.m4 \
    maint/build-mpich maint/mpich-4.0.2.sha256 doc/man/pme.7 doc/real-cluster.md; do
    [ -f "$x/$f" ] || fail "the tarball lacks $f"
done
[ -x "$x/maint/build-mpich" ] || fail "maint/build-mpich is not executable in the tarball"
[ "$failures" = 0 ] && ok "the tarball holds the tree: pme_core, tools, kmod/ with dkms.conf, the netmod, maint/build-mpich ($(wc -l <"$x/MANIFEST") files)"

# ---- one version ----
kv=$(sed -n 's/^VERSION := //p' "$x/kmod/Makefile")
dv=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$x/kmod/dkms.conf")
[ "$kv" = "$version" ] || fail "kmod/Makefile's VERSION is '$kv', configure's $version"
[ "$dv" = "$version" ] || fail "dkms.conf's PACKAGE_VERSION is '$dv', configure's $version"
if [ -f "$x/debian/changelog" ]; then
    cv=$(sed -n '1s/^[^(]*(\([^)-]*\).*/\1/p' "$x/debian/changelog")
    [ "$cv" = "$version" ] || fail "debian/changelog's upstream version is '$cv', configure's $version"
fi
[ "$failures" = 0 ] && ok "configure, the tarball, kmod/Makefile and dkms.conf say version $version"

# ---- the driver through DKMS, from the tarball ----
skip=
kver=$(ls /lib/modules 2>/dev/null | grep '^6\.1\.' | sort -V | tail -n 1)
if ! command -v dkms >/dev/null || [ -z "$kver" ] || [ ! -d "/lib/modules/$kver/build" ]; then
    skip="dkms or Debian's 6.1 kernel headers are not installed (maint/deps.sh kmod)"
else
    if ! make -s -C "$x/kmod" dkms-source DESTDIR="$work/d" >"$work/dkms-source.log" 2>&1; then
        cat "$work/dkms-source.log"
        fail "make -C kmod dkms-source in the unpacked tarball"
    else
        mkdir -p "$work/dkms"
        if nice -n 10 "${quiet_env[@]}" dkms build -m pme -v "$version" -k "$kver" \
            --sourcetree "$work/d/usr/src" --dkmstree "$work/dkms" >"$work/dkms.log" 2>&1; then
            ko=$(find "$work/dkms" -name pme.ko -path "*/$kver/*" | head -n 1)
            if [ -n "$ko" ] && grep -q "^vermagic: *$kver " <<<"$(modinfo "$ko")"; then
                ok "the tarball's driver builds through DKMS for $kver"
            else
                fail "dkms build made no pme.ko for $kver"
            fi
        else
            tail -30 "$work/dkms.log"
            fail "dkms build from the tarball's dkms-source"
        fi
    fi
fi

# ---- the netmod through maint/build-mpich, from the tarball (full tier) ----
if [ "${PME_TEST_FULL:-0}" = 1 ]; then
    cache=$work/cache
    mkdir -p "$cache/src"
    defsrc=${XDG_CACHE_HOME:-$HOME/.cache}/pme/src
    for f in $(awk '{print $2}' "$x/maint/mpich-4.0.2.sha256"); do
        [ -f "$defsrc/$f" ] && cp "$defsrc/$f" "$cache/src/"
    done
    # --lean (C only) where this build-mpich has it: a quicker build that still builds
    # the netmod.
    lean=()
    grep -q -- '--lean' <<<"$("$x/maint/build-mpich" --help 2>/dev/null)" && lean=(--lean)
    out=$(cd "$work" && nice -n 10 "${quiet_env[@]}" PME_MPICH_PREFIX= PME_CACHE_DIR="$cache" \
        "$x/maint/build-mpich" "${lean[@]}" -j 2 -q 2>&1 | tail -n 20)
    prefix=$(sed -n 's/^prefix: //p' <<<"$out" | tail -n 1)
    if [ -z "$prefix" ] || [ ! -x "$prefix/bin/mpicc" ]; then
        fail "maint/build-mpich from the tarball: $out"
    elif ! grep -q 'ch4:pme' <<<"$("$prefix/bin/mpichversion")"; then
        fail "the MPICH built from the tarball does not name ch4:pme: $("$prefix/bin/mpichversion" | head -n 5)"
    else
        printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' \
            >"$work/p.c"
        if "$prefix/bin/mpicc" -o "$work/p" "$work/p.c" >"$work/mpicc.log" 2>&1; then
            ok "maint/build-mpich from the tarball built MPICH with ch4:pme; its mpicc builds a program"
        else
            fail "mpicc of the MPICH built from the tarball: $(cat "$work/mpicc.log")"
        fi
    fi
fi

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
if [ -n "$skip" ]; then
    echo "the driver's DKMS build from the tarball not checked: $skip"
    exit 77
fi
echo "make distcheck and the tarball: all checks passed"
