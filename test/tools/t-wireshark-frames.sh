#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Wireshark dissector (tools/wireshark) on frames made by pme_core's own wire layer
# (test/tools/pme_frames): every type decodes as PME, CRCs are verified (good ones good,
# a flipped bit bad, hops_left left out as the wire format says), a MAC is reported as
# not verified, and each malformed frame raises exactly the expert info it should (a
# length beyond the frame, an unknown version or type, a short sub-header, a fragment
# outside its message, bad and unauthenticated VERSION_NAKs, malformed netmod headers);
# the netmod's header and MPIDIG's are decoded inside DATA and RTS, and not when the
# preference says the messages are not MPI's; another EtherType is followed when the
# preference names it. Runs as any user with tshark installed (as root it installs it).
# pme-test: tier=default cpu=100 time=5
set -euo pipefail
. "$srcdir/test/tools/lib.sh"
ws_need_frames
cap=$WS_HOME/frames.pcap
expect=$WS_HOME/expect
"$GEN" "$cap" >"$expect" || tools_fail "pme_frames failed"
nframes=$(wc -l <"$expect")
echo "pme_frames wrote $nframes frames"

problems=0
problem() { echo "  frame $1: $2"; problems=$((problems + 1)); }
sorted() { tr ',' '\n' <<<"$1" | sort | paste -sd, -; }
# The manifest, by frame number: case name, check status, expert infos, netmod fields.
declare -A m_case m_status m_experts m_netmod
while IFS=$'\t' read -r num name st ex nm; do
    m_case[$num]=$name m_status[$num]=$st m_experts[$num]=$ex m_netmod[$num]=$nm
done <"$expect"
status_name() { # pme.check.status's value, as its value string says it
    case $1 in 0) echo Bad ;; 1) echo Good ;; 2) echo Unverified ;; 3) echo "Not present" ;; *) echo - ;; esac
}

# check_decoding FILE TSHARK-ARGS...: every frame decodes as PME with the check status,
# the expert infos and the netmod fields the manifest expects.
netmod_fields=(pmempi.handler pmempi.kind pmempi.port_tag pmempi.send.src_rank pmempi.send.tag
    pmempi.send.data_sz)
check_decoding() {
    local file=$1 num protos st got want have i values
    shift
    ws_tshark -r "$file" "$@" -T fields -E separator=/t -e frame.number -e frame.protocols \
        -e pme.check.status "${netmod_fields[@]/#/-e}" >"$WS_HOME/fields"
    [ "$(wc -l <"$WS_HOME/fields")" = "$nframes" ] || tools_fail "tshark read a different number of frames"
    while IFS=$'\t' read -r num protos st values; do
        [[ :$protos: == *:pme:* ]] || problem "$num" "not decoded as PME ($protos)"
        want=${m_status[$num]}
        [ "$(status_name "$st")" = "$want" ] ||
            problem "$num" "check status $(status_name "$st"), expected $want"
        IFS=$'\t' read -r -a got <<<"$values"
        have=""
        for i in "${!netmod_fields[@]}"; do
            [ -n "${got[$i]:-}" ] && have+="${have:+,}${netmod_fields[$i]##*.}=${got[$i]}"
        done
        want=${m_netmod[$num]}
        [ "$want" = - ] && want=""
        [ "$(sorted "$have")" = "$(sorted "$want")" ] ||
            problem "$num" "netmod fields '$have', expected '$want'"
    done <"$WS_HOME/fields"
    # _ws.malformed comes with every expert info of the group Malformed: the manifest
    # names those, and a Lua error would show as _ws.lua.error.
    while read -r num got; do
        got=$(tr ',' '\n' <<<"$got" | grep -vx '_ws.malformed' | paste -sd, -)
        want=${m_experts[$num]}
        [ "$(sorted "${got:--}")" = "$(sorted "$want")" ] ||
            problem "$num" "(${m_case[$num]}) expert infos ${got:--}, expected $want"
    done < <(ws_experts "$file" "$@")
}

check_decoding "$cap"
echo "checked every frame's decoding, check status, expert infos and netmod fields"

# Not MPI: the message headers stay opaque bytes.
ws_tshark -r "$cap" -o pme.upper:none -T fields -e pmempi.kind -e pme.msg_hdr >"$WS_HOME/none"
n=$(cut -f1 "$WS_HOME/none" | grep -c . || true)
[ "$n" = 0 ] || problem all "with pme.upper:none, $n frames still decoded as MPI"
n=$(cut -f2 "$WS_HOME/none" | grep -c . || true)
[ "$n" -ge 4 ] || problem all "with pme.upper:none, only $n frames show a message header"

# Another EtherType: ignored by default, decoded alike once the preference names it.
"$GEN" "$WS_HOME/other.pcap" 0x88b6 >/dev/null
n=$(ws_tshark -r "$WS_HOME/other.pcap" -Y pme -T fields -e frame.number | wc -l)
[ "$n" = 0 ] || problem all "$n frames of EtherType 0x88b6 decoded as PME without the preference"
check_decoding "$WS_HOME/other.pcap" -o pme.ethertype:0x88b6
echo "checked the preferences: messages that are not MPI's, another EtherType"

# A preference that is not an EtherType is refused with a message.
msg=$(HOME=$WS_HOME tshark -X "lua_script:$WS_LUA" -o pme.ethertype:banana -r "$cap" -c 1 2>&1 >/dev/null || true)
[[ $msg == *'"banana" is not a number'* ]] || problem all "a bad EtherType preference was not reported: $msg"

[ $problems = 0 ] || tools_fail "$problems problem(s) in the dissector's output"
echo "the dissector decodes and flags all $nframes frames as expected"
