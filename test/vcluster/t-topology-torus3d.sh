#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster: a 2x2x2 torus of 8 nodes, 6 data links each (xp xm yp ym zp zm). Raw frames
# reach exactly the described neighbour interface; the management network reaches every
# node; down leaves nothing behind.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=40 time=18
. "$(dirname "$0")/lib.sh"
vc_topology_test vt3d --nodes 8 --topology torus:2x2x2
