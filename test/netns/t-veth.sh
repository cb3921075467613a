#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Messages of every size class cross a veth pair between two network namespaces intact
# and in order, through each raw-frame device (ring, the default, and pcap; the ring
# device both through its TX ring past the queueing discipline, PME_QDISC_BYPASS=auto on
# a veth, and with PME_TX_RING=0 through sendmmsg): without loss, and with 5% of frames dropped
# at random on the receiving interface before PME's socket sees them (maint/lib/linkloss.c),
# which PME recovers from by retransmitting.
# Two endpoints on the same interface (processes of one node, as MPI_Comm_spawn's
# children and their parent) reach each other too: their frames never arrive from the
# wire, only through the kernel's copy of outgoing frames to packet sockets.
# pme-test: tier=default cpu=190 time=28
set -u
. "$srcdir/test/netns/lib.sh"
need_root
need_tool
pair pmetv$$ 9000

# tiny, one-frame eager, multi-frame eager (up to 64 KiB), just past the eager limit (68
# KiB with the header), rendezvous of a few frames, of many frames
sizes=0,1,8,100,1000,8000,8950,9000,20000,65536,69632,100000,1m
run_device() { # device [PME_TX_RING]
    export PME_DEVICE=$1 PME_TX_RING=${2:-4m} PME_QDISC_BYPASS=auto
    echo "== $PME_DEVICE (PME_TX_RING=$PME_TX_RING): no loss"
    start_server pmetv$$b pmetv$$vb --verify
    out=$(ip netns exec pmetv$$a "$PME_PERF" client -i pmetv$$va --peer "$SERVER_ADDR" --verify \
        -s "$sizes" -n 10 --seconds 0.05) || { echo "$out"; echo "FAIL: client"; exit 1; }
    echo "$out"
    wait_server
    echo "$out" | grep -q "device $PME_DEVICE," || { echo "FAIL: the client did not use device $PME_DEVICE"; exit 1; }

    echo "== $PME_DEVICE: two endpoints on one interface"
    start_server pmetv$$a pmetv$$va --verify
    ip netns exec pmetv$$a "$PME_PERF" client -i pmetv$$va --peer "$SERVER_ADDR" --verify \
        -s 8,20000,1m -n 10 --seconds 0.05 || { echo "FAIL: client on the server's interface"; exit 1; }
    wait_server

    echo "== $PME_DEVICE: 5% loss on the receiving side of each direction"
    loss pmetv$$a pmetv$$va 5
    loss pmetv$$b pmetv$$vb 5
    start_server pmetv$$b pmetv$$vb --verify --counters
    out=$(ip netns exec pmetv$$a "$PME_PERF" client -i pmetv$$va --peer "$SERVER_ADDR" --verify \
        -s "$sizes" -n 10 --seconds 0.05 --counters) || { echo "$out"; echo "FAIL: client under loss"; exit 1; }
    echo "$out"
    wait_server
    dropped=$(loss_dropped pmetv$$b pmetv$$vb)
    echo "the loss dropped $dropped of the client's frames on the server's side"
    [ "${dropped:-0}" -gt 0 ] || { echo "FAIL: the loss dropped nothing"; exit 1; }
    echo "$out" | grep -q "all data verified" || { echo "FAIL: not verified"; exit 1; }
    # Each data frame lost is sent again at least once (a timeout resends more); of the
    # client's frames, only the few acknowledgements are never resent.
    retx=$(echo "$out" | sed -n 's/.*retransmitted \([0-9]*\).*/\1/p')
    [ "${retx:-0}" -ge $((dropped / 2)) ] ||
        { echo "FAIL: $dropped frames lost, only ${retx:-0} retransmitted"; exit 1; }
    # --counters: the client's list agrees with its summary; the server's shows the frames
    # it held after each gap until the lost ones came again (selective retransmission).
    echo "$out" | grep -qx "client counter retransmits $retx" ||
        { echo "FAIL: --counters does not list the $retx retransmissions"; exit 1; }
    grep -Eq '^server counter rx_held [1-9]' "$WORK/server.log" ||
        { cat "$WORK/server.log"; echo "FAIL: the server's --counters show no frame held after a gap"; exit 1; }
    echo "$PME_DEVICE: every size intact and in order under 5% loss ($retx frames retransmitted)"
    no_loss pmetv$$a pmetv$$va
    no_loss pmetv$$b pmetv$$vb
}

run_device ring
run_device ring 0
run_device pcap
