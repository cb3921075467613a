# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# links.sh - what the data links do to frames once they are cabled: rate shaping (tbf on
# both ends of every link) and random loss (maint/lib/linkloss.c's XDP program on each
# node's data interfaces), with the checks of --rate, --burst and --loss.
#
# Owns: parse_rate (RATE_BPS), default_burst (BURST), parse_loss (LOSS, LOSS_THR),
# data_link_ends, make_shaping, make_loss, loss_tool (LINKLOSS; status.sh reads the
# program's counters with it).
# Expects: base.sh, topology.sh; the settings of state.sh as globals and IFN; root for
# make_*, which run after build.sh's configure_nodes.
#
# Another treatment of the links (fault injection, say) is one more file like this one:
# a make_* that walks data_link_ends (or IFN on the nodes), called from cluster_up
# (lifecycle.sh) beside make_shaping and make_loss; its settings named in STATE_EXTRA
# (state.sh) and added to the CLI's CONFIG, its option checked by the CLI.

# parse_rate R: RATE_BPS = R in bits per second, for tc syntax "1gbit", "100mbit", "10gbps"...
parse_rate() {
    local r=$1
    [[ $r =~ ^([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)$ ]] ||
        usage_error "bad rate '$r': expected a number and a tc unit, e.g. 100mbit, 1gbit, 10gbit"
    local num=${BASH_REMATCH[1]} unit=${BASH_REMATCH[3]} mult
    case $unit in
    bit) mult=1 ;; kbit) mult=1e3 ;; mbit) mult=1e6 ;; gbit) mult=1e9 ;; tbit) mult=1e12 ;;
    bps) mult=8 ;; kbps) mult=8e3 ;; mbps) mult=8e6 ;; gbps) mult=8e9 ;; tbps) mult=8e12 ;;
    esac
    RATE_BPS=$(awk -v n="$num" -v m="$mult" 'BEGIN { printf "%.0f", n * m }')
    ((RATE_BPS >= 8000)) || usage_error "rate '$r' is too low (minimum 8kbit)"
}

# default_burst: BURST = tbf's burst for RATE_BPS and MTU: 5 ms at the rate, at least 10
# full frames. A shorter burst loses rate whenever the qdisc's timer fires late (measured
# on a 2-core VM: 2 ms gave 108 to 118 MB/s at 1gbit, 5 ms gave 125), and tbf drops any
# frame larger than its burst. The burst also bounds how far a sender gets ahead of the
# rate.
default_burst() {
    BURST=$(awk -v r="$RATE_BPS" -v m="$MTU" 'BEGIN { b = r / 8 * 0.005; f = 10 * (m + 14); printf "%.0f", (b > f ? b : f) }')
}

# parse_loss P: LOSS = P normalised, LOSS_THR = P in thousandths of a percent, the
# threshold linkloss compares a random number below 100000 with.
parse_loss() {
    local p=$1 int frac
    [[ $p =~ ^([0-9]+)(\.([0-9]*))?$ ]] || usage_error "bad loss '$p': expected a percentage such as 5 or 0.1"
    int=$((10#${BASH_REMATCH[1]})); frac=${BASH_REMATCH[3]}
    while [[ $frac == *0 ]]; do frac=${frac%0}; done
    [ ${#frac} -le 3 ] || usage_error "bad loss '$p': the resolution is 0.001%"
    LOSS_THR=$((int * 1000 + 10#$(printf '%-3s' "$frac" | tr ' ' 0)))
    ((LOSS_THR <= 100000)) || usage_error "bad loss '$p': at most 100"
    LOSS=$int${frac:+.$frac}
}

# data_link_ends: "NETNS IFACE..." lines naming both ends of every data link, a line per
# namespace: each node's data interfaces, then (switch) the switch's ports. The rail
# bridges themselves are not link ends.
data_link_ends() {
    local i k ports=''
    for ((i = 0; i < NODES; i++)); do echo "$(node_ns "$i") ${IFN[*]}"; done
    [ "$TOPO" = switch ] || return 0
    for ((i = 0; i < NODES; i++)); do
        for ((k = 0; k < NICS; k++)); do ports+=" n${i}r$k"; done
    done
    echo "$NAME-sw$ports"
}

# tbf on the egress of every data interface, both ends of each veth: for a switch that
# includes the bridge ports, so two senders into one node share its port's rate as on a
# real switch. A full queue (50 ms at the rate) drops, as a switch port would; a raw
# sender blocks on its socket buffer long before that.
make_shaping() {
    local ns ifaces j
    local q="root tbf rate ${RATE_BPS}bit burst $BURST latency 50ms"
    while read -r ns ifaces; do
        for j in $ifaces; do echo "qdisc replace dev $j $q"; done | tc -n "$ns" -batch -
    done < <(data_link_ends)
}

# loss_tool: LINKLOSS = the linkloss program (built on first use).
loss_tool() {
    # shellcheck source=SCRIPTDIR/../linkloss.sh
    . "$VC_LIB/../linkloss.sh"
    linkloss_tool "$(cd "$VC_LIB/../../.." && pwd)"
}

# Loss on every data interface of every node, of frames arriving there, every EtherType
# so that TCP baselines and PME suffer alike. Not nftables: its netdev ingress hook runs
# after packet sockets bound to all protocols (PME's ring and pcap devices) have their
# copy, so it would drop frames for TCP only. linkloss's XDP program runs before them.
make_loss() {
    local i j
    # The program is compiled on first use: a compiler and the kernel's headers.
    command -v cc >/dev/null && [ -e /usr/include/linux/bpf.h ] || apt_install gcc libc6-dev
    loss_tool || die "$E_PREREQ" "--loss needs the linkloss program"
    for ((i = 0; i < NODES; i++)); do
        for j in "${IFN[@]}"; do
            nsenter --net="/run/netns/$(node_ns "$i")" "$LINKLOSS" set "$j" "$LOSS_THR" ||
                die "$E_FAIL" "cannot set --loss on $j of node $i"
        done
    done
}
