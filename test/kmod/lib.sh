# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - helpers for the tests of pme.ko (test/kmod/t-*.sh).
#
# Each test is one script that runs twice: on the host it checks what it needs and then
# re-runs itself inside a qemu guest (maint/vm), where the module can be loaded; the
# guest's run fails if its kernel log shows a BUG, WARNING, oops or leak. Sourced with
# $srcdir set (test/run-tests.sh sets it, and builddir).

kmod_need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "needs root (maint/vm shares the whole root file system with its guest)"
        exit 77
    fi
}

# The module, built on the host against the guest's kernel (the host's cannot load it).
kmod_build() {
    local log
    log=$(mktemp)
    if ! nice -n 10 make -s -C "$srcdir/kmod" >"$log" 2>&1; then
        cat "$log"
        rm -f "$log"
        echo "FAIL: make -C kmod"
        exit 1
    fi
    rm -f "$log"
}

# in_vm [maint/vm options]: on the host, run this very script in a guest and exit with
# its status; in the guest, return at once so the script goes on.
in_vm() {
    [ -n "${PME_IN_VM:-}" ] && return 0
    PME_IN_VM=1 exec "$srcdir/maint/vm" "$@" -- bash "$0"
}

# The test programs, built on the host by make check.
kmod_need_tools() {
    PME_PERF=$builddir/src/tools/pme_perf
    KMOD_TOOL=$builddir/test/kmod/kmod_tool
    KPING=$builddir/test/kmod/kping
    NAPPER=$builddir/test/kmod/napper
    KREPLAY=$builddir/test/kmod/kreplay
    local t
    for t in "$PME_PERF" "$KMOD_TOOL" "$KPING" "$NAPPER" "$KREPLAY"; do
        [ -x "$t" ] || { echo "FAIL: $t not built (make check builds it)"; exit 1; }
    done
}

# On the host: MPICH with ch4:pme in KMOD_MPICH (PME_MPICH_PREBUILT, else what
# maint/build-mpich builds), or fail.
kmod_mpich() {
    KMOD_MPICH=${PME_MPICH_PREBUILT:-}
    if [ -z "$KMOD_MPICH" ]; then
        KMOD_MPICH=$("$srcdir/maint/build-mpich" -q) || { echo "FAIL: maint/build-mpich"; exit 1; }
        KMOD_MPICH=${KMOD_MPICH##*prefix: }
    fi
    [ -x "$KMOD_MPICH/bin/mpicc" ] || { echo "FAIL: no mpicc in $KMOD_MPICH/bin"; exit 1; }
}

# kmod_wait_server PID: wait until the server PID wrote its address to $WORK/addr; fail
# with its log ($WORK/server.log) if it ends first.
kmod_wait_server() {
    local pid=$1
    for _ in $(seq 200); do
        [ -s "$WORK/addr" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    cat "$WORK/server.log"
    echo "FAIL: the server did not start"
    exit 1
}

# In the guest: load the module just built, with the given parameters.
# In the guest: what pme.ko needs (gf128mul), which insmod does not load (modprobe of
# an installed module would).
kmod_deps() {
    modprobe -a $(modinfo -F depends "$srcdir/kmod/pme.ko" | tr , ' ') ||
        { echo "FAIL: modprobe of pme.ko's dependencies"; exit 1; }
}

kmod_load() {
    kmod_deps
    insmod "$srcdir/kmod/pme.ko" "$@" || { echo "FAIL: insmod pme.ko"; exit 1; }
    udevadm_settle_dev
}

# In the guest: an unprivileged user, in group pme or not.
# kmod_pair NAME [MTU]: namespaces NAMEa and NAMEb joined by a veth pair NAMEva-NAMEvb,
# both ends up (at MTU when given). The guest goes with them, so nothing removes them.
kmod_pair() {
    local n=$1 mtu=${2:-} s
    ip netns add "${n}a"
    ip netns add "${n}b"
    ip link add "${n}va" type veth peer name "${n}vb"
    ip link set "${n}va" netns "${n}a"
    ip link set "${n}vb" netns "${n}b"
    for s in a b; do ip -n "${n}$s" link set "${n}v$s" ${mtu:+mtu "$mtu"} up; done
}

kmod_user() { # name, "pme" to add it to group pme
    id "$1" >/dev/null 2>&1 || useradd -M -s /bin/bash "$1"
    [ "${2:-}" = pme ] && usermod -aG pme "$1"
    return 0
}

# as_user NAME COMMAND...: run as NAME with NAME's groups.
as_user() {
    local u=$1
    shift
    setpriv --reuid="$u" --regid="$u" --init-groups -- "$@"
}

# No udev runs in the guest: wait for devtmpfs to show /dev/pme, then give it the
# owner and mode the udev rule (kmod/60-pme.rules) would.
udevadm_settle_dev() {
    local i
    for i in $(seq 50); do
        [ -c /dev/pme ] && break
        sleep 0.05
    done
    [ -c /dev/pme ] || { echo "FAIL: no /dev/pme after insmod"; exit 1; }
    getent group pme >/dev/null || groupadd -r pme
    chgrp pme /dev/pme
    chmod 0660 /dev/pme
}

kmod_unload() {
    rmmod pme || { echo "FAIL: rmmod pme"; exit 1; }
}

fails=0
check() { # description, command...: counts a failure instead of stopping
    local what=$1
    shift
    if "$@"; then
        echo "ok: $what"
    else
        echo "FAIL: $what"
        fails=$((fails + 1))
    fi
}

not() { ! "$@"; }
starts() { [[ $1 == "$2"* ]]; } # string, prefix

verdict() {
    if [ "$fails" -gt 0 ]; then
        echo "$fails check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}
