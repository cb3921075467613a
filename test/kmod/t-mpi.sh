#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# MPI over the kernel device: unmodified MPI programs (MPICH's cpi, test/mpi/pingpong.c
# with every message checked up to 4 MiB, its large ones placed by zero copy) run on a
# 2-node virtual cluster inside the guest, every rank an unprivileged user of group pme
# with no capability, through /dev/pme; a rank that computes for three peer timeouts without MPI and without PME's
# helper thread is answered for by the kernel; a killed rank fails its peer within a
# second (the kernel's BYE); the module counted their frames; the guest's kernel log
# stays clean (maint/vm checks it).
#
# MPICH with ch4:pme comes from PME_MPICH_PREBUILT, else maint/build-mpich (as
# test/mpi/lib.sh finds it); the programs are compiled on the host, where it is fast.
# pme-test: tier=default cpu=140 time=57 needs=mpich
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root

if [ -z "${PME_IN_VM:-}" ]; then
    kmod_build
    kmod_mpich
    prefix=$KMOD_MPICH
    # Where the guest sees it too (its /tmp is its own).
    dir=$(mktemp -d "$builddir/kmpi.XXXXXX")
    chmod 755 "$dir"
    trap 'rm -rf "$dir"' EXIT
    cpi=$("$srcdir/maint/build-mpich" --print-srcdir 2>/dev/null)/examples/cpi.c
    [ -f "$cpi" ] || cpi=$(find "$(dirname "$prefix")" -path '*/examples/cpi.c' 2>/dev/null | head -n 1)
    [ -f "$cpi" ] || { echo "FAIL: MPICH's examples/cpi.c not found"; exit 1; }
    "$prefix/bin/mpicc" -O2 -o "$dir/cpi" "$cpi" -lm &&
        "$prefix/bin/mpicc" -O2 -o "$dir/pingpong" "$srcdir/test/mpi/pingpong.c" &&
        "$prefix/bin/mpicc" -O2 -o "$dir/compute" "$srcdir/test/mpi/pme_compute.c" &&
        "$prefix/bin/mpicc" -O2 -o "$dir/peerdeath" "$srcdir/test/mpi/pme_peerdeath.c" ||
        { echo "FAIL: mpicc"; exit 1; }
    PME_MPICH_PREBUILT=$prefix PME_KMPI_DIR=$dir PME_IN_VM=1 \
        "$srcdir/maint/vm" --timeout 900 -- bash "$0"
    exit $?
fi

kmod_need_tools
modprobe -a veth bridge
kmod_load
kmod_user pmeu pme
prefix=$PME_MPICH_PREBUILT
# The guest's writes stay in the guest: open the way to MPICH and the programs for the
# user there only.
for d in "$prefix" "$PME_KMPI_DIR"; do
    while [ "$d" != / ]; do chmod o+rx "$d"; d=$(dirname "$d"); done
done
WORK=$(mktemp -d)
chmod 755 "$WORK"
vc=$srcdir/maint/vcluster
name=kmpi
out=$("$vc" up --name $name --nodes 2 --topology switch 2>&1) || {
    echo "$out"
    echo "FAIL: vcluster up"
    exit 1
}
launcher=$(sed -n 's/.*launcher: *//p' <<<"$out" | head -n 1)
[ -x "$launcher" ] || { echo "$out"; echo "FAIL: no launcher in vcluster's report"; exit 1; }

# Hydra starts its proxies through this stand-in for ssh: the node's own launcher,
# with the command run as pmeu, without capabilities.
cat >"$WORK/launcher" <<EOF
#!/bin/bash
opts=()
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do opts+=("\$1"); shift; done
host=\$1
shift
exec "$launcher" "\${opts[@]}" "\$host" setpriv --reuid=pmeu --regid=pmeu --init-groups \\
    --inh-caps=-all --bounding-set=-all -- "\$@"
EOF
chmod 755 "$WORK/launcher"
export PME_DEVICE=kernel
mpx() { timeout -k 5 300 "$vc" mpiexec --name $name --mpiexec "$prefix/bin/mpiexec" \
    -launcher-exec "$WORK/launcher" "$@" 2>&1; }

frames0=$(cat /sys/class/misc/pme/counters/rx_frames)
out=$(mpx -n 2 -ppn 1 id -un) && rc=0 || rc=$?
check "the ranks run as the unprivileged user (exit $rc: $(echo $out))" \
    [ "$(sort -u <<<"$out")" = pmeu ]

out=$(mpx -n 2 -ppn 1 "$PME_KMPI_DIR/cpi") && rc=0 || rc=$?
echo "$out"
check "cpi on 2 nodes (exit $rc)" [ "$rc" = 0 ]
check "computes pi" grep -q "pi is approximately 3.14159" <<<"$out"

zc0=$(cat /sys/class/misc/pme/counters/zc_rx_frames)
out=$(mpx -n 2 -ppn 1 "$PME_KMPI_DIR/pingpong" -n 3 -max 4194304) && rc=0 || rc=$?
echo "$out"
check "pingpong up to 4 MiB, every byte checked (exit $rc)" [ "$rc" = 0 ]
check "says OK" grep -q "^pingpong: OK" <<<"$out"
check "reached 4 MiB" grep -q "^ *4194304 " <<<"$out"
zc=$(($(cat /sys/class/misc/pme/counters/zc_rx_frames) - zc0))
check "its large messages went by zero copy ($zc frames placed)" [ "$zc" -gt 1000 ]

# A rank that computes for three peer timeouts without calling MPI, with PME's helper
# thread off: the kernel answers for its endpoint (on the ring device the same job
# fails: test/mpi/t-helper.sh's control).
out=$(mpx -n 2 -ppn 1 -genv PME_PEER_TIMEOUT_MS 2000 -genv PME_HELPER 0 \
    "$PME_KMPI_DIR/compute" 6) && rc=0 || rc=$?
echo "$out"
check "a rank computing 6 s without MPI or helper (peer timeout 2 s) lives (exit $rc)" \
    [ "$rc" = 0 ]
check "and both ranks got their data" [ "$(grep -c ': ok$' <<<"$out")" = 2 ]

# A rank killed mid-job: its peer learns it from the kernel's BYE, long before the
# peer timeout (a minute here).
out=$(mpx -disable-auto-cleanup -n 2 -ppn 1 -genv PME_PEER_TIMEOUT_MS 60000 \
    "$PME_KMPI_DIR/peerdeath" 1 20 65536) && rc=0 || rc=$?
echo "$out"
line=$(grep -m1 "^rank 0: MPI error after" <<<"$out" || true)
ms=$(sed -n 's/.*after \([0-9-]*\) ms.*/\1/p' <<<"$line")
check "the survivor got an MPI error" [ -n "$line" ]
soon() { [[ $ms =~ ^[0-9]+$ ]] && [ "$ms" -lt 1000 ]; }
check "within a second of the death (${ms:-?} ms)" soon
check "saying the peer closed its endpoint" grep -q "closed its endpoint" <<<"$line"

frames=$(($(cat /sys/class/misc/pme/counters/rx_frames) - frames0))
check "through the kernel device: the module placed $frames frames" [ "$frames" -gt 1000 ]
check "and no endpoint is left" [ "$(grep -c . /proc/driver/pme)" -le 1 ]

"$vc" down --name $name >/dev/null 2>&1
rm -rf "$WORK"
check "rmmod after all that" rmmod pme
verdict
