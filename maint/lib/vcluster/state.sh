# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# state.sh - where a cluster's state lives and who may change it: the state directory
# (VC_RUN/NAME), its state file (the cluster's settings in shell syntax, written before
# anything is made so that `down` can undo a half-finished `up`), the global lock, and
# the choice of a free 10.NET.0.0/16 block.
#
# Owns: VC_RUN, the state file's format, DIR (the cluster's state directory), and the
# cluster's settings as globals: NAME TOPO SPEC DIMS NODES NICS MTU RATE RATE_BPS BURST
# LOSS LOSS_THR DATA_IP NET CONFIG COMPLETE (`up` sets them from its options,
# load_state from the file), and STATE_EXTRA: the names of more settings, which a part
# that adds a feature to `up` appends at source time to have them recorded and read
# back; cluster_dir, take_lock, write_state, load_state, healthy, host_links,
# check_free_names, pick_net.
# Expects: base.sh, topology.sh (compute_ifaces, node_ns), slurm.sh (slurm_healthy).

# "test && test || die" is the idiom of the checks here:
# shellcheck disable=SC2015

VC_RUN=${VCLUSTER_RUNDIR:-/run/vcluster}
STATE_EXTRA=()

cluster_dir() { printf '%s/%s' "$VC_RUN" "$1"; }

# Global lock: serialises up/down of all clusters (subnet choice, /etc/hosts edits and
# host-namespace interface names are shared). exec/status never take it.
take_lock() {
    mkdir -p "$VC_RUN"
    exec 9>"$VC_RUN/.lock"
    flock -w 600 9 || die "$E_FAIL" "timed out waiting for $VC_RUN/.lock"
}

# write_state COMPLETE: record the settings; COMPLETE=1 once `up` has finished.
write_state() {
    local f; f=$(cluster_dir "$NAME")/state
    cat >"$f.tmp" <<EOF
# vcluster state of cluster $NAME (shell syntax, read by $PROG; the public
# description is cluster.json beside this file)
VERSION=1
NAME=$NAME
TOPO=$TOPO
SPEC=$SPEC
DIMS_STR="${DIMS[*]}"
NODES=$NODES
NICS=$NICS
MTU=$MTU
RATE=$RATE
RATE_BPS=$RATE_BPS
BURST=$BURST
LOSS=$LOSS
LOSS_THR=$LOSS_THR
DATA_IP=$DATA_IP
ROUTES=${ROUTES:-0}
NET=$NET
CONFIG="$CONFIG"
COMPLETE=$1
EOF
    local v
    for v in "${STATE_EXTRA[@]}"; do printf '%s=%q\n' "$v" "${!v}"; done >>"$f.tmp"
    mv "$f.tmp" "$f"
}

# load_state NAME: read a cluster's state into the globals, or exit 4.
load_state() {
    local f; f=$(cluster_dir "$1")/state
    [ -f "$f" ] || die "$E_NOCLUSTER" "no cluster named '$1' (see '$PROG list')"
    ROUTES=0 # not in the state of clusters made before --routes existed
    SLURM=0  # nor before --slurm
    # shellcheck disable=SC1090 # written by write_state above
    . "$f"
    read -r -a DIMS <<<"$DIMS_STR"
    DIR=$(cluster_dir "$NAME")
    compute_ifaces
}

# healthy NAME: every namespace and the management bridge of a complete cluster exist,
# and its Slurm daemons run (up --slurm).
healthy() {
    (
        load_state "$1"
        local i
        [ -e "/sys/class/net/$NAME-mgmt" ] || exit 1
        for ((i = 0; i < NODES; i++)); do
            [ -e "/run/netns/$(node_ns "$i")" ] && mountpoint -q "$DIR/uts/$(node_ns "$i")" || exit 1
        done
        [ "$TOPO" != switch ] || [ -e "/run/netns/$NAME-sw" ] || exit 1
        [ "$SLURM" = 0 ] || slurm_healthy
    ) >/dev/null 2>&1
}

# host_links: the names of the host namespace's interfaces, one a line.
host_links() { ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'; }

# check_free_names: refuse to take over namespaces or interfaces that vcluster did not make
# (there is no state for this cluster at this point).
check_free_names() {
    local ns
    for ns in $(ip netns list | awk '{print $1}'); do
        if [[ $ns =~ ^$NAME-(n[0-9]+|sw)$ ]]; then
            die "$E_FAIL" "network namespace $ns exists but belongs to no vcluster state; remove it or choose another --name"
        fi
    done
    local links; links=$(host_links)
    if grep -Eq "^$NAME-(mgmt|m[0-9]+)$" <<<"$links"; then
        die "$E_FAIL" "interfaces named $NAME-* exist but belong to no vcluster state; remove them or choose another --name"
    fi
}

# pick_net: NET = the second octet of this cluster's 10.NET.0.0/16 block. Skips blocks
# used by other vclusters or by any address or route of the host namespace.
pick_net() {
    local x used others="" s
    used=$({ ip -4 -o addr show; ip -4 route show table all; } 2>/dev/null | grep -oE '(^|[^0-9.])10\.[0-9]+\.' | grep -oE '10\.[0-9]+' | sort -u || true)
    for s in "$VC_RUN"/*/state; do
        [ -f "$s" ] && [ "$s" != "$DIR/state" ] || continue
        others+=" $(sed -n 's/^NET=//p' "$s") "
    done
    if [ -n "$NET" ]; then
        [[ $others != *" $NET "* ]] || die "$E_FAIL" "--net $NET: 10.$NET.0.0/16 is used by another vcluster"
        ! grep -qx "10\.$NET" <<<"$used" || die "$E_FAIL" "--net $NET: 10.$NET.0.0/16 overlaps an address or route of this host"
        return 0
    fi
    for ((x = 200; x <= 254; x++)); do
        [[ $others == *" $x "* ]] && continue
        grep -qx "10\.$x" <<<"$used" && continue
        NET=$x
        return 0
    done
    die "$E_FAIL" "no free 10.X.0.0/16 block between 10.200 and 10.254; pass --net X"
}
