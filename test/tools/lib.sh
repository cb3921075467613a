# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - helpers of the tests of PME's tools: the Wireshark dissector
# (tools/wireshark) and pme_info --check. Sourced by test/tools/t-*.sh, which the test
# driver runs with srcdir and builddir set.

tools_fail() { echo "FAIL: $*"; exit 1; }
tools_skip() { echo "$*"; exit 77; }

# tools_need_tshark: tshark is installed (as root, with apt-get when missing: the
# dissector tests need it as much as they need the dissector); else skip.
tools_need_tshark() {
    command -v tshark >/dev/null && return 0
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null ||
        tools_skip "needs tshark (apt-get install tshark)"
    # The package asks whether non-root users may capture; the tests run as root.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300 install \
        --no-install-recommends tshark >/dev/null 2>&1 || tools_skip "cannot install tshark with apt-get"
}

# ws_setup: a private home for tshark, so that neither a dissector installed in the
# user's own plugin folder nor their preferences change what the tests see.
ws_setup() {
    WS_HOME=$(mktemp -d /tmp/pme-ws.XXXXXX)
    WS_LUA=$srcdir/tools/wireshark/pme.lua
}

# ws_need_frames: tshark, test/tools/pme_frames built (GEN), and a private home for
# tshark removed at exit.
ws_need_frames() {
    tools_need_tshark
    GEN=$builddir/test/tools/pme_frames
    [ -x "$GEN" ] || tools_fail "$GEN is not built (make check builds it)"
    ws_setup
    trap ws_cleanup EXIT
}

ws_cleanup() { [ -n "${WS_HOME:-}" ] && rm -rf "$WS_HOME"; return 0; }

# ws_tshark ARGS...: tshark with PME's dissector loaded. A Lua error while loading or
# dissecting fails the test (tshark itself carries on without the dissector).
ws_tshark() {
    local rc=0
    HOME=$WS_HOME XDG_CONFIG_HOME=$WS_HOME/.config tshark -X "lua_script:$WS_LUA" "$@" \
        2>"$WS_HOME/stderr" || rc=$?
    if grep -v 'Running as user' "$WS_HOME/stderr" | grep -q .; then
        cat "$WS_HOME/stderr" >&2
        tools_fail "tshark complained (above)"
    fi
    [ $rc = 0 ] || tools_fail "tshark $* exited with $rc"
}

# ws_experts FILE [TSHARK ARGS...]: one line per frame, "NUMBER EXPERTS": the expert
# infos of PME's dissectors, and the marks Wireshark puts on a malformed frame
# (_ws.malformed: also on every expert info of the group Malformed) and on a Lua error
# in the dissector (_ws.lua.error), comma-separated, "-" when none.
ws_experts() {
    local file=$1
    shift
    ws_tshark -r "$file" -T pdml "$@" | awk '
        function flush() { if (n) print n, (list == "" ? "-" : list) }
        /<packet>/ { flush(); n++; list = ""; delete seen }
        match($0, /name="((pme|pmempi)\.expert\.[a-z0-9_]+|_ws\.malformed|_ws\.lua\.error)"/) {
            name = substr($0, RSTART + 6, RLENGTH - 7)
            if (!(name in seen)) { seen[name] = 1; list = list (list == "" ? "" : ",") name }
        }
        END { flush() }'
}

# ---- capturing PME's frames with tcpdump (root)
CAP_PID=
# capture_start NS IFACE FILE LOG: capture the PME frames on IFACE in network namespace
# NS into FILE, tcpdump's messages into LOG; returns once tcpdump listens. Immediate
# mode hands every frame to tcpdump as it comes: otherwise the kernel keeps the last
# ones in a partly filled block that an interrupted tcpdump never reads. Immediate mode
# makes libpcap use TPACKET_V2, whose ring has slots of a fixed size taken from the
# snapshot length when the interface offloads (as veth does): tcpdump's default of 256 KiB
# left room for about 256 frames in the 64 MiB ring, and a burst of 9000-byte frames
# overran it. The snapshot length is the interface's MTU plus an Ethernet header with a
# VLAN tag, which holds every frame whole.
capture_start() {
    local mtu
    rm -f "$4"
    mtu=$(ip netns exec "$1" cat "/sys/class/net/$2/mtu") || tools_fail "no interface $2 in $1"
    ip netns exec "$1" tcpdump -i "$2" -p -s $((mtu + 18)) -B 65536 --immediate-mode -U \
        -w "$3" ether proto 0x88b5 2>"$4" &
    CAP_PID=$!
    for _ in $(seq 200); do
        grep -q 'listening on' "$4" 2>/dev/null && return 0
        kill -0 "$CAP_PID" 2>/dev/null || break
        sleep 0.05
    done
    tools_fail "tcpdump did not start: $(cat "$4")"
}
# capture_stop: end the capture (tcpdump writes what it has and its tally).
capture_stop() {
    [ -n "$CAP_PID" ] || return 0
    kill -INT "$CAP_PID" 2>/dev/null || true
    wait "$CAP_PID" 2>/dev/null || true
    CAP_PID=
}
# capture_complete LOG: tcpdump's tally says the kernel dropped nothing and tcpdump
# wrote every frame its filter let through.
capture_complete() {
    local got passed
    got=$(awk '/ packets captured$/ { print $1 }' "$1")
    passed=$(awk '/ packets received by filter$/ { print $1 }' "$1")
    grep -q '^0 packets dropped by kernel' "$1" && [ -n "$got" ] && [ "$got" = "$passed" ] ||
        tools_fail "the capture is incomplete: $(cat "$1")"
}
