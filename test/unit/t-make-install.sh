#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-make-install.sh - `make install` into a DESTDIR puts down the whole stack, as a site
# (or a package) gets it, and `make uninstall` takes it all away again:
#   - exactly the expected files: libpme.so with its soname and links, the static
#     libpmecore.a, pme.pc, the public headers, the tools (pme_route in sbin), a manual
#     page for each tool and pme(7), the udev rule, the sysusers.d entries of groups pme
#     and pme-rawsock, the modules-load.d file, pme-routes.service, the docs;
#   - libpme.so exports pme.h's functions and nothing else (src/pme_core/libpme.map);
#   - a program built with `pkg-config --cflags --libs pme` against the installed
#     headers and library links and runs;
#   - pme-routes.service runs the installed pme_route on /etc/pme/topology, and
#     systemd-analyze verify accepts it (when systemd-analyze is here);
#   - no message of the library or the tools sends the user to a file of the source
#     tree (doc/*.md, kmod/, README.md, maint/'s scripts), and every manual page a
#     message names is installed.
# Runs as any user, from the build directory ($builddir) that run-tests.sh exports.
# pme-test: tier=default cpu=60 time=6
set -uo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${builddir:-.}
failures=0
fail() { printf 'FAIL: %s\n' "$*"; failures=$((failures + 1)); }
ok() { printf 'ok: %s\n' "$*"; }

[ -f "$build/Makefile" ] || { echo "FAIL: no Makefile in $build (configure first)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/dest

# The directories this build installs to (configure's choices).
declare -A dir
while IFS='=' read -r k v; do dir[$k]=$v; done < <(make -s -C "$build" print-install-dirs)
[ -n "${dir[bindir]:-}" ] || { echo "FAIL: make print-install-dirs printed nothing"; exit 1; }

if ! make -s -C "$build" install DESTDIR="$dest" >"$work/install.log" 2>&1; then
    cat "$work/install.log"
    echo "FAIL: make install DESTDIR=... failed"
    exit 1
fi
ok "make install DESTDIR=... succeeded"

# ---- the file list ----
expected=$(sort <<EOF
${dir[bindir]}/pme_info
${dir[bindir]}/pme_perf
${dir[bindir]}/pme_rawsock
${dir[sbindir]}/pme_route
${dir[libdir]}/${dir[sofile]}
${dir[libdir]}/${dir[soname]}
${dir[libdir]}/libpme.so
${dir[libdir]}/libpmecore.a
${dir[pkgconfigdir]}/pme.pc
${dir[includedir]}/pme.h
${dir[includedir]}/pme_wire.h
${dir[includedir]}/pme_ioctl.h
${dir[includedir]}/pme_route.h
${dir[mandir]}/man1/pme_info.1
${dir[mandir]}/man1/pme_perf.1
${dir[mandir]}/man7/pme.7
${dir[mandir]}/man8/pme_route.8
${dir[mandir]}/man8/pme_rawsock.8
${dir[udevrulesdir]}/60-pme.rules
${dir[sysusersdir]}/pme.conf
${dir[sysusersdir]}/pme-rawsock.conf
${dir[modulesloaddir]}/pme.conf
${dir[systemdsystemunitdir]}/pme-routes.service
${dir[docdir]}/README.md
${dir[docdir]}/LICENSE
${dir[docdir]}/doc/transport.md
${dir[docdir]}/doc/mpi.md
${dir[docdir]}/doc/kmod.md
${dir[docdir]}/doc/rawsock.md
${dir[docdir]}/doc/routes.md
${dir[docdir]}/doc/real-cluster.md
${dir[docdir]}/doc/security.md
${dir[docdir]}/doc/wireshark.md
EOF
)
got=$(cd "$dest" && find . ! -type d | sed 's|^\.||' | sort)
missing=$(comm -23 <(echo "$expected") <(echo "$got"))
extra=$(comm -13 <(echo "$expected") <(echo "$got"))
[ -z "$missing" ] || fail "make install left out: $(echo $missing)"
[ -z "$extra" ] || fail "make install put down files this test does not know (add them here): $(echo $extra)"
[ -z "$missing$extra" ] && ok "make install put down exactly the $(wc -l <<<"$got") expected files"

# Every installed program has its manual page: section 1 or 8 from bin, 8 from sbin.
for p in "$dest${dir[bindir]}"/* "$dest${dir[sbindir]}"/*; do
    n=${p##*/}
    case $p in
    "$dest${dir[sbindir]}"/*) secs=8 ;;
    *) secs="1 8" ;;
    esac
    found=
    for s in $secs; do [ -f "$dest${dir[mandir]}/man$s/$n.$s" ] && found=1; done
    [ -n "$found" ] || fail "$n is installed without a manual page (section ${secs// / or })"
done

# ---- the shared library ----
lib=$dest${dir[libdir]}
soname=$(readelf -d "$lib/${dir[sofile]}" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "${dir[soname]}" ] || fail "libpme's soname is '$soname', want ${dir[soname]}"
[ "$(readlink "$lib/${dir[soname]}")" = "${dir[sofile]}" ] ||
    fail "${dir[soname]} does not link to ${dir[sofile]}"
[ "$(readlink "$lib/libpme.so")" = "${dir[soname]}" ] || fail "libpme.so does not link to ${dir[soname]}"
# pme.h's functions, read by the compiler (comments do not count), the map, the exports.
declared=$(${CC:-cc} -E -P -D_GNU_SOURCE "$dest${dir[includedir]}/pme.h" |
    grep -oE '\bpme_[a-z0-9_]+ *\(' | tr -d '( ' | sort -u)
mapped=$(sed -n 's/^[[:space:]]*\(pme_[a-z0-9_]*\);.*/\1/p' "$src/src/pme_core/libpme.map" | sort -u)
exported=$(nm -D --defined-only "$lib/${dir[sofile]}" | awk '$2 ~ /^[TWDBR]$/ {print $3}' |
    sed 's/@.*//' | grep -v '^LIBPME' | sort -u)
[ "$(wc -l <<<"$declared")" -ge 40 ] || fail "found only $(wc -l <<<"$declared") functions in pme.h"
d=$(comm -3 <(echo "$declared") <(echo "$mapped") | tr -d '\t')
[ -z "$d" ] || fail "libpme.map and pme.h differ on: $(echo $d)"
d=$(comm -3 <(echo "$declared") <(echo "$exported") | tr -d '\t')
if [ -z "$d" ]; then
    ok "libpme.so exports the $(wc -l <<<"$exported") functions of pme.h and nothing else"
else
    fail "libpme.so's exports and pme.h differ on: $(echo $d)"
fi
# Read whole before grep: grep -q leaving early would kill nm with SIGPIPE (pipefail).
grep -q ' pme_send@@LIBPME_1$' <<<"$(nm -D "$lib/${dir[sofile]}")" ||
    fail "libpme.so's symbols are not versioned LIBPME_1"

# ---- pkg-config: a program of the library's user ----
cat >"$work/prog.c" <<'EOF'
#include <pme.h>
#include <pme_wire.h>
#include <stdio.h>
int main(void)
{
    struct pme_config cfg;
    pme_config_init(&cfg);
    printf("%s\n", pme_strerror(PME_ERR_PERM));
    return 0;
}
EOF
pc=$(PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$dest${dir[pkgconfigdir]} \
    pkg-config --cflags --libs pme 2>&1) || fail "pkg-config --cflags --libs pme: $pc"
if ${CC:-cc} -o "$work/prog" "$work/prog.c" $pc >"$work/cc.log" 2>&1; then
    out=$(LD_LIBRARY_PATH=$lib "$work/prog" 2>&1) && [ -n "$out" ] &&
        ok "a program built with pkg-config's flags runs against the installed libpme ($out)" ||
        fail "the program built against libpme did not run: $out"
    ldd_out=$(LD_LIBRARY_PATH=$lib ldd "$work/prog")
    grep -q "${dir[soname]} => $lib/${dir[soname]}" <<<"$ldd_out" ||
        fail "the program does not load ${dir[soname]} from the installed library: $ldd_out"
else
    fail "cannot build a program with pkg-config's flags: $(cat "$work/cc.log")"
fi
staticlib=$(PKG_CONFIG_PATH=$dest${dir[pkgconfigdir]} pkg-config --variable=staticlib pme)
[ "$staticlib" = "${dir[libdir]}/libpmecore.a" ] ||
    fail "pme.pc's staticlib is '$staticlib', want ${dir[libdir]}/libpmecore.a"

# ---- what the system reads ----
grep -qE '^KERNEL=="pme",.*GROUP="pme", MODE="0660"' "$dest${dir[udevrulesdir]}/60-pme.rules" ||
    fail "the udev rule does not give /dev/pme to group pme with mode 0660"
grep -qE '^g pme ' "$dest${dir[sysusersdir]}/pme.conf" || fail "sysusers.d/pme.conf does not make group pme"
grep -qE '^g pme-rawsock ' "$dest${dir[sysusersdir]}/pme-rawsock.conf" ||
    fail "sysusers.d/pme-rawsock.conf does not make group pme-rawsock"
grep -qx 'pme' "$dest${dir[modulesloaddir]}/pme.conf" || fail "modules-load.d/pme.conf does not load pme"
unit=$dest${dir[systemdsystemunitdir]}/pme-routes.service
grep -qx "ExecStart=${dir[sbindir]}/pme_route install /etc/pme/topology \$PME_ROUTE_OPTS" "$unit" ||
    fail "pme-routes.service does not run ${dir[sbindir]}/pme_route install /etc/pme/topology: $(grep ^Exec "$unit")"
grep -qx 'ConditionPathExists=/etc/pme/topology' "$unit" ||
    fail "pme-routes.service does not wait for /etc/pme/topology"
if command -v systemd-analyze >/dev/null; then
    # Checked with its programs where DESTDIR put them.
    mkdir -p "$work/unit"
    sed "s|${dir[sbindir]}/|$dest${dir[sbindir]}/|g" "$unit" >"$work/unit/pme-routes.service"
    v=$(systemd-analyze verify --man=no "$work/unit/pme-routes.service" 2>&1) ||
        fail "systemd-analyze verify pme-routes.service: $v"
fi

# ---- messages point at installed manuals ----
tree_refs=$(strings "$lib/${dir[sofile]}" "$dest${dir[bindir]}"/* "$dest${dir[sbindir]}"/* |
    grep -E '(doc/[a-z-]+\.md|kmod/|README\.md|maint/[a-z])' | sort -u)
[ -z "$tree_refs" ] || fail "messages that send the user to the source tree: $tree_refs"
for page in $(strings "$lib/${dir[sofile]}" "$dest${dir[bindir]}"/* "$dest${dir[sbindir]}"/* |
    grep -oE '\bpme(_[a-z]+)?\([1-8]\)' | sort -u); do
    n=${page%(*} s=${page#*(}
    s=${s%)}
    [ -f "$dest${dir[mandir]}/man$s/$n.$s" ] || fail "a message names $page, which is not installed"
done

# ---- make uninstall ----
if make -s -C "$build" uninstall DESTDIR="$dest" >"$work/uninstall.log" 2>&1; then
    left=$(cd "$dest" && find . ! -type d)
    [ -z "$left" ] && ok "make uninstall removed every file" ||
        fail "make uninstall left: $(echo $left)"
else
    cat "$work/uninstall.log"
    fail "make uninstall DESTDIR=... failed"
fi

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "make install and make uninstall: all checks passed"
