#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A process bound to a core of its own keeps polling in PME_WAIT=auto while another
# core is busy, as ranks started with `mpiexec -bind-to core` must (see
# test/netns/wait_own_core.c). Skipped on a machine with a single core.
# pme-test: tier=default cpu=all time=2
set -u
. "$srcdir/test/netns/lib.sh"
need_root
prog=$(need_built test/netns/wait_own_core) || exit 1
pair pmewc$$ 9000
ip netns exec pmewc$$a "$prog" pmewc$$va
