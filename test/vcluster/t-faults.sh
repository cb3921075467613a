#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The fault injector (maint/faults) does exactly what it says on a link, frame by frame:
# numbered raw frames of PME's EtherType cross n0.xp -> n1.xm of a 2-node ring while the
# injector on n0.xp drops, duplicates, corrupts, delays or reorders them, and the
# receiver's account (which frames came, how often, in which order, how many bits
# flipped) matches the injector's counters. The same seed loses the same frames again,
# another seed other frames; other EtherTypes pass untouched, the EtherType is a
# setting, bad settings are refused with a message, and detach restores the link.
# "test && test || fail" is these tests' idiom for checks:
# shellcheck disable=SC2015
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=30 time=23
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/vcluster/faults-lib.sh
. "$(dirname "$0")/faults-lib.sh"
vc_init vfa
faults_init
faults_build faultprobe
N=4000

vc_up "$NAME" --topology ring:2 >/dev/null
MAC1=$(jq -r '.nodes[1].ifaces[] | select(.name == "xm") | .mac' <<<"$(vc_json "$NAME")")
# Everything on node 0 (the sender, maint/faults and the delay line it starts) runs on
# CPU 0. veth hands a frame to the backlog of the CPU that sends it, and when softirqs
# are deferred to ksoftirqd the backlogs of two CPUs drain in either order: frames sent
# from two CPUs can arrive out of order with no injector at all (in CI, about half of the
# delayed frames were overtaken that way). On one CPU the test sees the injector's own
# order, which is what it checks.
on0() { taskset -c 0 "$VC" exec --name "$NAME" "$NAME-n0" "$@"; }

# probe [ETHERTYPE]: N frames n0.xp -> n1.xm; RESULT = the receiver's account, LOST = its
# lost line, C = the injector's counters (key=value).
probe() {
    local et=${1:-0x88b5}
    rm -f "$TMPD/ready" "$TMPD/recv"
    vc_bg "$NAME" "$NAME-n1" "$TMPD/faultprobe" recv xm "$et" "$N" "$TMPD/ready" 700 >"$TMPD/recv"
    local rx=$BGPID
    for ((i = 0; i < 100; i++)); do [ -e "$TMPD/ready" ] && break; sleep 0.05; done
    on0 "$TMPD/faultprobe" send xp "$MAC1" "$et" "$N" 200 20 || fail "faultprobe send failed"
    wait "$rx" || fail "faultprobe recv failed"
    RESULT=$(head -1 "$TMPD/recv")
    LOST=$(sed -n 's/^lost://p' "$TMPD/recv")
    C=$(on0 "$FAULTS" show xp --kv) || fail "maint/faults show failed"
}
r() { kv "$1" "$RESULT"; }
c() { kv "$1" "$C"; }
set_faults() { on0 "$FAULTS" set xp clear reset "$@" >/dev/null || fail "maint/faults set xp $* failed"; }

# -- no faults: everything arrives once, in order, intact; the injector counts it all
set_faults
probe
[ "$(r unique)" = $N ] && [ "$(r received)" = $N ] && [ "$(r out_of_order)" = 0 ] &&
    [ "$(r corrupted)" = 0 ] || fail "without faults: $RESULT"
[ "$(c frames)" = $N ] && [ "$(c dropped)" = 0 ] || fail "without faults the injector counted: $C"
say "ok: no faults: $N of $N frames, in order, intact; the injector saw all $N"

# -- drop
set_faults drop=10% seed=7
probe
d=$(c dropped)
between "$d" $((N * 7 / 100)) $((N * 13 / 100)) || fail "drop=10% dropped $d of $N"
[ "$(r missing)" = "$d" ] && [ "$(r unique)" = $((N - d)) ] && [ "$(r duplicates)" = 0 ] &&
    [ "$(r corrupted)" = 0 ] || fail "drop: the injector dropped $d, the receiver saw: $RESULT"
lost7=$LOST
say "ok: drop=10%: the injector dropped $d frames and exactly $d never arrived"

# the same seed drops the same frames; another seed other ones
set_faults drop=10% seed=7
probe
[ "$LOST" = "$lost7" ] || fail "seed 7 dropped other frames the second time"
set_faults drop=10% seed=8
probe
[ "$LOST" != "$lost7" ] || fail "seeds 7 and 8 dropped the same frames"
say "ok: seed 7 dropped the same $d frames twice; seed 8 dropped $(r missing) others"

# -- duplicate
set_faults dup=10% seed=1
probe
d=$(c duplicated)
between "$d" $((N * 7 / 100)) $((N * 13 / 100)) || fail "dup=10% duplicated $d of $N"
[ "$(r duplicates)" = "$d" ] && [ "$(r unique)" = $N ] && [ "$(r corrupted)" = 0 ] ||
    fail "dup: the injector duplicated $d, the receiver saw: $RESULT"
[ "$(c frames)" = $((N + d)) ] || fail "dup: the copies passed the hook uncounted: $C"
say "ok: dup=10%: $d copies sent, $d duplicates received, every frame at least once"

# -- corrupt
set_faults corrupt=10% seed=2
probe
d=$(c corrupted)
between "$d" $((N * 7 / 100)) $((N * 13 / 100)) || fail "corrupt=10% corrupted $d of $N"
[ "$(r corrupted)" = "$d" ] && [ "$(r onebit)" = "$d" ] && [ "$(r unique)" = $N ] &&
    [ "$(r unreadable)" = 0 ] || fail "corrupt: the injector corrupted $d, the receiver saw: $RESULT"
say "ok: corrupt=10%: $d frames corrupted, each by exactly one flipped bit"

# -- delay: frames held back, order kept
set_faults delay=10%:2ms seed=3
[ "$(kv line "$(on0 "$FAULTS" show xp --kv)")" = up ] || fail "delay did not start the delay line"
probe
d=$(c delayed)
between "$d" $((N * 7 / 100)) $((N * 13 / 100)) || fail "delay=10% delayed $d of $N"
[ "$(r unique)" = $N ] && [ "$(r received)" = $N ] && [ "$(r out_of_order)" = 0 ] ||
    fail "delay: $RESULT"
[ "$(r max_gap_us)" -ge 1500 ] || fail "delay=..:2ms: the longest gap between arrivals was $(r max_gap_us) us"
[ "$(c line_missed)" = 0 ] || fail "delay: the delay line missed frames: $C"
say "ok: delay=10%:2ms: $d frames delayed, all $N in order, arrivals stalled up to $(r max_gap_us) us"

# -- reorder: held-back frames overtaken by the ones after them
set_faults reorder=5%:2ms seed=4
probe
d=$(c reordered)
between "$d" $((N * 3 / 100)) $((N * 7 / 100)) || fail "reorder=5% reordered $d of $N"
o=$(r out_of_order)
[ "$(r unique)" = $N ] && [ "$(r received)" = $N ] && [ "$o" -gt 0 ] && [ "$o" -le "$d" ] ||
    fail "reorder: the injector reordered $d, the receiver saw: $RESULT"
say "ok: reorder=5%:2ms: $d frames held back, $o arrived after later ones, none lost"

# -- other EtherTypes pass; the EtherType is a setting
set_faults drop=100%
probe 0x88b6
[ "$(r unique)" = $N ] && [ "$(c other)" = $N ] && [ "$(c frames)" = 0 ] ||
    fail "drop=100% touched frames of another EtherType: $RESULT; $C"
set_faults drop=100% ethertype=0x88b6
probe 0x88b6
[ "$(r received)" = 0 ] && [ "$(c dropped)" = $N ] || fail "ethertype=0x88b6 drop=100%: $RESULT; $C"
on0 "$FAULTS" set xp ethertype=0x88b5 >/dev/null
say "ok: other EtherTypes pass untouched and counted; ethertype= moves the faults to another"

# -- bad settings are refused with a message naming the fix
# bad WANT ARGS...: maint/faults ARGS fails, saying WANT.
bad() {
    local want=$1 out
    shift
    if out=$(on0 "$FAULTS" "$@" 2>&1); then fail "maint/faults $* was accepted"; fi
    grep -qi -- "$want" <<<"$out" || fail "maint/faults $*: the message lacks '$want': $out"
}
bad percentage set xp drop=5
bad percentage set xp drop=101%
bad "bad time" set xp delay=1%:3s
bad "unknown setting" set xp loss=1%
bad "no interface 'nope'" set nope drop=1%
bad EtherType set xp ethertype=12
say "ok: bad settings refused with messages"

# -- detach
on0 "$FAULTS" detach xp >/dev/null || fail "detach failed"
if out=$(on0 "$FAULTS" show xp 2>&1); then fail "show after detach: $out"; fi
grep -q "attach it first" <<<"$out" || fail "show after detach says: $out"
for ((i = 0; i < 20; i++)); do
    ip netns pids "$NAME-n0" | xargs -r ps -o args= -p | grep -q "pme_faultctl line" || break
    sleep 0.1
done
[ "$i" -lt 20 ] || fail "the delay line of xp still runs after detach"
rm -f "$TMPD/ready"
vc_bg "$NAME" "$NAME-n1" "$TMPD/faultprobe" recv xm 0x88b5 "$N" "$TMPD/ready" 700 >"$TMPD/recv"
rx=$BGPID
for ((i = 0; i < 100; i++)); do [ -e "$TMPD/ready" ] && break; sleep 0.05; done
on0 "$TMPD/faultprobe" send xp "$MAC1" 0x88b5 "$N" 200 20
wait "$rx"
RESULT=$(head -1 "$TMPD/recv")
[ "$(r unique)" = $N ] && [ "$(r received)" = $N ] || fail "after detach: $RESULT"
say "ok: detach removed the injector and its delay line; all $N frames pass"
vc_check_down "$NAME"
