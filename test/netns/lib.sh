# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - helpers for the root-only tests that run PME between network namespaces.
# Sourced by test/netns/t-*.sh. Each test gets its own namespaces (a unique prefix) and
# removes them on exit.

# The veth pair is built as the benchmarks build theirs (maint/lib/wire.sh).
# shellcheck source=../../maint/lib/wire.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../maint/lib/wire.sh"

need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "needs root (network namespaces and raw frames)"
        exit 77
    fi
}

# need_built PATH: the build's PATH (relative to $builddir), or fail; prints its full path.
need_built() {
    local f=${builddir:-.}/$1
    [ -x "$f" ] || { echo "FAIL: $f not built (make check builds it)" >&2; exit 1; }
    echo "$f"
}

need_tool() {
    PME_PERF=$(need_built src/tools/pme_perf) || exit 1
}

# pair NAME MTU: namespaces ${NAME}a and ${NAME}b joined by veth ${NAME}va <-> ${NAME}vb
pair() {
    local n=$1 mtu=$2
    PAIR=$n
    trap 'pair_down' EXIT
    wire_veth_pair "$n" "$mtu"
}

pair_down() {
    if [ -n "${SERVER_PID:-}" ]; then
        kill "$SERVER_PID" 2>/dev/null
        echo "--- server log:"
        cat "$WORK/server.log" 2>/dev/null
    fi
    ip netns del "${PAIR}a" 2>/dev/null
    ip netns del "${PAIR}b" 2>/dev/null
    # Counter files of endpoints the test killed (a killed process cannot remove its own).
    rm -f /dev/shm/pme-*/*."${PAIR}"v[ab].*
    [ -n "${WORK:-}" ] && rm -rf "$WORK"
    return 0
}

# loss NS IFACE PERCENT: drop PERCENT% of frames arriving on IFACE, before the packet
# sockets see them (maint/lib/linkloss.c; nftables' ingress hook comes after them)
loss() {
    local ns=$1 ifc=$2 pct=$3
    # shellcheck source=maint/lib/linkloss.sh
    . "$srcdir/maint/lib/linkloss.sh"
    linkloss_tool "$srcdir" || { echo "FAIL: no linkloss program"; exit 1; }
    ip netns exec "$ns" "$LINKLOSS" set "$ifc" "$(awk -v p="$pct" 'BEGIN { printf "%d", p * 1000 }')" ||
        { echo "FAIL: cannot set the loss on $ifc"; exit 1; }
}

# loss_dropped NS IFACE: the frames the loss on IFACE dropped
loss_dropped() {
    ip netns exec "$1" "$LINKLOSS" show "$2" | awk '{print $6}'
}

# start_server NS IFACE ARGS...: runs pme_perf server in NS; sets SERVER_ADDR
start_server() {
    local ns=$1 ifc=$2
    shift 2
    WORK=${WORK:-$(mktemp -d)}
    rm -f "$WORK/addr"
    ip netns exec "$ns" "$PME_PERF" server -i "$ifc" --addr-file "$WORK/addr" "$@" \
        >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        [ -s "$WORK/addr" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log"; echo "FAIL: server died"; exit 1; }
        sleep 0.05
    done
    SERVER_ADDR=$(cat "$WORK/addr")
}

wait_server() {
    local rc=0
    wait "$SERVER_PID" || rc=$?
    SERVER_PID=
    if [ $rc != 0 ]; then
        cat "$WORK/server.log"
        echo "FAIL: server exited with $rc"
        exit 1
    fi
}

# no_loss NS IFACE: end the loss on IFACE
no_loss() {
    ip netns exec "$1" "$LINKLOSS" clear "$2"
}
