#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A user without CAP_NET_RAW runs PME through the broker pme_rawsock (doc/rawsock.md),
# installed as an administrator would: owned by a group of its own, with the file
# capability (and once setuid root). Across a veth pair between two namespaces, with
# the ring device:
#   - a member of the group streams every size class, verified, also between two
#     endpoints on one interface;
#   - someone outside the group is refused with a message naming the fix, both when the
#     file's mode stops them and when the broker itself does;
#   - an interface missing from the administrator's list, a list anyone may write, a
#     missing list, a non-PME EtherType and PME_RAWSOCK=0 are refused, each saying why;
#   - the socket a member gets cannot be re-filtered, and it receives the PME frames
#     of its endpoint and nothing else while pings and other frames cross the pair.
# The administrator's list is shown to the test's processes alone, in a private mount
# namespace; the test's user is nobody, its group a free group id: nothing outside the
# test's namespaces and directory is changed.
# pme-test: tier=default cpu=130 time=6
set -u
. "$srcdir/test/netns/lib.sh"
need_root
need_tool
for t in setcap setpriv unshare ping; do
    command -v $t >/dev/null ||
        { echo "FAIL: $t is missing (apt-get install libcap2-bin util-linux iputils-ping)"; exit 1; }
done
for f in src/tools/pme_rawsock test/netns/rawsock_probe; do
    [ -x "$builddir/$f" ] || { echo "FAIL: $builddir/$f is not built (make check builds it)"; exit 1; }
done
conf=$(sed -n 's/^#define PME_RAWSOCK_CONFIG "\(.*\)"$/\1/p' "$builddir/config.h")
case $conf in
/etc/*) ;;
*) echo "pme_rawsock reads $conf, outside /etc, where this test cannot stand in for it"; exit 77 ;;
esac

P=pmetr$$
pair $P 1500
cleanup() {
    [ -n "${PROBE_PID:-}" ] && kill "$PROBE_PID" 2>/dev/null
    pair_down
}
trap cleanup EXIT
ip -n ${P}a addr add 10.201.0.1/24 dev ${P}va
ip -n ${P}b addr add 10.201.0.2/24 dev ${P}vb
# An interface of the same kind that the administrator does not list.
ip -n ${P}a link add ${P}xa type veth peer name ${P}xb
ip -n ${P}a link set ${P}xa up
ip -n ${P}a link set ${P}xb up

WORK=$(mktemp -d)
chmod 1777 "$WORK" # the user's programs write their address files here
export GID=61000
while getent group $GID >/dev/null; do GID=$((GID + 1)); done

# The broker, as doc/rawsock.md installs it; a setuid copy; a copy anyone may run.
install -d -m 755 "$WORK/cap" "$WORK/suid" "$WORK/open"
install -o root -g $GID -m 0750 "$builddir/src/tools/pme_rawsock" "$WORK/cap/pme_rawsock"
setcap cap_net_raw+ep "$WORK/cap/pme_rawsock"
install -o root -g $GID -m 4750 "$builddir/src/tools/pme_rawsock" "$WORK/suid/pme_rawsock"
install -o root -g $GID -m 0755 "$builddir/src/tools/pme_rawsock" "$WORK/open/pme_rawsock"
setcap cap_net_raw+ep "$WORK/open/pme_rawsock"
install -m 755 "$PME_PERF" "$builddir/test/netns/rawsock_probe" "$WORK/"

# Views of /etc with the administrator's list: the pair's interfaces; a list anyone may
# write; none at all (a whiteout hides a real one).
rel=${conf#/etc/}
for v in listed writable none; do mkdir -p "$WORK/etc/$v/$(dirname "$rel")"; done
printf '# the test pair\n  %sv?   # both ends\n' "$P" >"$WORK/etc/listed/$rel"
echo "${P}*" >"$WORK/etc/writable/$rel"
chmod 666 "$WORK/etc/writable/$rel"
mknod "$WORK/etc/none/$rel" c 0 0

# as WHO PROGRAM ARGS...: PROGRAM as nobody, in the broker's group (WHO=member) or not
# (stranger), seeing the view $ETC over /etc.
cat >"$WORK/as" <<'EOF'
#!/bin/bash
set -eu
groups=--clear-groups
[ "$1" = member ] && groups=--groups=$GID
shift
exec unshare --mount --propagation private -- /bin/sh -c \
    'mount -t overlay pme-etc -o "lowerdir=$0:/etc" /etc && exec "$@"' "$WORK/etc/$ETC" \
    setpriv --reuid=nobody --regid=nogroup $groups --inh-caps=-all "$@"
EOF
printf '#!/bin/sh\nexec "%s/as" member "%s/pme_perf" "$@"\n' "$WORK" "$WORK" >"$WORK/perf-member"
chmod 755 "$WORK/as" "$WORK/perf-member"
export WORK ETC=listed PME_DEVICE=ring PME_RAWSOCK=$WORK/cap/pme_rawsock
PME_PERF=$WORK/perf-member
fails=0

echo "== a member of the group streams through the broker"
# The server finds the broker on PATH (unless one is installed where PME's tools go).
installed=$(sed -n 's/^prefix = //p' "$builddir/Makefile")/bin/pme_rawsock
if [ -e "$installed" ]; then
    echo "($installed exists and would be found first: PME_RAWSOCK names the test's)"
    start_server ${P}b ${P}vb --verify
else
    PME_RAWSOCK= PATH=$WORK/cap:$PATH start_server ${P}b ${P}vb --verify
fi
out=$(ip netns exec ${P}a "$PME_PERF" client -i ${P}va --peer "$SERVER_ADDR" --verify \
    -s 0,1,8,1000,8000,20000,1m -n 10 --seconds 0.05 2>&1) ||
    { echo "$out"; echo "FAIL: client through the broker"; exit 1; }
echo "$out"
wait_server
grep -q "device ring," <<<"$out" || { echo "FAIL: the client did not use the ring device"; exit 1; }
grep -q "all data verified" <<<"$out" || { echo "FAIL: not verified"; exit 1; }

echo "== two members' endpoints on one interface"
start_server ${P}a ${P}va --verify
ip netns exec ${P}a "$PME_PERF" client -i ${P}va --peer "$SERVER_ADDR" --verify \
    -s 8,20000,1m -n 10 --seconds 0.05 || { echo "FAIL: client on the server's interface"; exit 1; }
wait_server

# refused WHAT WANT WHO [VAR=VALUE...]: pme_perf server on ${P}va, run by WHO with the
# variables given, must fail with WANT in its message (left in $out).
refused() {
    local what=$1 want=$2 who=$3 rc=0
    shift 3
    out=$(env "$@" ip netns exec ${P}a "$WORK/as" "$who" "$WORK/pme_perf" server \
        -i "${IFACE:-${P}va}" 2>&1) || rc=$?
    if [ $rc != 0 ] && grep -qF -- "$want" <<<"$out"; then
        echo "ok: $what: $out"
    else
        echo "FAIL: $what: exit $rc, wanted \"$want\" in: $out"
        fails=$((fails + 1))
    fi
}

echo "== refusals"
refused "not in the group (the file's mode)" "only group $GID may run $WORK/cap/pme_rawsock (ask" stranger
# What to do comes best first: the kernel driver, the broker, and a capability last.
order=$(grep -o "(1) PME's kernel driver\|(2) the broker\|(3) CAP_NET_RAW" <<<"$out" | paste -sd,)
[ "$order" = "(1) PME's kernel driver,(2) the broker,(3) CAP_NET_RAW" ] ||
    { echo "FAIL: the advice comes in the order $order"; fails=$((fails + 1)); }
refused "not in the group (the broker)" "you are not in group $GID (ask" stranger \
    PME_RAWSOCK="$WORK/open/pme_rawsock"
IFACE=${P}xa refused "interface not listed" "interface ${P}xa is not listed in $conf (ask" member
refused "a list anyone may write" "must belong to root and be writable by root alone" member \
    ETC=writable
if grep -q '^#define PME_RAWSOCK_ALLOW_ALL 1' "$builddir/config.h"; then
    echo "(built with --enable-rawsock-allow-all: a missing list allows every interface)"
else
    refused "no list" "$conf does not exist, so no interface is allowed (an" member ETC=none
fi
refused "an EtherType not PME's" "EtherType 0x0800 is not one of PME's" member PME_ETHERTYPE=0x0800
refused "broker turned off" "not used (PME_RAWSOCK=0)" member PME_RAWSOCK=0

echo "== what the member's socket receives (broker installed setuid root)"
mac_a=$(ip -n ${P}a -br link show ${P}va | awk '{print $3}')
ip netns exec ${P}a env PME_RAWSOCK="$WORK/suid/pme_rawsock" "$WORK/as" member \
    "$WORK/rawsock_probe" listen ${P}va 7 10 >"$WORK/probe.log" 2>&1 &
PROBE_PID=$!
for _ in $(seq 100); do
    grep -q '^ready' "$WORK/probe.log" && break
    kill -0 $PROBE_PID 2>/dev/null || break
    sleep 0.05
done
send() { ip netns exec ${P}b "$WORK/rawsock_probe" send ${P}vb "$mac_a" "$@"; }
# Its own frames first and last, so that everything between has arrived by the end.
send 88b5 7 5
ip netns exec ${P}b ping -c 3 -i 0.2 -W 2 10.201.0.1 >/dev/null ||
    { echo "FAIL: ping across the pair"; fails=$((fails + 1)); }
send 88b6 7 5 # the other experimental EtherType, for the same endpoint
send 0800 7 5 # IPv4
send 88b5 8 5 # PME, another endpoint
send 88b5 7 5
rc=0
wait $PROBE_PID || rc=$?
PROBE_PID=
cat "$WORK/probe.log"
[ $rc = 0 ] || { echo "FAIL: the member's socket (rawsock_probe exit $rc)"; fails=$((fails + 1)); }

[ $fails = 0 ] || exit 1
echo "the broker gave members PME's frames alone, and refused everyone else with a reason"
