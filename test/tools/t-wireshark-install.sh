#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# `make install-wireshark` puts the dissector where Wireshark finds it by itself: into a
# fresh home's personal Lua plugin folder (the one `tshark -G folders` names), after
# which tshark, given no -X option, decodes frames of pme_core's wire layer
# (test/tools/pme_frames) as PME and MPI over PME; `make uninstall-wireshark` takes it
# away again. Runs as any user with tshark installed (as root it installs it).
# pme-test: tier=default cpu=100 time=1
set -euo pipefail
. "$srcdir/test/tools/lib.sh"
ws_need_frames
home=$WS_HOME/home
mkdir -p "$home"
# tshark_home ARGS...: tshark as a user whose home is $home, without PME's script given.
tshark_home() { HOME=$home XDG_CONFIG_HOME=$home/.config tshark "$@" 2>"$WS_HOME/stderr"; }

plugins=$(tshark_home -G folders | awk -F'\t' '/^Personal Lua Plugins:/ { print $2 }')
[ "$plugins" = "$home/.local/lib/wireshark/plugins" ] ||
    tools_fail "tshark's personal Lua plugin folder is '$plugins', not where install-wireshark puts it"
make -s -C "$builddir" install-wireshark HOME="$home" >"$WS_HOME/make.log" 2>&1 ||
    { cat "$WS_HOME/make.log"; tools_fail "make install-wireshark failed"; }
[ -f "$plugins/pme.lua" ] || tools_fail "no $plugins/pme.lua after make install-wireshark"

"$GEN" "$WS_HOME/frames.pcap" >"$WS_HOME/expect" || tools_fail "pme_frames failed"
want=$(wc -l <"$WS_HOME/expect")
tshark_home -r "$WS_HOME/frames.pcap" -T fields -E occurrence=f -e frame.protocols \
    -e pmempi.handler >"$WS_HOME/protocols" || tools_fail "tshark failed: $(cat "$WS_HOME/stderr")"
if grep -qv 'Running as user' "$WS_HOME/stderr"; then
    tools_fail "tshark complained with the installed dissector: $(cat "$WS_HOME/stderr")"
fi
pme=$(grep -c ':pme' "$WS_HOME/protocols" || true)
mpi=$(awk -F'\t' '$2 != ""' "$WS_HOME/protocols" | wc -l)
[ "$pme" = "$want" ] || tools_fail "$pme of $want frames decoded as PME by the installed dissector"
[ "$mpi" -gt 0 ] || tools_fail "the installed dissector decoded no netmod header"
echo "installed: $pme of $want frames decode as PME, $mpi with the netmod's header"

make -s -C "$builddir" uninstall-wireshark HOME="$home" >"$WS_HOME/make.log" 2>&1 ||
    { cat "$WS_HOME/make.log"; tools_fail "make uninstall-wireshark failed"; }
left=$(find "$plugins" -mindepth 1 2>/dev/null)
[ -z "$left" ] || tools_fail "uninstall-wireshark left $left"
tshark_home -r "$WS_HOME/frames.pcap" -T fields -e frame.protocols >"$WS_HOME/protocols"
! grep -q ':pme' "$WS_HOME/protocols" || tools_fail "frames still decode as PME after uninstall-wireshark"
echo "uninstalled: nothing left, and tshark no longer knows PME"
