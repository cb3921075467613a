#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Wireshark dissector on an MPI job: test/mpi/pingpong over ch4:pme between the two
# nodes of a virtual cluster (eager and rendezvous sizes), captured with tcpdump in node
# 0's namespace on its data interface, decoded with tools/wireshark/pme.lua. Every
# frame decodes as PME without a malformed mark, a Lua error or an expert info other
# than the MAC the dissector cannot check (the job's frames carry GMACs under the job
# secret, which the capture does not have); every message frame (DATA and RTS that
# starts a message) carries the netmod's header with a known MPIDIG handler, the send
# handler's MPIDIG header is decoded (ranks 0 and 1, the program's tag), and the
# ranks' own tally (pingpong's sizes and iterations) is what the frames show.
# Root only; MPICH with ch4:pme (PME_MPICH_PREBUILT, see test/mpi/lib.sh).
# pme-test: tier=default cpu=90 time=9 needs=mpich
set -euo pipefail
. "$srcdir/test/tools/lib.sh"
. "$srcdir/test/mpi/lib.sh"
pme_require_root
tools_need_tshark
command -v tcpdump >/dev/null || tools_skip "needs tcpdump (apt-get install tcpdump)"
pme_need_mpich
pme_tmpdir
D=$REPLY
ws_setup
trap 'set +e; capture_stop; ws_cleanup; pme_cleanup' EXIT
pme_compile "$D/pingpong" "$srcdir/test/mpi/pingpong.c"
pme_cluster_name wsm
NAME=$REPLY
pme_cluster_up "$NAME" --nodes 2 --mtu 9000
ifc=$(awk -F'\t' '$1 == "iface" && $2 == 0 { print $3; exit }' "/run/vcluster/$NAME/cluster.tsv")
[ -n "$ifc" ] || tools_fail "node 0 of $NAME has no data interface in its description"

capture_start "$NAME-n0" "$ifc" "$D/mpi.pcap" "$D/tcpdump.log"
# Sizes up to 256 KiB: eager below the threshold, PME's rendezvous above it.
iters=5 max=262144
pme_mpiexec "$NAME" -n 2 -ppn 1 "$D/pingpong" -n $iters -max $max >"$D/mpi.log" 2>&1 ||
    { cat "$D/mpi.log"; tools_fail "pingpong over ch4:pme failed"; }
sleep 0.2
capture_stop
capture_complete "$D/tcpdump.log"

ws_tshark -r "$D/mpi.pcap" -T fields -E separator=/t -E occurrence=f -e frame.protocols \
    -e pme.type -e pme.flags.first -e pmempi.handler -e pmempi.send.src_rank \
    -e pmempi.send.tag -e pmempi.send.data_sz -e pme.check.status -e pme.seq -e eth.src \
    >"$D/frames"
total=$(wc -l <"$D/frames")
echo "captured $total frames"
[ "$total" -gt 0 ] || tools_fail "the capture holds no PME frame"
bad=$(awk -F'\t' '$1 !~ /:pme(:pmempi)?$/' "$D/frames" | head -n 3)
[ -z "$bad" ] || tools_fail "frames not decoded as PME: $bad"
bad=$(ws_experts "$D/mpi.pcap" | awk '$2 != "-" && $2 != "pme.expert.mac_unverified"' | head -n 5)
[ -z "$bad" ] || tools_fail "frames with expert infos beyond an unverifiable MAC: $bad"
echo "every frame decodes as PME, with no expert info but an unverifiable MAC"

# Message frames: a DATA frame that starts a message, or an RTS. Each carries the
# netmod's header with a handler the dissector names (counted once per sender and seq:
# a retransmitted frame is the same message).
read -r msgs with_hdr sends <<<"$(awk -F'\t' '
    ($2 == 1 && ($3 == "1" || $3 == "True")) || $2 == 2 {
        k = $10 SUBSEP $9; if (k in seen) next; seen[k] = 1
        n++; if ($4 != "") h++; if ($4 == 0 && $5 != "") s++ }
    END { print n + 0, h + 0, s + 0 }' "$D/frames")"
echo "message frames $msgs, with the netmod's header $with_hdr, MPIDIG send headers decoded $sends"
[ "$msgs" -gt 0 ] || tools_fail "no DATA or RTS frame starts a message"
[ "$with_hdr" = "$msgs" ] || tools_fail "$((msgs - with_hdr)) message frames without the netmod's header"

# pingpong sends, for each size 0, 1, 2, 4 ... max, one warm-up round and then $iters
# round trips (see pingpong.c): the send headers show the two ranks, and the largest
# message size decoded is max.
awk -F'\t' '$5 != ""' "$D/frames" | cut -f 5 | sort -u | tr '\n' ' ' >"$D/ranks"
[ "$(cat "$D/ranks")" = "0 1 " ] || tools_fail "send headers name ranks $(cat "$D/ranks"), not 0 and 1"
largest=$(awk -F'\t' '$7 != "" && $7 + 0 > m { m = $7 + 0 } END { print m + 0 }' "$D/frames")
[ "$largest" = "$max" ] || tools_fail "the largest message decoded is $largest bytes, pingpong sent $max"
echo "the dissector finds the netmod's and MPIDIG's headers of the MPI job"
