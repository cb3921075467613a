#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# t-deb.sh - the Debian packages, as a site installs them:
#   - on the host, `dpkg-buildpackage -us -uc -b` in a copy of the tree makes pme-dkms,
#     pme-tools, libpme1 and libpme-dev, each with the files it is for; lintian reports
#     no error, and no warning but the kept ones below;
#   - in a qemu guest, on a fresh overlay of the root (nothing of a former run, no PME
#     program on PATH before), `dpkg -i` of the four installs them: pme-dkms's postinst
#     has DKMS build and install pme.ko for the guest's kernel (in the guest itself:
#     the module loaded is DKMS's, not one built by the test) and creates group pme;
#     pme-tools's creates group pme-rawsock and makes pme_rawsock root:pme-rawsock, mode
#     0750 with cap_net_raw+ep (or 4750); `modprobe pme` loads DKMS's module; the
#     package's udev rule gives /dev/pme to group pme, mode 0660; a program built with
#     `pkg-config --cflags --libs pme` runs against the installed libpme.so.1; and the
#     installed pme_perf, run by a member of group pme without any capability, passes
#     its verified ping-pong and stream between two network namespaces through /dev/pme;
#   - `dpkg --purge` removes them, the module from the kernel's tree included.
# Lintian's kept findings (none is a warning or an error today): pedantic
# repeated-path-segment on usr/share/doc/pme-tools/doc/, where the manuals keep the
# tree's layout so that README.md's links to doc/*.md work; info
# package-supports-alternative-init-but-no-init.d-script, as pme-routes.service is a
# one-shot at boot with no daemon, for systemd (sysvinit sites run pme_route install
# from their own boot scripts).
# pme-test: tier=full cpu=90 time=1750 timeout=3600
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root
T=$builddir/deb-test
debs="pme-dkms libpme1 libpme-dev pme-tools"
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$srcdir/kmod/dkms.conf")

if [ -z "${PME_IN_VM:-}" ]; then
    for c in dpkg-buildpackage dh dh_dkms lintian; do
        command -v $c >/dev/null || { echo "FAIL: $c is not installed (maint/deps.sh kmod)"; exit 1; }
    done
    rm -rf "$T"
    mkdir -p "$T/src/pme-$version"
    # A copy of the tree, as git knows it in a clone, whole otherwise (a tarball).
    if [ -e "$srcdir/.git" ]; then
        (cd "$srcdir" && git ls-files -co --exclude-standard |
            while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
            cpio -pdm --quiet "$T/src/pme-$version")
    else
        (cd "$srcdir" && tar -c --exclude=./build --exclude='./build-*' --exclude=.git . |
            tar -x -C "$T/src/pme-$version")
    fi
    # make check's tests of the tree run in make distcheck (test/dist/t-distcheck.sh).
    (cd "$T/src/pme-$version" && DEB_BUILD_OPTIONS=nocheck nice -n 10 \
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL dpkg-buildpackage -us -uc -b -j2) \
        >"$T/build.log" 2>&1 && rc=0 || rc=$?
    check "dpkg-buildpackage -us -uc -b (exit $rc)" [ "$rc" = 0 ]
    [ "$rc" = 0 ] || { tail -40 "$T/build.log"; verdict; }
    for p in $debs; do
        f=$(ls "$T/src/${p}_${version}"_*.deb 2>/dev/null | head -n 1)
        check "it made $p" [ -n "$f" ]
        [ -n "$f" ] && dpkg-deb -c "$f" | awk '{print $6}' | sed 's|^\.||' >"$T/$p.files"
    done
    [ "$fails" = 0 ] || verdict
    has() { grep -qx -- "$2" "$T/$1.files" || { echo "  $1 lacks $2"; return 1; }; }
    check "pme-dkms: the driver's source for DKMS, the udev rule, sysusers and modules-load" \
        eval 'has pme-dkms /usr/src/pme-'"$version"'/dkms.conf &&
        has pme-dkms /usr/src/pme-'"$version"'/include/pme_wire.h &&
        has pme-dkms /lib/udev/rules.d/60-pme.rules &&
        has pme-dkms /usr/lib/sysusers.d/pme.conf && has pme-dkms /usr/lib/modules-load.d/pme.conf'
    check "pme-tools: the four tools, their manuals, the unit, group pme-rawsock" \
        eval 'has pme-tools /usr/bin/pme_info && has pme-tools /usr/bin/pme_perf &&
        has pme-tools /usr/bin/pme_rawsock && has pme-tools /usr/sbin/pme_route &&
        has pme-tools /usr/share/man/man7/pme.7.gz && has pme-tools /usr/share/man/man8/pme_rawsock.8.gz &&
        has pme-tools /lib/systemd/system/pme-routes.service &&
        has pme-tools /usr/lib/sysusers.d/pme-rawsock.conf &&
        has pme-tools /usr/share/doc/pme-tools/doc/real-cluster.md.gz'
    check "libpme1: libpme.so.1" grep -q '/libpme\.so\.1$' "$T/libpme1.files"
    check "libpme-dev: headers, libpme.so, libpmecore.a, pme.pc" \
        eval 'has libpme-dev /usr/include/pme.h && grep -q "/libpme\.so$" "$T/libpme-dev.files" &&
        grep -q "/libpmecore\.a$" "$T/libpme-dev.files" && grep -q "/pkgconfig/pme\.pc$" "$T/libpme-dev.files"'
    check "no package but pme-dkms holds files of /usr/src" \
        eval '! grep -l "^/usr/src/." "$T/libpme1.files" "$T/libpme-dev.files" "$T/pme-tools.files"'
    check "pme-dkms depends on dkms" \
        eval 'dpkg-deb -f "$T/src/pme-dkms_${version}_all.deb" Depends | grep -q "\bdkms\b"'
    lintian --pedantic "$T/src/pme_${version}"_*.changes >"$T/lintian.log" 2>&1
    errors=$(grep -E '^E: ' "$T/lintian.log")
    warnings=$(grep -E '^W: ' "$T/lintian.log")
    check "lintian reports no error${errors:+: $errors}" [ -z "$errors" ]
    check "lintian reports no warning${warnings:+: $warnings}" [ -z "$warnings" ]
    grep -E '^[IP]: ' "$T/lintian.log"
    [ "$fails" = 0 ] || verdict
fi

in_vm --timeout 3300
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
kver=$(uname -r)
check "no PME program is on PATH before the packages" \
    eval '! command -v pme_perf && ! command -v pme_info && ! command -v pme_route'
check "no pme.ko is installed for $kver before" not modinfo -n pme
files=()
for p in $debs; do files+=("$(ls "$T/src/${p}_${version}"_*.deb | head -n 1)"); done
start=$SECONDS
DEBIAN_FRONTEND=noninteractive dpkg -i "${files[@]}" >"$T/dpkg.log" 2>&1 && rc=0 || rc=$?
check "dpkg -i of the four packages (exit $rc, $((SECONDS - start)) s)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || { tail -40 "$T/dpkg.log"; verdict; }
check "DKMS built and installed pme $version for $kver" \
    eval 'dkms status pme | grep -q "pme/$version, $kver, .*: installed"'
ko=$(modinfo -n pme 2>/dev/null)
check "modprobe finds DKMS's module ($ko)" starts "$ko" "/lib/modules/$kver/updates/dkms/pme.ko"
check "group pme exists" getent group pme
check "group pme-rawsock exists" getent group pme-rawsock
rs=$(stat -c '%U:%G %a' /usr/bin/pme_rawsock)
cap=$(getcap /usr/bin/pme_rawsock 2>/dev/null)
check "pme_rawsock is root:pme-rawsock 0750 with cap_net_raw+ep, or 4750 ($rs; $cap)" \
    eval '[ "$rs" = "root:pme-rawsock 4750" ] ||
        { [ "$rs" = "root:pme-rawsock 750" ] && grep -q "cap_net_raw[=+]ep" <<<"$cap"; }'
check "modprobe pme loads it" modprobe pme
check "the module loaded is DKMS's build" \
    eval '[ "$(cat /sys/module/pme/srcversion)" = "$(modinfo -F srcversion "$ko")" ]'
for _ in $(seq 50); do [ -c /dev/pme ] && break; sleep 0.05; done
check "/dev/pme appears" [ -c /dev/pme ]
# No udev daemon runs in the guest: udevadm test shows what the package's rule does,
# then the device gets that owner and mode by hand.
out=$(udevadm test /devices/virtual/misc/pme 2>&1)
check "the package's udev rule gives /dev/pme to group pme" \
    grep -q "60-pme.rules:[0-9]* GROUP $(getent group pme | cut -d: -f3)\$" <<<"$out"
check "with mode 0660" grep -q "60-pme.rules:[0-9]* MODE 0660\$" <<<"$out"
chgrp pme /dev/pme
chmod 0660 /dev/pme

# libpme1 and libpme-dev: a program of the library's user.
WORK=$(mktemp -d)
chmod 755 "$WORK"
printf '#include <pme.h>\n#include <stdio.h>\nint main(void) { struct pme_config c; pme_config_init(&c);
    printf("%%s\\n", pme_strerror(PME_ERR_PERM)); return 0; }\n' >"$WORK/prog.c"
# shellcheck disable=SC2046
check "a program builds with pkg-config's flags for pme" \
    cc -o "$WORK/prog" "$WORK/prog.c" $(pkg-config --cflags --libs pme)
# (/lib is /usr/lib on Debian 12, and ld.so's cache names the former)
check "and runs against the installed libpme.so.1" \
    eval 'ldd "$WORK/prog" | grep -Eq "libpme.so.1 => /(usr/)?lib/[^ ]*/libpme.so.1 " && "$WORK/prog"'

# pme_perf, installed, as a member of group pme without privilege, between namespaces.
modprobe veth
kmod_user pmedeb pme
n=pmedb
kmod_pair $n 9000
chmod 777 "$WORK"
user=(setpriv --reuid=pmedeb --regid=pmedeb --init-groups --inh-caps=-all --bounding-set=-all --)
export PME_DEVICE=kernel
ip netns exec ${n}b "${user[@]}" /usr/bin/pme_perf server -i ${n}vb --addr-file "$WORK/addr" \
    --verify >"$WORK/server.log" 2>&1 &
SERVER=$!
kmod_wait_server $SERVER
out=$(ip netns exec ${n}a "${user[@]}" /usr/bin/pme_perf client -i ${n}va --peer "$(cat "$WORK/addr")" \
    --verify -s 8,100000 -n 3 --seconds 0.05 2>&1) && rc=0 || rc=$?
echo "$out"
wait $SERVER && src=0 || src=$?
check "the installed pme_perf, as a member of group pme: client (exit $rc) and server (exit $src)" \
    [ "$rc$src" = 00 ]
check "through the kernel device" grep -q "device kernel," <<<"$out"
check "every message verified" grep -q "all data verified" <<<"$out"

check "rmmod pme" rmmod pme
start=$SECONDS
DEBIAN_FRONTEND=noninteractive dpkg --purge pme-tools libpme-dev libpme1 pme-dkms >"$T/purge.log" 2>&1 && rc=0 || rc=$?
check "dpkg --purge of the four (exit $rc, $((SECONDS - start)) s)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -20 "$T/purge.log"
check "pme.ko is gone from the kernel's tree" not modinfo -n pme
check "and pme_rawsock's owner and mode with pme-tools" \
    not dpkg-statoverride --list /usr/bin/pme_rawsock
verdict
