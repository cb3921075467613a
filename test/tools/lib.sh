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
