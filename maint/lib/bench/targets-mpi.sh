# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# targets-mpi.sh - MPI over PME's targets against the baseline over the whole range it
# measured, the rows of the report's "Targets (issue 17)" table (the issue that set
# them): large messages, all-to-all, latency at every size, small messages, one-sided
# put and get at every size, and waiting (PME's default against PME polling, each in
# the same run). A row shows only when the run measured what it needs; "no data" when
# it measured one side only.
#
# Owns: mpi_target_rows and its parts (mpi_t_p2p, mpi_t_alltoall, mpi_t_rma, mpi_t_wait,
# mpi_t_oversub), mpi_t_worst.
# Expects: targets.sh (verdict, ratio, fmt, latency8_rows), results.sh (sval,
# has_scenario); summary.csv and floor.csv in out; la, lb.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

mpi_target_rows() {
    local sc
    for sc in mtu9000 mtu1500 quick custom; do
        ! has_scenario "$sc" || mpi_t_p2p "$sc"
    done
    for sc in nodes4 quick custom; do
        ! has_scenario "$sc" || mpi_t_alltoall "$sc"
    done
    for sc in rma custom; do
        ! has_scenario "$sc" || mpi_t_rma "$sc"
    done
    if has_scenario nodes2 && has_scenario nodes2spin; then mpi_t_wait; fi
    if has_scenario nodes4 && has_scenario nodes4spin; then mpi_t_oversub; fi
}

# mpi_t_have SCENARIO BENCH SIZE: the summary has a row for it (on either side).
mpi_t_have() { [ -n "$(sval "$1" "$2" "$3" unit)" ]; }

# mpi_t_worst SCENARIO BENCH: "RATIO SIZE COUNT", the worst A/B ratio over every size
# the benchmark measured on both sides (the largest for a latency in us, the smallest
# for a bandwidth or rate), its size and the count of sizes; nothing without one.
mpi_t_worst() {
    awk -F, -v s="$1" -v b="$2" 'NR > 1 && $1 == s && $2 == b && $7 != "" {
            lo = $4 == "us"
            if (w == "" || (lo ? $7 + 0 > w + 0 : $7 + 0 < w + 0)) {w = $7; z = $3}; n++}
        END {if (n) print w, z, n}' "$out/summary.csv"
}

# mpi_t_p2p SCENARIO: bandwidth and bidirectional bandwidth at 1 and 4 MiB, the ping-pong
# at its worst size, the 8-byte latency against the baseline and the raw-frame floor,
# and the message rate at 8 bytes.
mpi_t_p2p() {
    local sc=$1 b v a c r f worst
    for b in bw bibw; do
        for v in 1048576 4194304; do
            mpi_t_have "$sc" "$b" "$v" || continue
            a=$(sval "$sc" "$b" "$v" a) c=$(sval "$sc" "$b" "$v" b)
            r=$(ratio "$a" "$c")
            echo "| $((v >> 20)) MiB $b vs $lb, $sc | $(fmt "$a") MB/s vs $(fmt "$c") MB/s | $r | >= 1.2 | $(verdict "$r" ">=" 1.2) |"
        done
    done
    # The worst ratio over every size the ping-pong measured, both sides present.
    worst=$(mpi_t_worst "$sc" pingpong)
    if [ -n "$worst" ]; then
        read -r r v f <<<"$worst"
        r=$(ratio "$r" 1)
        echo "| ping-pong never slower than $lb (worst of $f sizes: $v B), $sc | $la/$lb $r | $r | <= 1.0 | $(verdict "$r" "<=" 1.0) |"
    fi
    ! mpi_t_have "$sc" pingpong 8 || latency8_rows "$sc"
    if mpi_t_have "$sc" msgrate 8; then
        a=$(sval "$sc" msgrate 8 a) c=$(sval "$sc" msgrate 8 b)
        r=$(ratio "$a" "$c")
        echo "| 8 B message rate vs $lb, $sc | $(fmt "$a") vs $(fmt "$c") Mmsg/s | $r | >= 2 | $(verdict "$r" ">=" 2) |"
    fi
}

# mpi_t_alltoall SCENARIO: an all-to-all of 1 MiB blocks, as a speed-up over the baseline.
mpi_t_alltoall() {
    local sc=$1 a c r
    mpi_t_have "$sc" alltoall 1048576 || return 0
    a=$(sval "$sc" alltoall 1048576 a) c=$(sval "$sc" alltoall 1048576 b)
    r=$(ratio "$c" "$a")
    echo "| all-to-all of 1 MiB blocks: speed-up over $lb, $sc | $(fmt "$a") us vs $(fmt "$c") us | $r | >= 1.2 | $(verdict "$r" ">=" 1.2) |"
}

# mpi_t_rma SCENARIO: one-sided put and get, latency (an operation and a flush) and
# bandwidth (a window of operations and a flush), at their worst size: at least as fast
# as the baseline at every size.
mpi_t_rma() {
    local sc=$1 b what worst r v f
    for b in put get putbw getbw; do
        worst=$(mpi_t_worst "$sc" "$b")
        [ -n "$worst" ] || continue
        read -r r v f <<<"$worst"
        r=$(ratio "$r" 1)
        case $b in
        *bw) what="${b%bw} bandwidth never below $lb" ;;
        *) what="$b latency never slower than $lb" ;;
        esac
        if [ "${b%bw}" = "$b" ]; then
            echo "| $what (worst of $f sizes: $v B), $sc | $la/$lb $r | $r | <= 1.0 | $(verdict "$r" "<=" 1.0) |"
        else
            echo "| $what (worst of $f sizes: $v B), $sc | $la/$lb $r | $r | >= 1.0 | $(verdict "$r" ">=" 1.0) |"
        fi
    done
}

# mpi_t_wait: each rank with a core of its own (nodes2), PME's default waiting against
# PME polling (nodes2spin, PME_WAIT=spin): the default may cost at most 10%.
mpi_t_wait() {
    local b v a s r
    while read -r b v; do
        a=$(sval nodes2 "$b" "$v" a) s=$(sval nodes2spin "$b" "$v" a)
        r=$(ratio "$a" "$s")
        echo "| $b at $v: default waiting vs polling (PME_WAIT=spin), a core per rank | $(fmt "$a") us vs $(fmt "$s") us | $r | <= 1.1 | $(verdict "$r" "<=" 1.1) |"
    done < <(awk -F, 'NR > 1 && $1 == "nodes2" && $5 != "" {print $2, $3}' "$out/summary.csv")
}

# mpi_t_oversub: 4 ranks on fewer cores, the default must still sleep: it must beat PME
# polling (nodes4spin) on the application kernels both measured.
mpi_t_oversub() {
    local b v a s r
    while read -r b v; do
        s=$(sval nodes4spin "$b" "$v" a)
        [ -n "$s" ] || continue
        a=$(sval nodes4 "$b" "$v" a)
        r=$(ratio "$a" "$s")
        echo "| $b at $v: default waiting vs polling, oversubscribed (nodes4) | $(fmt "$a") us vs $(fmt "$s") us | $r | < 1 | $(verdict "$r" "<" 1) |"
    done < <(awk -F, 'NR > 1 && $1 == "nodes4" && $2 == "isort" && $5 != "" {print $2, $3}' "$out/summary.csv")
}
