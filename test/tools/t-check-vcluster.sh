#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pme_info --check --hostfile on a virtual cluster (maint/vcluster, three nodes on a
# switch, MTU 9000), run inside node 0 as a site would run it on its first node, with
# the cluster's hostfile and its ssh stand-in (HYDRA_LAUNCHER_EXEC, as the cluster's
# env file sets it):
#   - every node answers, under its own host name, with its data interface and MTU
#     9000; nothing blocks (exit 0);
#   - node 2's MTU lowered to 1500: the mismatch is reported, naming node 2 and 1500;
#   - node 1's data interface down: node 1 is reported as blocked and the exit status
#     is 1.
# Root only (namespaces).
# pme-test: tier=default cpu=40 time=3
set -euo pipefail
. "$srcdir/test/tools/lib.sh"
. "$srcdir/test/mpi/lib.sh"
pme_require_root
PME_INFO=$builddir/src/tools/pme_info
[ -x "$PME_INFO" ] || tools_fail "$PME_INFO not built"
pme_cluster_name chk
NAME=$REPLY
pme_cluster_up "$NAME" --nodes 3 --topology switch --mtu 9000
dir=/run/vcluster/$NAME
# data_iface I: node I's (first) data interface, from the cluster's description.
data_iface() { awk -F'\t' -v i="$1" '$1 == "iface" && $2 == i { print $3; exit }' "$dir/cluster.tsv"; }
ifc=$(data_iface 0)
[ -n "$ifc" ] || tools_fail "no data interface in $dir/cluster.tsv"
for i in 1 2; do
    [ "$(data_iface $i)" = "$ifc" ] || tools_fail "node $i's data interface is not $ifc: the test assumes one name"
done
out=$(mktemp /tmp/pme-check-vc.XXXXXX)
trap 'rm -f "$out"; pme_cleanup' EXIT

# check RC: the check from node 0 over every node of the hostfile, output in $out.
check() {
    local rc=0
    "$pme_vc" exec --name "$NAME" 0 env HYDRA_LAUNCHER_EXEC="$dir/launcher" PME_RAWSOCK=0 \
        "$PME_INFO" --check -i "$ifc" --hostfile "$dir/hostfile" >"$out" 2>&1 || rc=$?
    [ "$rc" = "$1" ] || { cat "$out"; tools_fail "the check exited $rc, not $1"; }
}
has() { grep -qE -- "$1" "$out" || { cat "$out"; tools_fail "no line matching '$1'"; }; }

echo "== every node alike"
check 0
has "^PME check of $NAME-n0,"
for i in 0 1 2; do has "^  ok +$NAME-n$i: interface $ifc, MTU 9000$"; done
has "every host answering uses MTU 9000"

echo "== node 2 at MTU 1500"
ip -n "$NAME-n2" link set "$ifc" mtu 1500
check 0
has "^  WARN +MTU mismatch: $NAME-n2 has 1500, $NAME-n[01] has 9000"
ip -n "$NAME-n2" link set "$ifc" mtu 9000

echo "== node 1's interface down"
ip -n "$NAME-n1" link set "$ifc" down
check 1
has "^  BLOCKS $NAME-n1: interface $ifc, MTU 9000, PME cannot run there"
has "fix: .*launcher $NAME-n1 .*pme_info --check"
echo "pme_info --check --hostfile finds what differs between the nodes of a virtual cluster"
