#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster: a switched cluster of 4 nodes with 2 rails. Every node has eth0 and eth1, on
# bridges r0 and r1; raw frames reach exactly the other nodes of the same rail; the
# management network reaches every node; down leaves nothing behind.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=40 time=9
. "$(dirname "$0")/lib.sh"
vc_topology_test vts --nodes 4 --topology switch --nics 2
