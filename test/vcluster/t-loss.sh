#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster --loss: with --loss 5, 20000 raw frames over a link lose between 3% and 7%, all
# of them to the loss program (its counter accounts for every missing frame); fractional
# percentages work (--loss 0.5 loses 0.25% to 0.75%); and with no --loss nothing is lost,
# so the losses measured are the rule's and not the probe's.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=30 time=7
. "$(dirname "$0")/lib.sh"
vc_init vtl
FRAMES=20000

# lost_pct: send $FRAMES frames n0.xp -> n1.xm; print "LOSTPCT RECEIVED".
lost_pct() {
    local mac got
    mac=$(jq -r '.nodes[1].ifaces[] | select(.name == "xm") | .mac' <<<"$(vc_json "$NAME")")
    rm -f "$TMPD/ready" "$TMPD/sink"
    "$VC" exec --name "$NAME" "$NAME-n1" "$PROBE" sink xm 1 1000 "$TMPD/ready" >"$TMPD/sink" &
    local sink=$!
    VC_BGPIDS+=("$sink")
    for ((i = 0; i < 100; i++)); do [ -e "$TMPD/ready" ] && break; sleep 0.05; done
    vc_in "$NAME" "$NAME-n0" "$PROBE" stream xp "$mac" 64 count "$FRAMES" 1 >/dev/null
    wait "$sink"
    got=$(sed -n 's/^frames=\([0-9]*\).*/\1/p' "$TMPD/sink")
    awk -v g="$got" -v n="$FRAMES" 'BEGIN { printf "%.3f %d\n", 100 * (1 - g / n), g }'
}
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
# shellcheck source=maint/lib/linkloss.sh
. "$VC_SRCDIR/maint/lib/linkloss.sh"
linkloss_tool "$VC_SRCDIR" || fail "no linkloss program"
loss_on_xm() { vc_in "$NAME" "$NAME-n1" "$LINKLOSS" show xm; } # threshold T seen N dropped M
rule_drops() { loss_on_xm | awk '{print $6}'; }

vc_up "$NAME" --topology ring:2 --loss 5
[ "$(jq .loss_percent <<<"$(vc_json "$NAME")")" = 5 ] || fail "description does not say 5%"
read -r pct got <<<"$(lost_pct)"
drops=$(rule_drops)
status=$("$VC" status --name "$NAME")
grep -Eq "^ +xm .* 5% .* $drops\$" <<<"$status" || fail "status does not show the 5% rule and its $drops drops:
$status"
say "--loss 5: $got of $FRAMES frames arrived, $pct% lost; the loss rule dropped $drops"
within "$pct" 3 7 || fail "measured loss $pct% is not between 3% and 7%"
[ "$drops" = $((FRAMES - got)) ] || fail "the loss rule dropped $drops frames but $((FRAMES - got)) are missing"

vc_up "$NAME" --topology ring:2 --loss 0.5
[ "$(loss_on_xm | awk '{print $2}')" = 500 ] ||
    fail "--loss 0.5 did not give a threshold of 500 in 100000: $(loss_on_xm)"
read -r pct got <<<"$(lost_pct)"
say "--loss 0.5: $got of $FRAMES frames arrived, $pct% lost"
within "$pct" 0.25 0.75 || fail "measured loss $pct% is not between 0.25% and 0.75%"

vc_up "$NAME" --topology ring:2
read -r pct got <<<"$(lost_pct)"
say "no --loss: $got of $FRAMES frames arrived"
[ "$got" = "$FRAMES" ] || fail "frames were lost without --loss ($got of $FRAMES arrived)"
vc_check_down "$NAME"
