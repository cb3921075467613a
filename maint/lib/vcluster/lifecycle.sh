# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# lifecycle.sh - bringing a cluster up and down: the order of the steps of `up`, what
# `up` does when the cluster already exists, the clean-up of a failed `up`, and the
# teardown that removes whatever exists of a cluster, however far its `up` got.
#
# Owns: cluster_up (the sequence of the build steps: a new step, such as a link
# treatment or routes on the nodes, is one call in it), keep_or_teardown, up_failed,
# teardown, kill_ns_processes, down_cluster, down_all.
# Expects: every other part: base.sh, topology.sh, state.sh, build.sh, links.sh,
# launcher.sh, describe.sh, status.sh, routes.sh, slurm.sh; the settings of state.sh as globals, checked by
# the CLI (CONFIG describes them: an `up` with the same CONFIG is a no-op); root.

# cluster_up: make the cluster the settings describe, unless it exists as they describe it.
# shellcheck disable=SC2153 # NAME and TOPO are the settings (teardown's name and topo differ)
cluster_up() {
    need_root
    ensure_base_tools
    [ "$SLURM" = 0 ] || slurm_prereqs
    take_lock
    DIR=$(cluster_dir "$NAME")
    if [ -f "$DIR/state" ]; then
        keep_or_teardown
        [ "$REPLY" != kept ] || return 0
    fi
    check_free_names
    pick_net
    compute_ifaces

    local t0; t0=$(now_ms)
    mkdir -p "$DIR/uts"
    # Record what is about to be made before making it: a failed or killed `up` leaves a
    # state file that `down` (or the next `up`) uses to remove the pieces.
    write_state 0
    trap 'up_failed $?' EXIT
    make_namespaces
    make_mgmt
    if [ "$TOPO" = switch ]; then make_switch; else make_torus; fi
    configure_nodes
    [ -z "$RATE" ] || make_shaping
    [ "$LOSS_THR" = 0 ] || make_loss
    wait_running
    hosts_add
    write_hostfile
    write_launcher
    write_json
    write_tsv
    [ "$ROUTES" = 0 ] || make_routes
    [ "$SLURM" = 0 ] || slurm_start
    write_state 1
    trap - EXIT
    local t1; t1=$(now_ms)
    echo "vcluster $NAME: up in $(((t1 - t0) / 1000)).$(((t1 - t0) % 1000 / 100)) s"
    summary
}

# keep_or_teardown: for an existing cluster NAME, REPLY=kept (having said so) when it is
# complete, healthy and has the requested configuration; otherwise say why it goes and
# tear it down (REPLY=gone), so that cluster_up builds it anew.
keep_or_teardown() {
    local old_config old_net old_complete
    old_config=$(sed -n 's/^CONFIG="\(.*\)"$/\1/p' "$DIR/state")
    old_net=$(sed -n 's/^NET=//p' "$DIR/state")
    old_complete=$(sed -n 's/^COMPLETE=//p' "$DIR/state")
    if [ "$REBUILD" = 0 ] && [ "$old_config" = "$CONFIG" ] && [ "$old_complete" = 1 ] &&
        { [ -z "$NET" ] || [ "$NET" = "$old_net" ]; } && healthy "$NAME"; then
        echo "vcluster $NAME: already up with this configuration; nothing to do"
        load_state "$NAME"
        summary
        REPLY=kept
        return 0
    fi
    if [ "$REBUILD" = 1 ]; then
        echo "vcluster $NAME: --rebuild: tearing down and rebuilding"
    elif [ "$old_complete" != 1 ] || ! healthy "$NAME"; then
        echo "vcluster $NAME: exists but is incomplete or damaged; tearing down and rebuilding"
    else
        echo "vcluster $NAME: exists with another configuration ($old_config); tearing down and rebuilding"
    fi
    teardown "$NAME"
    REPLY=gone
}

up_failed() {
    local rc=$1
    trap - EXIT
    [ "$rc" != 0 ] || rc=$E_FAIL
    warn "up of cluster $NAME failed; removing what was made"
    teardown "$NAME" || true
    exit "$rc"
}

# teardown NAME: remove everything the state of cluster NAME names, whatever exists of it.
# Tolerates every piece being missing, so it also finishes a half-made or half-removed
# cluster. Interfaces in the host namespace are deleted explicitly (deleting one end of a
# veth deletes both at once), because a namespace's own interfaces go away asynchronously
# and would otherwise block an immediate `up` of the same name.
teardown() {
    local name=$1 dir state i ns
    dir=$(cluster_dir "$name")
    state=$dir/state
    if [ ! -f "$state" ]; then
        hosts_remove "$name"
        [ ! -d "$dir" ] || rm -rf "$dir"
        return 0
    fi
    local nodes topo
    nodes=$(sed -n 's/^NODES=//p' "$state")
    topo=$(sed -n 's/^TOPO=//p' "$state")
    local nss=()
    for ((i = 0; i < ${nodes:-0}; i++)); do nss+=("$name-n$i"); done
    [ "$topo" != switch ] || nss+=("$name-sw")
    local existing=() self_net
    self_net=$(stat -L -c %i /proc/self/ns/net)
    for ns in "${nss[@]}"; do
        [ -e "/run/netns/$ns" ] || continue
        if [ "$(stat -L -c %i "/run/netns/$ns" 2>/dev/null)" = "$self_net" ]; then
            die "$E_FAIL" "down: this shell runs inside node $ns; run down from the host namespace"
        fi
        existing+=("$ns")
    done
    slurm_stop "$dir"
    kill_ns_processes "${existing[@]}"
    # Route files of the nodes (`up --routes`, or pme_route run on a node by hand).
    remove_route_files "${existing[@]}"
    # Counter files of the nodes' PME endpoints (/dev/shm/pme-<uid>/<netns inode>.<interface>.<id>):
    # a killed process cannot remove its own, and no process of these namespaces is left.
    for ns in "${existing[@]}"; do
        rm -f /dev/shm/pme-*/"$(stat -L -c %i "/run/netns/$ns")".* 2>/dev/null || true
    done
    # Host-namespace interfaces first (see above).
    local links; links=$(host_links | grep -E "^$name-(m[0-9]+|mgmt)$" || true)
    # shellcheck disable=SC2086 # one interface name per word
    if [ -n "$links" ]; then printf 'link del %s\n' $links | ip -force -batch - 2>/dev/null || true; fi
    if [ ${#existing[@]} -gt 0 ]; then
        printf 'netns del %s\n' "${existing[@]}" | ip -force -batch - 2>/dev/null || true
    fi
    if [ -d "$dir/uts" ]; then
        local f
        for f in "$dir"/uts/*; do
            [ -e "$f" ] || continue
            if mountpoint -q "$f"; then umount "$f" 2>/dev/null || umount -l "$f" || true; fi
        done
    fi
    hosts_remove "$name"
    rm -rf "$dir"
}

# kill_ns_processes NS...: stop what still runs inside the nodes (a namespace removed by
# name would otherwise live on, unreachable, with its interfaces), TERM first, then KILL.
kill_ns_processes() {
    [ $# -gt 0 ] || return 0
    local ns pids=() try
    for try in 1 2 3 4 5 6 7 8 9 10 11; do
        pids=()
        for ns in "$@"; do
            # shellcheck disable=SC2207 # pids are plain numbers
            pids+=($(ip netns pids "$ns" 2>/dev/null || true))
        done
        [ ${#pids[@]} -gt 0 ] || return 0
        if [ "$try" = 1 ]; then kill -TERM "${pids[@]}" 2>/dev/null || true
        elif [ "$try" = 11 ]; then kill -KILL "${pids[@]}" 2>/dev/null || true
        fi
        sleep 0.2
    done
}

# down_cluster NAME: remove cluster NAME, saying so, or say there is nothing to remove.
down_cluster() {
    local name=$1
    need_root
    ensure_base_tools
    take_lock
    check_name "$name"
    if [ ! -d "$(cluster_dir "$name")" ] && ! hosts_listed "$name"; then
        echo "vcluster $name: not up; nothing to do"
        return 0
    fi
    teardown "$name"
    echo "vcluster $name: down"
}

# down_all: remove every cluster of the state directory.
down_all() {
    need_root
    ensure_base_tools
    take_lock
    local d n=0
    for d in "$VC_RUN"/*/; do
        [ -d "$d" ] || continue
        d=${d%/}; d=${d##*/}
        [[ $d =~ ^[a-z][a-z0-9]{0,7}$ ]] || continue
        teardown "$d"
        echo "vcluster $d: down"
        n=$((n + 1))
    done
    echo "vcluster: $n cluster(s) removed"
}
