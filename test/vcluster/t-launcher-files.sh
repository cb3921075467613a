#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vcluster's launcher files, without root (maint/lib/vcluster/launcher.sh writes them as
# `up` does, into a state directory of the test's own; no cluster is made): the
# hostfile lists the nodes; the env file points hydra at the hostfile, the launcher and
# the management bridge; the launcher takes ssh's options and finds the node by any of
# its names (and refuses others, as ssh would, with 255); the hosts file gains the
# nodes' names and loses exactly them again; `vcluster mpiexec` adds the hostfile,
# launcher and interface a caller did not give, and refuses an mpiexec that is not
# hydra's.
# shellcheck source=test/vcluster/lib.sh
# pme-test: tier=default cpu=60 time=1
. "$(dirname "$0")/lib.sh"
vc_parts_init
n=vl$(($$ % 100000))
vc_fake_cluster "$n" 204 switch NODES=4
dir=$VCLUSTER_RUNDIR/$n

# --- hostfile and env file
[ "$(cat "$dir/hostfile")" = "$n-n0
$n-n1
$n-n2
$n-n3" ] || fail "hostfile: $(cat "$dir/hostfile")"
# shellcheck disable=SC2016 # expanded by the inner shell
env=$(env -i bash -c '. "$1" && echo "$HYDRA_HOST_FILE $HYDRA_LAUNCHER $HYDRA_LAUNCHER_EXEC $HYDRA_IFACE"' sh "$dir/env")
[ "$env" = "$dir/hostfile ssh $dir/launcher $n-mgmt" ] || fail "env file sets: $env"
say "ok: hostfile lists the 4 nodes; the env file sets HYDRA_HOST_FILE, HYDRA_LAUNCHER(_EXEC), HYDRA_IFACE"

# --- the launcher: ssh's command line, the node by any name
[ -x "$dir/launcher" ] || fail "launcher is not executable"
! grep -q "$VC_SRCDIR" "$dir/launcher" || fail "the launcher refers back into the checkout"
export VCLUSTER_LAUNCH_LOG=$TMPD/launch.log
# launch WANT ARGS...: the launcher, given ssh's ARGS, enters node WANT with the command
# words that follow the host (it then fails to enter: the namespace does not exist).
launch() {
    local want=$1
    shift
    : >"$VCLUSTER_LAUNCH_LOG"
    "$dir/launcher" "$@" </dev/null >/dev/null 2>&1 || true
    [ "$(cat "$VCLUSTER_LAUNCH_LOG")" = "$want" ] ||
        fail "launcher $*: entered '$(cat "$VCLUSTER_LAUNCH_LOG")', expected '$want'"
}
launch "$n-n1 echo hi" "$n-n1" echo hi
launch "$n-n2 hostname" n2 hostname
launch "$n-n3 a b c" 10.204.0.4 a b c
launch "$n-n0 true" -x -o StrictHostKeyChecking=no -p 22 -n user@n0 true
launch "$n-n0 true" -xoBatchMode=yes -p22 -- n0 true
launch "$n-n1 /usr/bin/hydra_pmi_proxy --control-port 10.204.0.254:4000" -q -l root -i key -T "$n-n1" /usr/bin/hydra_pmi_proxy --control-port 10.204.0.254:4000
vc_expect_exit 255 "'n4' is not a node of vcluster $n" "$dir/launcher" n4 true
vc_expect_exit 255 "usage" "$dir/launcher" -p 22
unset VCLUSTER_LAUNCH_LOG
say "ok: the launcher takes ssh's options (-o X, -oX, -p22, -n, -l u, --, user@host) and finds a node by name, n<i> or address"

# --- the hosts file
printf '127.0.0.1\tlocalhost\n10.9.9.9\tother\t# vcluster:other\n' >"$VCLUSTER_HOSTS_FILE"
hosts_add
hosts_add
want=$(printf '127.0.0.1\tlocalhost\n10.9.9.9\tother\t# vcluster:other\n'
    for i in 0 1 2 3; do printf '10.204.0.%s\t%s-n%s\t# vcluster:%s\n' $((i + 1)) "$n" "$i" "$n"; done)
[ "$(cat "$VCLUSTER_HOSTS_FILE")" = "$want" ] || fail "hosts file after adding (twice):
$(cat "$VCLUSTER_HOSTS_FILE")"
hosts_listed "$n" || fail "hosts_listed does not see $n"
hosts_remove "$n"
[ "$(cat "$VCLUSTER_HOSTS_FILE")" = "$(printf '127.0.0.1\tlocalhost\n10.9.9.9\tother\t# vcluster:other')" ] ||
    fail "hosts file after removing $n: $(cat "$VCLUSTER_HOSTS_FILE")"
! hosts_listed "$n" || fail "hosts_listed still sees $n"
[ -f "$VCLUSTER_RUNDIR/hosts.bak" ] || fail "no backup of the hosts file"
say "ok: the hosts file gains the nodes' names once and loses exactly them"

# --- vcluster mpiexec: what it adds, and what it refuses
hydra=$TMPD/hydra-mpiexec
# (a stand-in: says it is hydra, prints the arguments it is run with)
# shellcheck disable=SC2016
printf '#!/bin/sh\nif [ "$1" = -info ]; then echo "HYDRA build details:"; exit 0; fi\nprintf "%%s|" "$@"\n' >"$hydra"
chmod 755 "$hydra"
got=$("$VC" mpiexec --name "$n" --mpiexec "$hydra" -n 4 ./prog 'a b')
[ "$got" = "-f|$dir/hostfile|-launcher|ssh|-launcher-exec|$dir/launcher|-iface|$n-mgmt|-n|4|./prog|a b|" ] ||
    fail "mpiexec ran: $got"
got=$("$VC" mpiexec --name "$n" --mpiexec "$hydra" -f mine -iface lo -launcher-exec x -n 2 ./prog)
[ "$got" = "-launcher|ssh|-f|mine|-iface|lo|-launcher-exec|x|-n|2|./prog|" ] || fail "mpiexec with the caller's own: $got"
got=$("$VC" mpiexec --name "$n" --mpiexec "$hydra" --dry-run -hosts a,b ./prog)
[ "$got" = "$hydra -launcher ssh -launcher-exec $dir/launcher -iface $n-mgmt -hosts a\\,b ./prog " ] || fail "--dry-run: $got"
vc_expect_exit 3 "not MPICH's hydra" "$VC" mpiexec --name "$n" --mpiexec /bin/true ./prog
vc_expect_exit 2 "needs a program" "$VC" mpiexec --name "$n" --mpiexec "$hydra"
say "ok: vcluster mpiexec adds -f hostfile, -launcher ssh, -launcher-exec, -iface NAME-mgmt unless given; refuses a non-hydra (3)"
