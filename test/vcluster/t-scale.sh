#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster at size: `up --nodes 16 --topology torus:4x4` comes up in under a minute, every
# one of its 64 data links carries raw frames between exactly the right neighbours, and
# `down` tears it all down cleanly.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=80 time=10
. "$(dirname "$0")/lib.sh"
vc_init vts16
t0=$(date +%s%N)
vc_up "$NAME" --nodes 16 --topology torus:4x4
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
say "up --nodes 16 --topology torus:4x4: $ms ms"
[ "$ms" -lt 60000 ] || fail "up took $ms ms, more than a minute"
json=$(vc_json "$NAME")
[ "$(jq '[.nodes[].ifaces[]] | length' <<<"$json")" = 64 ] || fail "expected 64 data interfaces"
[ "$(jq '.links | length' <<<"$json")" = 32 ] || fail "expected 32 links"
vc_check_nodes "$NAME"
vc_check_frames "$NAME"
t0=$(date +%s%N)
vc_check_down "$NAME"
t1=$(date +%s%N)
say "down: $(((t1 - t0) / 1000000)) ms"
