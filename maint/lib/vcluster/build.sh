# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# build.sh - making a cluster's topology in the kernel: the nodes (a network and a UTS
# namespace each), the management bridge, the data cabling (one bridge per rail in a
# "switch" namespace, or veth links straight between ring/torus neighbours), the
# interfaces' settings, and the wait until every interface is running.
#
# Owns: make_namespaces, make_mgmt, make_switch, make_torus, configure_nodes,
# wait_running, addrgen. Everything it makes is named after the cluster, so the state
# file alone tells `down` what to remove (lifecycle.sh).
# Expects: base.sh, topology.sh (names, MACs, neighbours, addresses); the settings of
# state.sh as globals, DIR (with its uts/ directory) and IFN; root.

have_ipv6() { [ -d /proc/sys/net/ipv6 ]; }

# addrgen DEV: no IPv6 link-local address on DEV. Keeps the data links silent (no router
# solicitations, DAD or MLD frames) so counters and captures show PME's frames only.
addrgen() { if have_ipv6; then echo "link set dev $1 addrgenmode none"; fi; }

make_namespaces() {
    local i ns
    cluster_netns
    printf 'netns add %s\n' "${NSS[@]}" | ip -batch -
    # A persistent UTS namespace per node, bind-mounted on a file like ip-netns does for
    # network namespaces: MPI libraries decide what is on-node by hostname.
    for ((i = 0; i < NODES; i++)); do
        ns=$(node_ns "$i")
        : >"$DIR/uts/$ns"
        # shellcheck disable=SC2016 # $1 is expanded by the inner shell
        unshare --uts="$DIR/uts/$ns" sh -c 'echo "$1" >/proc/sys/kernel/hostname' sh "$ns"
    done
}

make_mgmt() {
    local i br=$NAME-mgmt
    {
        mac "$MT_BRIDGE" 0 255
        echo "link add $br address $REPLY type bridge stp_state 0 mcast_snooping 0"
        echo "addr add 10.$NET.0.254/24 dev $br"
        addrgen "$br"
        echo "link set $br up"
        for ((i = 0; i < NODES; i++)); do
            local h n
            mac "$MT_MGMT_HOST" "$i" 0; h=$REPLY
            mac "$MT_MGMT" "$i" 0; n=$REPLY
            echo "link add $NAME-m$i address $h type veth peer name mgmt0 address $n netns $(node_ns "$i")"
            addrgen "$NAME-m$i"
            echo "link set $NAME-m$i master $br up"
        done
    } | ip -batch -
}

# switch: one bridge per rail, in the cluster's own "switch" namespace. Keeping the data
# bridges out of the host namespace keeps the host's firewall (br_netfilter) and its
# interface list out of the data path.
make_switch() {
    local i k sw=$NAME-sw
    {
        for ((k = 0; k < NICS; k++)); do
            mac "$MT_BRIDGE" 0 "$k"
            echo "link add r$k address $REPLY mtu $MTU type bridge stp_state 0 mcast_snooping 0"
            addrgen "r$k"
            echo "link set r$k up"
        done
    } | ip -n "$sw" -batch -
    {
        for ((i = 0; i < NODES; i++)); do
            for ((k = 0; k < NICS; k++)); do
                local a b
                mac "$MT_RAIL" "$i" "$k"; a=$REPLY
                mac "$MT_PORT" "$i" "$k"; b=$REPLY
                echo "link add eth$k mtu $MTU address $a netns $(node_ns "$i") type veth peer name n${i}r$k mtu $MTU address $b netns $sw"
            done
        done
    } | ip -batch -
    {
        for ((i = 0; i < NODES; i++)); do
            for ((k = 0; k < NICS; k++)); do
                addrgen "n${i}r$k"
                echo "link set n${i}r$k master r$k up"
            done
        done
    } | ip -n "$sw" -batch -
}

# torus/ring: node i's "+" interface of dimension d is cabled to the "-" interface of its
# "+" neighbour, so every link is made exactly once. In a dimension of size 2 a node's
# "+" and "-" interfaces both reach the same neighbour, over two distinct links.
make_torus() {
    local i d a b
    {
        for ((i = 0; i < NODES; i++)); do
            for ((d = 0; d < ${#DIMS[@]}; d++)); do
                neighbour "$i" "$d" 1
                mac "$MT_LINK" "$i" $((2 * d)); a=$REPLY
                mac "$MT_LINK" "$NB" $((2 * d + 1)); b=$REPLY
                echo "link add ${LETTERS[d]}p mtu $MTU address $a netns $(node_ns "$i") type veth peer name ${LETTERS[d]}m mtu $MTU address $b netns $(node_ns "$NB")"
            done
        done
    } | ip -batch -
}

configure_nodes() {
    local i j ifn
    for ((i = 0; i < NODES; i++)); do
        {
            echo "link set lo up"
            addrgen mgmt0
            echo "addr add 10.$NET.0.$((i + 1))/24 dev mgmt0"
            echo "link set mgmt0 up"
            # As on a real cluster the default route leaves by the management network:
            # what PME and MPI take by default is every other interface (the data NICs).
            echo "route add default via 10.$NET.0.254 dev mgmt0"
            for ((j = 0; j < ${#IFN[@]}; j++)); do
                ifn=${IFN[j]}
                addrgen "$ifn"
                if [ "$DATA_IP" = 1 ]; then
                    data_ip "$i" "$j"
                    echo "addr add $REPLY dev $ifn"
                fi
                echo "link set $ifn up"
            done
        } | ip -n "$(node_ns "$i")" -batch -
    done
}

# wait_running: return only once every interface is operationally up. The kernel reports
# a new veth's carrier through linkwatch, up to a second later; until then it is not
# IFF_RUNNING and e.g. UCX refuses it ("network device is not available").
wait_running() {
    local try ns pending
    cluster_netns
    local nss=("${NSS[@]}")
    for ((try = 0; try < 100; try++)); do
        pending=()
        for ns in "${nss[@]}"; do
            if ip -n "$ns" -o link show | awk '$2 !~ /^lo:/ && !/state UP/ { bad = 1 } END { exit !bad }'; then
                pending+=("$ns")
            fi
        done
        [ ${#pending[@]} -gt 0 ] || return 0
        nss=("${pending[@]}")
        sleep 0.05
    done
    die "$E_FAIL" "interfaces of ${nss[*]} did not come up within 5 s"
}
