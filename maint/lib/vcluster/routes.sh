# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# routes.sh - PME's routes on the nodes of a ring or torus (`up --routes`): each node
# computes its own from the cluster's description and loads the in-kernel forwarder,
# with pme_route, as an administrator does once per boot on a real mesh; and the route
# files that routed nodes leave in /run/pme, removed at teardown.
#
# Owns: find_pme_route, make_routes, remove_route_files.
# Expects: base.sh (die, E_PREREQ, E_FAIL), state.sh (node_ns, the settings), the
# cluster's cluster.tsv written (describe.sh), root.

# find_pme_route [quiet]: REPLY = the pme_route to use, looked for as maint/faults looks
# for pme_faultctl: $PME_ROUTE, $builddir's, the tree's build/, then PATH. None: exit
# with the fix, or (quiet) return 1.
find_pme_route() {
    local top c
    top=$(cd "$VC_LIB/../../.." && pwd)
    for c in "${PME_ROUTE:-}" "${builddir:+$builddir/src/tools/pme_route}" \
        "$top/build/src/tools/pme_route" "$(command -v pme_route || true)"; do
        if [ -n "$c" ] && [ -x "$c" ]; then
            REPLY=$c
            return 0
        fi
    done
    [ "${1:-}" != quiet ] || return 1
    die "$E_PREREQ" "--routes needs pme_route: build PME (./autogen.sh && mkdir build && cd build && ../configure && make, with clang, libbpf-dev and bpftool installed) or set PME_ROUTE=<path>"
}

# make_routes: on every node, `pme_route install <cluster.tsv> --node I`: the node's route
# file, and the forwarder on its data interfaces, so that PME frames for nodes that are
# not neighbours cross the nodes on the way without any process of theirs.
# ROUTES=auto (a ring or torus without --routes): the same when pme_route is there,
# else a warning, and ROUTES becomes 0.
make_routes() {
    if [ "$ROUTES" = auto ] && ! find_pme_route quiet; then
        echo "vcluster: warning: no pme_route built, so no routes: MPI over PME reaches only neighbouring nodes (build PME, or pass --no-routes to silence this)" >&2
        ROUTES=0
        return 0
    fi
    find_pme_route
    ROUTES=1
    local route=$REPLY i ns out
    for ((i = 0; i < NODES; i++)); do
        ns=$(node_ns "$i")
        out=$(nsenter --net="/run/netns/$ns" --uts="$DIR/uts/$ns" -- \
            "$route" install "$DIR/cluster.tsv" --node "$i" 2>&1) ||
            die "$E_FAIL" "--routes: pme_route install on node $ns failed: $out"
    done
}

# remove_route_files NS...: the route files of these nodes' network namespaces
# (/run/pme/routes.<netns inode>, pme_route.h); the forwarder itself goes with the
# nodes' interfaces.
remove_route_files() {
    local ns ino
    for ns in "$@"; do
        ino=$(stat -L -c %i "/run/netns/$ns" 2>/dev/null) || continue
        rm -f "/run/pme/routes.$ino"
    done
}
