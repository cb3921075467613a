#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Soak: every kind of link fault at once (drop, duplicate, corrupt, delay, reorder) on
# both data interfaces of a 2-node switched cluster, and two pme_once streams of every
# size class running against each other, one each way, for PME_SOAK_SECONDS (default
# 45; 600 in the full tier, PME_TEST_FULL=1). Every byte must arrive exactly once, in order,
# intact, and the injector must have done every kind of fault many times. The seed is
# printed and PME_FAULT_SEED repeats a run.
# "test && test || fail" is these tests' idiom for checks:
# shellcheck disable=SC2015
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=40 time=51
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/vcluster/faults-lib.sh
. "$(dirname "$0")/faults-lib.sh"
vc_init vfs
faults_init
ONCE=${builddir:-$VC_SRCDIR/build}/test/vcluster/pme_once
[ -x "$ONCE" ] || fail "test/vcluster/pme_once is not built (make check builds it)"
SECS=${PME_SOAK_SECONDS:-45}
[ "${PME_TEST_FULL:-0}" = 1 ] && SECS=${PME_SOAK_SECONDS:-600}
SEED=${PME_FAULT_SEED:-$(date +%s)}
FAULTS_SET=(drop=1% dup=1% corrupt=0.5% delay=5%:1ms reorder=2%:1ms)

vc_up "$NAME" --topology switch --nodes 2 >/dev/null
"$FAULTS" apply --name "$NAME" clear reset "${FAULTS_SET[@]}" "seed=$SEED" >/dev/null ||
    fail "maint/faults apply failed"
say "soak: ${FAULTS_SET[*]} seed=$SEED on both links, two streams for $SECS s"

# stream FROM TO: pme_once from node FROM to node TO; output in $TMPD/send.FROM and
# $TMPD/recv.TO, pids in SPID and RPID.
stream() {
    local from=$1 to=$2 i
    rm -f "$TMPD/addr.$to"
    vc_bg "$NAME" "$NAME-n$to" "$ONCE" recv -i eth0 --addr-file "$TMPD/addr.$to" >"$TMPD/recv.$to" 2>&1
    RPID=$BGPID
    for ((i = 0; i < 100; i++)); do [ -s "$TMPD/addr.$to" ] && break; sleep 0.05; done
    [ -s "$TMPD/addr.$to" ] || { cat "$TMPD/recv.$to"; fail "receiver on node $to did not start"; }
    vc_bg "$NAME" "$NAME-n$from" "$ONCE" send -i eth0 --peer "$(cat "$TMPD/addr.$to")" \
        --seconds "$SECS" >"$TMPD/send.$from" 2>&1
    SPID=$BGPID
}

stream 0 1; s01=$SPID r01=$RPID
stream 1 0; s10=$SPID r10=$RPID
rc=0
for p in "$s01" "$r01" "$s10" "$r10"; do wait "$p" || rc=1; done
cat "$TMPD"/send.* "$TMPD"/recv.*
[ $rc = 0 ] || fail "a stream failed under faults (seed $SEED: PME_FAULT_SEED=$SEED repeats the faults)"
for f in "$TMPD"/send.* "$TMPD"/recv.*; do
    grep -q "each once, in order, intact" "$f" || fail "${f##*/} did not confirm exactly-once delivery"
done

totals=$("$FAULTS" totals --name "$NAME")
say "injector: $totals"
for k in dropped duplicated corrupted delayed reordered; do
    [ "$(kv $k "$totals")" -ge 10 ] || fail "the injector $k fewer than 10 frames in $SECS s: $totals"
done
say "ok: $SECS s of two streams under every kind of fault at once: every byte exactly once, in order"
"$FAULTS" apply --name "$NAME" detach >/dev/null || fail "detach failed"
vc_check_down "$NAME"
