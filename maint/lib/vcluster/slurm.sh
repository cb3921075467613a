# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# slurm.sh - Slurm on a cluster (`up --slurm`): a MUNGE daemon with the cluster's own
# key, a slurmctld on the management network and one slurmd inside every node, so that
# MPI jobs start as on a real cluster (srun with Slurm's PMI, sbatch), and the bodies of
# `srun` and `sbatch`.
#
# Everything lives in the state directory's slurm/ (configuration, keys, spool, pid and
# log files) and every daemon is found again by its pid file, so `down` stops them all
# and removing the directory leaves nothing behind. Nothing of the host's own Slurm or
# MUNGE (/etc/slurm, /etc/munge, their default sockets) is read or touched.
#
# Owns: SLURM (a setting recorded in the state), SLURM_CPUS, slurm_port, slurm_prereqs,
# slurm_start, slurm_stop, slurm_healthy, run_slurm.
# Expects: base.sh, topology.sh (node_ns), state.sh (STATE_EXTRA, DIR), launcher.sh
# (enter_node); the settings of state.sh as globals; root.

SLURM=0
STATE_EXTRA+=(SLURM)
# CPUs each node offers to Slurm, whatever the machine has: `-N 4 -n 8` then places two
# tasks on every node, on any machine. OverSubscribe lets up to 4 jobs share them, so
# that concurrent jobs run side by side on the same nodes, as the tests need.
SLURM_CPUS=2

# slurm_port: REPLY = the cluster's slurmctld port. slurmctld runs in the host namespace
# and listens on every address, so each cluster needs its own port; below the kernel's
# ephemeral range so that no outgoing connection holds it.
slurm_port() { REPLY=$((20000 + NET)); }

slurm_prereqs() {
    ensure_tools munged:munge slurmctld:slurmctld slurmd:slurmd srun:slurm-client
    # Debian's pmix plugin opens libpmix.so, which only the -dev package provides:
    # without it `srun --mpi=pmix` fails in slurmstepd with "can not load PMIx library".
    ldconfig -p 2>/dev/null | grep 'libpmix\.so ' >/dev/null || apt_install libpmix-dev
}

# slurm_conf SDIR: the cluster's slurm.conf. SlurmUser root: jobs of the test programs run
# as root like everything on the virtual nodes. The pids of a step are tracked without
# cgroups (proctrack/linuxproc): `ip netns exec` gives each slurmd a fresh /sys where no
# cgroup file system is mounted. Each node has a TmpFS of its own: the pmix plugin makes
# its directories there named by job and step only, and the nodes share one /tmp.
slurm_conf() {
    local sd=$1 last=$((NODES - 1))
    slurm_port
    cat <<EOF
# Slurm for vcluster $NAME (written by vcluster up --slurm; removed by vcluster down).
ClusterName=$NAME
SlurmctldHost=$NAME-ctl(10.$NET.0.254)
SlurmctldPort=$REPLY
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sd/munge/socket
StateSaveLocation=$sd/ctld
SlurmctldPidFile=$sd/ctld/slurmctld.pid
SlurmctldLogFile=$sd/log/slurmctld.log
SlurmdSpoolDir=$sd/spool/%n
SlurmdPidFile=$sd/spool/%n.pid
SlurmdLogFile=$sd/log/slurmd-%n.log
TmpFS=$sd/spool/%n/tmp
SlurmdParameters=config_overrides
PlugStackConfig=$sd/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
NodeName=$NAME-n[0-$last] NodeAddr=10.$NET.0.[1-$NODES] CPUs=$SLURM_CPUS State=UNKNOWN
PartitionName=nodes Nodes=ALL Default=YES MaxTime=INFINITE OverSubscribe=FORCE:4 State=UP
EOF
}

# slurm_start: write the configuration and start the daemons of the loaded cluster;
# returns once every node is idle.
slurm_start() {
    local sd=$DIR/slurm i ns
    slurm_port
    ! ss -Hltn "sport = :$REPLY" 2>/dev/null | grep -q . ||
        die "$E_FAIL" "--slurm: port $REPLY (slurmctld of 10.$NET.0.0/16) is in use; pass another --net"
    mkdir -p "$sd/munge" "$sd/ctld" "$sd/log" "$sd/spool"
    # munged wants its socket's directory searchable by all and its key readable by
    # nobody else.
    chmod 755 "$sd/munge"
    (umask 077 && head -c 1024 /dev/urandom >"$sd/munge/munge.key")
    slurm_conf "$sd" >"$sd/slurm.conf"
    echo "CgroupPlugin=cgroup/v1" >"$sd/cgroup.conf"
    : >"$sd/plugstack.conf"
    # (9>&- below: a daemon must not inherit the lock every maint/vcluster holds on fd 9
    # while it works, or no other cluster can be made or removed while it runs.)
    munged --socket="$sd/munge/socket" --key-file="$sd/munge/munge.key" \
        --pid-file="$sd/munge/munged.pid" --seed-file="$sd/munge/seed" \
        --log-file="$sd/log/munged.log" 9>&- || die "$E_FAIL" "munged did not start (see $sd/log/munged.log)"
    # slurmctld recognises itself by its host name: give it one in a UTS namespace of its
    # own (the machine's stays as it is). It forks into the background and stays there.
    # shellcheck disable=SC2016 # $1 and $2 are expanded by the inner shell
    unshare --uts sh -c 'echo "$1" >/proc/sys/kernel/hostname && exec slurmctld -f "$2"' \
        sh "$NAME-ctl" "$sd/slurm.conf" 9>&- ||
        die "$E_FAIL" "slurmctld did not start (see $sd/log/slurmctld.log)"
    for ((i = 0; i < NODES; i++)); do
        ns=$(node_ns "$i")
        mkdir -p "$sd/spool/$ns/tmp"
        enter_node "$ns"
        "${ENTER[@]}" slurmd -f "$sd/slurm.conf" -N "$ns" 9>&- ||
            die "$E_FAIL" "slurmd did not start on $ns (see $sd/log/slurmd-$ns.log)"
    done
    local t idle
    for ((t = 0; t < 300; t++)); do
        idle=$(SLURM_CONF=$sd/slurm.conf sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)
        [ "$idle" -lt "$NODES" ] || break
        sleep 0.1
    done
    [ "$idle" -ge "$NODES" ] ||
        die "$E_FAIL" "--slurm: $idle of $NODES nodes idle after 30 s (see $sd/log/)"
    echo "export SLURM_CONF=$sd/slurm.conf" >>"$DIR/env"
}

# slurm_pids SDIR: the pids of the daemons of the Slurm in SDIR, nodes first: those of
# the pid files that still name a process started with a file of SDIR on its command
# line (a pid file outlives its process, and the pid may be someone else's by now).
slurm_pids() {
    local sd=$1 f pid
    for f in "$sd"/spool/*.pid "$sd/ctld/slurmctld.pid" "$sd/munge/munged.pid"; do
        [ -f "$f" ] || continue
        read -r pid <"$f" 2>/dev/null || continue
        [[ $pid =~ ^[0-9]+$ ]] || continue
        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$sd/" && echo "$pid"
    done
}

# slurm_stop DIR: stop the Slurm of the cluster whose state directory is DIR, if any:
# TERM, then KILL after 5 s. What the jobs left inside the nodes goes with the nodes'
# other processes (lifecycle.sh, kill_ns_processes).
slurm_stop() {
    local sd=$1/slurm pids try
    [ -d "$sd" ] || return 0
    pids=$(slurm_pids "$sd")
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086 # one pid per word
    kill -TERM $pids 2>/dev/null || true
    for ((try = 0; try < 50; try++)); do
        pids=$(slurm_pids "$sd")
        [ -n "$pids" ] || return 0
        sleep 0.1
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
}

# slurm_healthy: the daemons of the loaded cluster run (one munged, one slurmctld, a
# slurmd per node).
slurm_healthy() { [ "$(slurm_pids "$DIR/slurm" | wc -l)" = $((NODES + 2)) ]; }

# run_slurm CMD ARGS...: run Slurm's client CMD (srun, sbatch) against the loaded cluster.
run_slurm() {
    [ "$SLURM" = 1 ] || die "$E_USAGE" "cluster $NAME runs no Slurm: bring it up with --slurm"
    command -v "$1" >/dev/null || die "$E_PREREQ" "no $1 on PATH (Debian package slurm-client)"
    SLURM_CONF=$DIR/slurm/slurm.conf exec "$@"
}
