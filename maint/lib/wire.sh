# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# wire.sh - what maint/wire-bench and maint/kmod-bench share, sourced: the pair of
# network namespaces joined by one veth pair that both measure on, and the raw-frame
# and TCP references of maint/lib/rawwire.c, which the build makes.
#
#   wire_pair_up NAME MTU NET    namespaces NAMEa and NAMEb, the veth NAMEva in a and
#                                NAMEvb in b, both up with MTU, addresses NET.1/24 and
#                                NET.2/24 (for the TCP references); sets mac_a, mac_b
#   wire_veth_pair NAME MTU      the same without addresses (and sets nothing)
#   wire_pair_down NAME          removes both namespaces (and the veth with them)
#   A CMD..., B CMD...           run CMD in namespace a, b of the last pair made
#   rawwire_tool BUILD           RAWWIRE=BUILD/maint/lib/rawwire, brought up to date
#                                by make when BUILD is configured
# Needs root (namespaces).

# The prefix of the last pair made, for A and B; the source tree, for the messages.
wire_ns=
wire_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# wire_veth_pair NAME MTU: the namespaces and the veth, up, no addresses (test/netns's
# pair takes this alone).
wire_veth_pair() {
    local n=$1 mtu=$2 s
    ip netns add "${n}a"
    ip netns add "${n}b"
    ip link add "${n}va" type veth peer name "${n}vb"
    ip link set "${n}va" netns "${n}a"
    ip link set "${n}vb" netns "${n}b"
    for s in a b; do
        ip -n "${n}$s" link set lo up
        ip -n "${n}$s" link set "${n}v$s" mtu "$mtu" up
    done
}

wire_pair_up() {
    local n=$1 mtu=$2 net=$3
    wire_ns=$n
    wire_veth_pair "$n" "$mtu"
    ip -n "${n}a" addr add "$net.1/24" dev "${n}va"
    ip -n "${n}b" addr add "$net.2/24" dev "${n}vb"
    # shellcheck disable=SC2034 # for the scripts that source this file
    mac_a=$(ip -n "${n}a" -br link show "${n}va" | awk '{print $3}')
    # shellcheck disable=SC2034
    mac_b=$(ip -n "${n}b" -br link show "${n}vb" | awk '{print $3}')
    # The links come up (carrier, addresses) before anything is measured on them.
    sleep 0.5
}

wire_pair_down() {
    ip netns del "${1}a" 2>/dev/null || true
    ip netns del "${1}b" 2>/dev/null || true
}

A() { ip netns exec "${wire_ns}a" "$@"; }
B() { ip netns exec "${wire_ns}b" "$@"; }

# rawwire_tool BUILD: the build's rawwire (Makefile.am's noinst program, made by every
# make), remade here if rawwire.c changed since; without a configured BUILD, an error
# saying how to make one, never a compiler run of our own with other flags.
rawwire_tool() {
    local build=$1
    RAWWIRE=$build/maint/lib/rawwire
    if [ -f "$build/Makefile" ]; then
        make -s -C "$build" maint/lib/rawwire >/dev/null ||
            { echo "cannot make maint/lib/rawwire in $build (see make's output above)" >&2; return 1; }
    fi
    if [ ! -x "$RAWWIRE" ]; then
        echo "no $RAWWIRE: build PME in $build first ((cd $wire_top && ./autogen.sh) &&" \
            "mkdir -p $build && cd $build && $wire_top/configure && make; maint/test does it too)" >&2
        return 1
    fi
}
