#!/bin/bash
# MPICH's own point-to-point tests over the kernel device: the pt2pt lines of the CI
# subset of MPICH's suite (test/mpi/ci-tests.txt, as maint/mpich-tests --set ci runs
# them) on a 2-node virtual cluster inside the guest, every rank an unprivileged user of
# group pme with no capability, through /dev/pme, large messages by zero copy. Every
# test must pass (test/mpi/exclude.txt's exclusions apply); the module placed frames
# without copies and left nothing pinned; the guest's kernel log stays clean.
#
# MPICH with ch4:pme comes from PME_MPICH_PREBUILT, else maint/build-mpich; the tests are
# compiled on the host (maint/mpich-tests --build-only), where it is fast.
#
# One line differs from the host's: pt2pt/sendflood runs with 2 ranks (one per node)
# instead of 8. Its 8 ranks make 700,000 small round trips with 4 ranks per node on the
# guest's 2 emulated CPUs: it had not finished after 300 s, while the other 21 tests took
# 153 s together. With 2 ranks every one of its messages still crosses /dev/pme; the
# 8-rank line runs on the host (test/mpi/t-mpich-pt2pt.sh).
set -u
. "$srcdir/test/kmod/lib.sh"
kmod_need_root
# pme-test-timeout: 1500 (run-tests.sh reads this line; the guest gets 1380 s of it)
# The test list, the same on the host (to compile) and in the guest (to run).
tests_list() {
    grep -E '^pt2pt/' "$srcdir/test/mpi/ci-tests.txt" | sed -e 's/\s*#.*//' \
        -e 's|^pt2pt/sendflood [0-9]*|pt2pt/sendflood 2|'
}

if [ -z "${PME_IN_VM:-}" ]; then
    kmod_build
    kmod_mpich
    prefix=$KMOD_MPICH
    list=$(mktemp)
    tests_list >"$list"
    PME_MPICH_PREBUILT=$prefix "$srcdir/maint/mpich-tests" --impl pme --tests "$list" \
        --build-only || { echo "FAIL: building MPICH's tests"; rm -f "$list"; exit 1; }
    rm -f "$list"
    PME_MPICH_PREBUILT=$prefix PME_IN_VM=1 "$srcdir/maint/vm" --timeout 1380 --mem 1536 \
        -- bash "$0"
    exit $?
fi

modprobe -a veth bridge
kmod_load
kmod_user pmeu pme
prefix=$PME_MPICH_PREBUILT
suite=$(dirname "$(dirname "$("$srcdir/maint/build-mpich" --print-srcdir)")")/build/mpitests-pme
# The guest's writes stay in the guest: open the way to MPICH and the tests for the
# user there only.
for d in "$prefix" "$suite"; do
    chmod -R o+rX "$d"
    while [ "$d" != / ]; do chmod o+rx "$d"; d=$(dirname "$d"); done
done
WORK=$(mktemp -d)
chmod 777 "$WORK"
# Hydra starts its proxies through this: vcluster's launcher for the node, with the
# command run as pmeu, without capabilities.
name=kmpich
cat >"$WORK/launcher" <<EOF
#!/bin/bash
opts=()
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do opts+=("\$1"); shift; done
host=\$1
shift
exec ${VCLUSTER_RUNDIR:-/run/vcluster}/$name/launcher "\${opts[@]}" "\$host" \\
    setpriv --reuid=pmeu --regid=pmeu --init-groups --inh-caps=-all --bounding-set=-all -- \\
    $WORK/as-user "\$@"
EOF
# What the proxy runs as, noted on its way (the launcher joins its words as ssh does).
printf '#!/bin/bash\nid -un >>%s/ranks\nexec "$@"\n' "$WORK" >"$WORK/as-user"
chmod 755 "$WORK/launcher" "$WORK/as-user"
export PME_DEVICE=kernel
cnt() { cat /sys/class/misc/pme/counters/"$1"; }
zrx0=$(cnt zc_rx_frames)

tests_list >"$WORK/tests"
# Shown as it comes (the guest's console is this test's log), kept for the checks.
echo "guest: MPICH's tests start ${SECONDS}s after boot"
"$srcdir/maint/mpich-tests" --impl pme --tests "$WORK/tests" --nodes 2 --name $name \
    --launcher-exec "$WORK/launcher" --timeout 300 2>&1 | tee "$WORK/log"
rc=${PIPESTATUS[0]}
out=$(cat "$WORK/log")
echo "guest: MPICH's tests ended ${SECONDS}s after boot"
check "MPICH's pt2pt tests pass on 2 nodes through /dev/pme (exit $rc)" [ "$rc" = 0 ]
check "every one of them ran" grep -q "pme: [0-9]* passed, 0 failed, 0 skipped" <<<"$out"
check "as the unprivileged user" [ -s "$WORK/ranks" ] && [ "$(sort -u "$WORK/ranks")" = pmeu ]
zrx=$(($(cnt zc_rx_frames) - zrx0))
check "large messages went by zero copy ($zrx frames placed)" [ "$zrx" -gt 1000 ]
check "no endpoint is left" [ "$(grep -c . /proc/driver/pme)" -le 1 ]
check "and nothing is pinned" [ "$(cnt zc_pinned_pages)" = 0 ]
rm -rf "$WORK"
check "rmmod after all that" rmmod pme
verdict
