# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# linkloss.sh - linkloss_tool TOP: LINKLOSS = the linkloss program of the tree at TOP
# (maint/lib/linkloss.c: random loss before anything on the host sees a frame, packet
# sockets included), compiled into TOP/build on first use and whenever its source is newer.
linkloss_tool() {
    local src=$1/maint/lib/linkloss.c out=$1/build/linkloss
    if [ ! -x "$out" ] || [ "$src" -nt "$out" ]; then
        mkdir -p "$1/build" && cc -O2 -Wall -o "$out.$$" "$src" && mv -f "$out.$$" "$out" || {
            echo "cannot build $src: it needs a C compiler and the kernel's headers" >&2
            return 1
        }
    fi
    LINKLOSS=$out
}
