#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pme_wait keeps the caller's deadline on each raw-frame device, sleeping on the device
# (block mode, and auto mode after PME_SPIN_US), and leaves the thread's timer slack as
# it found it. See test/netns/wait_deadline.c.
# pme-test: tier=default cpu=all time=2
set -u
. "$srcdir/test/netns/lib.sh"
need_root
prog=$(need_built test/netns/wait_deadline) || exit 1
pair pmetw$$ 9000
for dev in ring pcap; do
    echo "== $dev"
    PME_DEVICE=$dev ip netns exec pmetw$$a "$prog" pmetw$$va || { echo "FAIL: device $dev"; exit 1; }
done
