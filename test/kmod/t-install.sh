#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The install procedure of kmod/README.md works: `make dkms-source` gives a source tree
# that stands on its own and builds warning-free with W=1, `dkms build` and
# `dkms install` put pme.ko where modprobe finds it, modprobe loads it, and the udev
# rule gives /dev/pme to group pme with mode 0660.
# pme-test: tier=default cpu=70 time=70
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root
T=$builddir/kmod-dkms
kver=$(ls /lib/modules | grep '^6\.1\.' | sort -V | tail -n 1)
dkms_args=(-m pme -v "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$srcdir/kmod/dkms.conf")"
    -k "$kver" --sourcetree "$T/usr/src" --dkmstree "$T/dkms")
if [ -z "${PME_IN_VM:-}" ]; then
    command -v dkms >/dev/null || { echo "FAIL: dkms is not installed (maint/deps.sh kmod)"; exit 1; }
    rm -rf "$T"
    mkdir -p "$T/dkms"
    make -s -C "$srcdir/kmod" dkms-source DESTDIR="$T" || { echo "FAIL: make dkms-source"; exit 1; }
    # A copy of the DKMS source built with the kernel's extra warnings.
    cp -r "$T/usr/src/pme-${dkms_args[3]}" "$T/w1"
    # Without the calling make's flags: under `make check -jN` they make the kernel's
    # make print "jobserver unavailable", a warning of make's, not of the compiler's.
    nice -n 10 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$T/w1" KVER="$kver" W=1 \
        >"$T/w1.log" 2>&1 && rc=0 || rc=$?
    check "the DKMS source tree builds on its own with W=1 (exit $rc)" [ "$rc" = 0 ]
    check "without a warning" not grep -B2 -A6 "warning:" "$T/w1.log"
    nice -n 10 dkms build "${dkms_args[@]}" >"$T/build.log" 2>&1 && rc=0 || rc=$?
    check "dkms build (exit $rc)" [ "$rc" = 0 ]
    [ "$rc" = 0 ] || cat "$T/build.log"
    [ "$fails" = 0 ] || verdict
    # dkms install writes into the kernel's module tree and runs depmod there: on this
    # machine, in a mount namespace of its own where that tree is an overlay, whose
    # changes the guest then lays over its own (depmod itself under TCG takes minutes).
    mkdir -p "$T/ovl"
    unshare -m --propagation private bash -c '
        set -e
        t=$1 k=$2
        shift 2
        mount -t tmpfs ovl "$t/ovl"
        mkdir "$t/ovl/upper" "$t/ovl/work"
        mount -t overlay -o "lowerdir=/lib/modules/$k,upperdir=$t/ovl/upper,workdir=$t/ovl/work" \
            overlay "/lib/modules/$k"
        dkms install "$@" >"$t/install.log" 2>&1
        cp -a "$t/ovl/upper" "$t/modtree"' install "$T" "$kver" "${dkms_args[@]}" && rc=0 || rc=$?
    check "dkms install (exit $rc)" [ "$rc" = 0 ]
    [ "$rc" = 0 ] || cat "$T/install.log"
    check "it put pme.ko into the kernel's module tree" \
        [ -f "$T/modtree/updates/dkms/pme.ko" ]
    check "and ran depmod there" grep -q "updates/dkms/pme.ko:" "$T/modtree/modules.dep"
    [ "$fails" = 0 ] || verdict
fi
in_vm --timeout 240
cp -a "$T/modtree/." "/lib/modules/$kver/"
check "modprobe pme loads the installed module" modprobe pme
for _ in $(seq 50); do [ -c /dev/pme ] && break; sleep 0.05; done
check "/dev/pme appears" [ -c /dev/pme ]
groupadd -r pme
install -m 0644 "$srcdir/kmod/60-pme.rules" /etc/udev/rules.d/60-pme.rules
out=$(udevadm test /devices/virtual/misc/pme 2>&1)
check "the udev rule gives /dev/pme to group pme" \
    grep -q "60-pme.rules:[0-9]* GROUP $(getent group pme | cut -d: -f3)\$" <<<"$out"
check "with mode 0660" grep -q "60-pme.rules:[0-9]* MODE 0660\$" <<<"$out"
check "rmmod" rmmod pme
verdict
