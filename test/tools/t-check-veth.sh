#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pme_info --check on a veth pair between two network namespaces, as a site would use it:
#   - both ends up, MTU 9000: PME may use the interface, nothing blocks (exit 0), the
#     veth is reported as virtual and without interrupt coalescing;
#   - the hostfile check over both namespaces (a launcher stands in for ssh) finds the
#     same MTU on both, then reports the mismatch once one end has MTU 1500;
#   - a host of the hostfile that does not answer blocks;
#   - an interface taken down blocks (exit 1), with the command that brings it up, and
#     its peer is reported without carrier;
#   - run unprivileged (nobody, no capabilities, no broker, no /dev/pme), the missing
#     CAP_NET_RAW blocks the ring device, and the interface findings still appear;
#   - an interface that does not exist and a bad option are refused clearly;
#   - the device checked is the one a job would open: auto's choice (ring here, with
#     no /dev/pme) unless PME_DEVICE names one.
# Root only (namespaces).
# pme-test: tier=default cpu=40 time=1
set -euo pipefail
. "$srcdir/test/tools/lib.sh"
[ "$(id -u)" = 0 ] || tools_skip "needs root (network namespaces)"
. "$srcdir/test/netns/lib.sh"
PME_INFO=$builddir/src/tools/pme_info
[ -x "$PME_INFO" ] || tools_fail "$PME_INFO not built"
WORK=$(mktemp -d /tmp/pme-check.XXXXXX)
pair pmeck$$ 9000
A=${PAIR}a B=${PAIR}b VA=${PAIR}va VB=${PAIR}vb
# No broker and no kernel device from the machine this runs on: the test decides.
export PME_RAWSOCK=0

# check NS EXPECTED_RC ARGS...: pme_info --check in NS, output in $WORK/out.
check() {
    local ns=$1 want=$2 rc=0
    shift 2
    ip netns exec "$ns" "$PME_INFO" --check "$@" >"$WORK/out" 2>&1 || rc=$?
    [ "$rc" = "$want" ] || { cat "$WORK/out"; tools_fail "pme_info --check $* in $ns exited $rc, not $want"; }
}
has() { grep -qE -- "$1" "$WORK/out" || { cat "$WORK/out"; tools_fail "no line matching '$1'"; }; }
hasnt() { ! grep -qE -- "$1" "$WORK/out" || { cat "$WORK/out"; tools_fail "a line matches '$1'"; }; }

echo "== usable veth"
check "$A" 0 -i "$VA"
has "^$VA: MTU 9000, virtual, driver veth"
has "^  ok +PME may use it"
has "^  note +interrupt coalescing: not known"
has "^  note +virtual interface \(veth\)"
has "^  ok +CAP_NET_RAW"
has "nothing blocks PME"
hasnt "BLOCKS"
if [ ! -e /dev/pme ]; then
    has "^PME check of .*, device ring \(PME_DEVICE=auto chooses it here\)"
    PME_DEVICE=kernel check "$A" 1 -i "$VA"
    has "^PME check of .*, device kernel \(reads only"
    has "^  BLOCKS +kernel device /dev/pme: not present"
fi

echo "== hostfile, same MTU, then a mismatch"
cat >"$WORK/launcher" <<'EOF'
#!/bin/sh
# stands in for ssh: HOST is a network namespace
host=$1
shift
exec ip netns exec "$host" "$@"
EOF
chmod 755 "$WORK/launcher"
printf '%s:2\n# a comment\n%s\n%s:1\n' "$A" "$B" "$A" >"$WORK/hosts"
check "$A" 0 --hostfile "$WORK/hosts" --rsh "$WORK/launcher"
has "^  ok +$A: interface $VA, MTU 9000$"
has "^  ok +$B: interface $VB, MTU 9000$"
has "every host answering uses MTU 9000"
ip -n "$B" link set "$VB" mtu 1500
check "$A" 0 --hostfile "$WORK/hosts" --rsh "$WORK/launcher"
has "^  WARN +MTU mismatch: $B has 1500, $A has 9000"
has "fix: ip link set <interface> mtu 9000"
printf '%s\n' "$A" nosuchns >"$WORK/hosts2"
check "$A" 1 --hostfile "$WORK/hosts2" --rsh "$WORK/launcher"
has "^  BLOCKS nosuchns: no answer"

echo "== down interface"
ip -n "$A" link set "$VA" down
check "$A" 1 -i "$VA"
has "^  BLOCKS down"
has "fix: ip link set $VA up"
has "PME cannot use $VA"
check "$B" 1 -i "$VB"
has "^  BLOCKS no carrier"
check "$A" 1
has "BLOCKS no interface PME can use here"
ip -n "$A" link set "$VA" up

echo "== unprivileged"
ip netns exec "$A" setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
    "$PME_INFO" --check -i "$VA" >"$WORK/out" 2>&1 && tools_fail "unprivileged check exited 0: $(cat "$WORK/out")"
has "^  ok +PME may use it"
if [ -e /dev/pme ]; then
    has "kernel device /dev/pme"
else
    has "^  BLOCKS no CAP_NET_RAW: the ring device \(PME_DEVICE=ring\) cannot open its socket"
    has "kernel device /dev/pme: not present"
fi
has "PME cannot run as things are"

echo "== bad input"
check "$A" 1 -i nosuchif0
has "BLOCKS interface nosuchif0 does not exist here"
check "$A" 2 --bogus
has "usage: pme_info --check"
PME_DEVICE=tokenring check "$A" 2 -i "$VA"
has "PME_DEVICE=tokenring is not a device for a network: auto, ring, pcap or kernel"
echo "pme_info --check reports what a site needs on a veth pair"
