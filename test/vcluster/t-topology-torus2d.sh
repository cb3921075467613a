#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster: a 2x2 torus. Every node has 4 data links (xp xm yp ym); with wraparound in
# dimensions of size 2, xp and xm of a node reach the same neighbour over two distinct
# links. Raw frames reach exactly the described neighbour interface; the management
# network reaches every node; down leaves nothing behind.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=40 time=11
. "$(dirname "$0")/lib.sh"
vc_topology_test vt2d --topology torus:2x2
