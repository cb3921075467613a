#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster's link settings, computed (maint/lib/vcluster/links.sh, no root, nothing
# made): --rate in tc's units becomes bits per second; the default tbf burst is 5 ms at
# the rate but at least 10 full frames; --loss becomes the loss program's threshold in 100000
# (resolution 0.001%); bad values exit 2 and say why; the link ends that shaping treats
# are both ends of every data link (a switch's ports included).
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=40 time=1
. "$(dirname "$0")/lib.sh"
# shellcheck source=maint/lib/vcluster/base.sh
. "$VC_SRCDIR/maint/lib/vcluster/base.sh"
# shellcheck source=maint/lib/vcluster/topology.sh
. "$VC_SRCDIR/maint/lib/vcluster/topology.sh"
# shellcheck source=maint/lib/vcluster/links.sh
. "$VC_SRCDIR/maint/lib/vcluster/links.sh"

while read -r rate bps; do
    parse_rate "$rate"
    [ "$RATE_BPS" = "$bps" ] || fail "--rate $rate: $RATE_BPS bit/s, expected $bps"
done <<'EOF'
1gbit 1000000000
100mbit 100000000
1.5mbit 1500000
10gbps 80000000000
8000bit 8000
1kbps 8000
2tbit 2000000000000
EOF
vc_expect_exit 2 "expected a number and a tc unit" parse_rate fast
vc_expect_exit 2 "expected a number and a tc unit" parse_rate 10
vc_expect_exit 2 "too low" parse_rate 7kbit
say "ok: --rate in tc units (bit, kbit .. tbit; bps .. tbps = bytes) to bits per second"

while read -r rate mtu burst; do
    parse_rate "$rate"
    MTU=$mtu
    default_burst
    [ "$BURST" = "$burst" ] || fail "--rate $rate --mtu $mtu: default burst $BURST, expected $burst"
done <<'EOF'
1gbit 1500 625000
10gbit 9000 6250000
10mbit 9000 90140
100mbit 1500 62500
1mbit 1500 15140
EOF
say "ok: default burst: 5 ms at the rate, at least 10 frames of MTU + 14 bytes"

while read -r loss norm thr; do
    parse_loss "$loss"
    [ "$LOSS $LOSS_THR" = "$norm $thr" ] || fail "--loss $loss: $LOSS% threshold $LOSS_THR, expected $norm% $thr"
done <<'EOF'
0 0 0
5 5 5000
0.1 0.1 100
1.50 1.5 1500
0.005 0.005 5
007 7 7000
100 100 100000
100.000 100 100000
EOF
vc_expect_exit 2 "at most 100" parse_loss 101
vc_expect_exit 2 "at most 100" parse_loss 100.001
vc_expect_exit 2 "resolution is 0.001%" parse_loss 0.0001
vc_expect_exit 2 "expected a percentage" parse_loss abc
vc_expect_exit 2 "expected a percentage" parse_loss -1
say "ok: --loss to a threshold in 100000 (0.1 -> 100, 1.50 -> 1.5% = 1500)"

NAME=lk
NODES=2 TOPO=switch NICS=2 DIMS=()
compute_ifaces
want="lk-n0 eth0 eth1
lk-n1 eth0 eth1
lk-sw n0r0 n0r1 n1r0 n1r1"
[ "$(data_link_ends)" = "$want" ] || fail "switch link ends:
$(data_link_ends)"
NODES=4 TOPO=torus DIMS=(2 2) NICS=4
compute_ifaces
want="lk-n0 xp xm yp ym
lk-n1 xp xm yp ym
lk-n2 xp xm yp ym
lk-n3 xp xm yp ym"
[ "$(data_link_ends)" = "$want" ] || fail "torus link ends:
$(data_link_ends)"
say "ok: link ends: every node's data interfaces, and a switch's ports"
