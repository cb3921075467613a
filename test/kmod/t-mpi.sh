#!/bin/bash
# MPI over the kernel device: unmodified MPI programs (MPICH's cpi, test/mpi/pingpong.c
# with every message checked up to 4 MiB) run on a 2-node virtual cluster inside the
# guest, every rank an unprivileged user of group pme with no capability, through
# /dev/pme; the module counted their frames; the guest's kernel log stays clean
# (maint/vm checks it).
#
# MPICH with ch4:pme comes from PME_MPICH_PREBUILT, else maint/build-mpich (as
# test/mpi/lib.sh finds it); the programs are compiled on the host, where it is fast.
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
        "$prefix/bin/mpicc" -O2 -o "$dir/pingpong" "$srcdir/test/mpi/pingpong.c" ||
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

out=$(mpx -n 2 -ppn 1 "$PME_KMPI_DIR/pingpong" -n 3 -max 4194304) && rc=0 || rc=$?
echo "$out"
check "pingpong up to 4 MiB, every byte checked (exit $rc)" [ "$rc" = 0 ]
check "says OK" grep -q "^pingpong: OK" <<<"$out"
check "reached 4 MiB" grep -q "^ *4194304 " <<<"$out"

frames=$(($(cat /sys/class/misc/pme/counters/rx_frames) - frames0))
check "through the kernel device: the module placed $frames frames" [ "$frames" -gt 1000 ]
check "and no endpoint is left" [ "$(grep -c . /proc/driver/pme)" -le 1 ]

"$vc" down --name $name >/dev/null 2>&1
rm -rf "$WORK"
check "rmmod after all that" rmmod pme
verdict
