#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# kmod/ and the headers it shares with user space are in the kernel's style, as the
# kernel's own checkpatch.pl judges it: the driver's files with --strict, the shared
# headers (pme_wire.h, pme_ioctl.h, pme_route.h) at the default level. Those headers
# are also compiled in user space, where the kernel's __packed does not exist, so they
# spell it __attribute__((packed)) as the kernel's own uapi headers do; that one check
# is waived for them. Runs on the host: checkpatch.pl comes from Debian's linux-source
# package (maint/deps.sh kmod), extracted once into the build directory.
# pme-test: tier=default cpu=110 time=18 timeout=300
set -u
. "$srcdir/test/kmod/lib.sh"

checkpatch=${PME_CHECKPATCH:-}
if [ -z "$checkpatch" ]; then
    tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$tarball" ]; then
        if [ "$(id -u)" != 0 ]; then
            echo "needs checkpatch.pl: install linux-source (maint/deps.sh kmod) or set PME_CHECKPATCH"
            exit 77
        fi
        echo "FAIL: no /usr/src/linux-source-*.tar.xz (maint/test installs linux-source)"
        exit 1
    fi
    top=$(basename "$tarball" .tar.xz)
    dir=$builddir/checkpatch
    checkpatch=$dir/$top/scripts/checkpatch.pl
    if [ ! -e "$checkpatch" ]; then
        mkdir -p "$dir"
        tar -C "$dir" -xJf "$tarball" "$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
            "$top/scripts/const_structs.checkpatch" ||
            { echo "FAIL: cannot extract checkpatch.pl from $tarball"; exit 1; }
    fi
fi

fails=0
# checkpatch_clean: checkpatch options..., files...: ok when checkpatch finds nothing at all.
checkpatch_clean() {
    local out
    out=$(perl "$checkpatch" --no-tree --terse --show-types "$@" 2>&1)
    if [ -z "$out" ]; then
        return 0
    fi
    echo "$out"
    return 1
}
cd "$srcdir" || exit 1
# Not pme.mod.c: kbuild generates it in kmod/ whenever another kmod test built the module.
src=()
for f in kmod/*.c kmod/*.h; do
    case $f in *.mod.c) ;; *) src+=("$f") ;; esac
done
check "kmod/*.c and kmod/*.h: checkpatch --strict finds nothing" \
    checkpatch_clean --strict -f "${src[@]}"
check "shared headers: checkpatch finds nothing but the uapi spelling of packed" \
    checkpatch_clean --ignore PREFER_DEFINED_ATTRIBUTE_MACRO,EMBEDDED_FILENAME -f src/pme_core/pme_wire.h \
    src/pme_core/pme_ioctl.h src/pme_core/pme_route.h
# The test can fail: a line that breaks the style is found.
bad=$(mktemp --suffix=.c)
printf 'static int f(int a)\n{\n    if (a) return 1;\n\treturn 0;\n}\n' >"$bad"
check "checkpatch itself flags a badly styled file" not checkpatch_clean --strict -f "$bad"
rm -f "$bad"
verdict
