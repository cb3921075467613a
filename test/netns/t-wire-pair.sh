#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# maint/lib/wire.sh's namespace pair, the one maint/wire-bench and maint/kmod-bench
# measure on, set up and taken down (nothing measured): wire_pair_up makes namespaces
# NAMEa and NAMEb with the veth NAMEva and NAMEvb up at the MTU asked, NET.1 and NET.2
# on them, mac_a and mac_b their MACs; A and B run commands in them, and a ping crosses
# the link; wire_pair_down removes both (the veth with them), and a second call is
# harmless. Needs root (namespaces).
# pme-test: tier=default cpu=30 time=2
set -euo pipefail
src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/test/netns/lib.sh"
need_root
# shellcheck source=maint/lib/wire.sh
. "$src/maint/lib/wire.sh"
n=pmewp$$
fail() { echo "FAIL: $*"; exit 1; }
trap 'wire_pair_down "$n"' EXIT

wire_pair_up "$n" 1500 169.254.77
for s in a b; do
    grep -qx "$n$s\( (id: [0-9]*)\)\{0,1\}" <<<"$(ip netns list)" || fail "no namespace $n$s"
done
[ "$(A cat "/sys/class/net/${n}va/mtu")" = 1500 ] || fail "${n}va's MTU is not 1500"
[ "$(B cat "/sys/class/net/${n}vb/operstate")" = up ] || fail "${n}vb is not up"
[ "$mac_a" = "$(A cat "/sys/class/net/${n}va/address")" ] || fail "mac_a $mac_a is not ${n}va's"
[ "$mac_b" = "$(B cat "/sys/class/net/${n}vb/address")" ] || fail "mac_b $mac_b is not ${n}vb's"
grep -q '169.254.77.2/24' <<<"$(B ip -br addr show "${n}vb")" || fail "${n}vb has not 169.254.77.2/24"
if command -v ping >/dev/null; then
    A ping -c 1 -W 2 169.254.77.2 >/dev/null || fail "no ping from a to b"
fi
echo "ok: wire_pair_up: two namespaces, the veth up at MTU 1500, addresses and MACs"

wire_pair_down "$n"
grep -q "^$n[ab]\b" <<<"$(ip netns list)" && fail "wire_pair_down left a namespace"
wire_pair_down "$n" || fail "a second wire_pair_down failed"
echo "ok: wire_pair_down removes both namespaces, twice harmlessly"
