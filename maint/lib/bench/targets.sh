# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# targets.sh - the rows of the report's "Targets (issue 5)" table: each target PME set
# itself, what was measured, the ratio, the goal and whether it was met. A target shows
# only when the run has the scenario that measures it.
#
# Owns: target_rows and its parts (targets_link, targets_mtu65535, targets_rate,
# targets_apps, targets_control, latency8_rows); verdict, ratio, fmt.
# Expects: results.sh (sval, floor_med, best_pp, has_scenario); summary.csv and
# floor.csv in out; la, lb.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

# verdict RATIO OP GOAL: "met", "**missed**" or "no data"
verdict() { awk -v r="$1" -v op="$2" -v t="$3" 'BEGIN {if (r == "") {print "no data"; exit}
    ok = (op == "<=") ? r <= t : (op == "<") ? r < t : (op == ">") ? r > t : r >= t; print ok ? "met" : "**missed**"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || b + 0 == 0) print ""; else printf "%.3g", a / b}'; }
fmt() { awk -v a="$1" 'BEGIN {if (a == "") print "-"; else printf "%.4g", a}'; }

target_rows() {
    local sc=''
    if has_scenario mtu9000; then sc=mtu9000; elif has_scenario quick; then sc=quick; fi
    [ -z "$sc" ] || targets_link "$sc"
    ! has_scenario mtu65535 || targets_mtu65535
    for sc in rate1g rate10g; do
        ! has_scenario "$sc" || targets_rate "$sc"
    done
    for sc in nodes4 quick custom; do
        ! has_scenario "$sc" || targets_apps "$sc"
    done
    ! has_scenario nodes4spin || targets_control
}

# targets_link SCENARIO: 8 B latency and 1 MiB bandwidth against the baseline and
# against raw frames on the same link.
targets_link() {
    local sc=$1 a b r f v m
    latency8_rows "$sc"
    a=$(sval "$sc" pingpong 8 a)
    # On a loaded machine a spinning process loses its core and blocking is faster:
    # then the raw floor that this machine gave at the time is the blocking one.
    read -r v m < <(best_pp "$sc") || true
    if [ "${m:-}" = block ]; then
        r=$(ratio "$a" "$v")
        echo "| 8 B latency vs raw frames (block: faster than spin in this run, the machine was loaded), $sc | $(fmt "$a") us vs $(fmt "$v") us | $r | <= 1.25 | $(verdict "$r" "<=" 1.25) |"
    fi
    a=$(sval "$sc" bw 1048576 a) b=$(sval "$sc" bw 1048576 b)
    f=$(floor_med "$sc" raw-bw || true)
    r=$(ratio "$a" "$f")
    echo "| 1 MiB bandwidth vs raw frame stream, $sc | $(fmt "$a") MB/s vs $(fmt "$f") MB/s | $r | >= 0.9 | $(verdict "$r" ">=" 0.9) |"
    r=$(ratio "$a" "$b")
    echo "| 1 MiB bandwidth vs $lb, $sc | $(fmt "$a") MB/s vs $(fmt "$b") MB/s | $r | >= 1.0 | $(verdict "$r" ">=" 1.0) |"
    targets_core "$sc"
}

# targets_core SCENARIO: MPI over PME against pme_core's own stream on the same link
# (issue 34: what is lost between pme_core and MPI), at 1 and 4 MiB.
targets_core() {
    local sc=$1 v a f r
    for v in 1m 4m; do
        a=$(sval "$sc" bw "$(numfmt --from=iec "${v^^}")" a)
        f=$(floor_med "$sc" "pme-bw-$v" || true)
        [ -n "$f" ] || continue
        r=$(ratio "$a" "$f")
        echo "| ${v%m} MiB bandwidth vs pme_core's own stream, $sc | $(fmt "$a") MB/s vs $(fmt "$f") MB/s | $r | >= 0.9 | $(verdict "$r" ">=" 0.9) |"
    done
}

# latency8_rows SCENARIO: the 8 B latency against the baseline (goal 0.5) and against
# the raw-frame floor polling (goal 1.25); issue 5 and issue 17 set the same goals.
latency8_rows() {
    local sc=$1 a b r f
    a=$(sval "$sc" pingpong 8 a) b=$(sval "$sc" pingpong 8 b)
    r=$(ratio "$a" "$b")
    echo "| 8 B latency vs $lb, $sc | $(fmt "$a") us vs $(fmt "$b") us | $r | <= 0.5 | $(verdict "$r" "<=" 0.5) |"
    f=$(floor_med "$sc" raw-pp-spin || true)
    r=$(ratio "$a" "$f")
    echo "| 8 B latency vs raw frames (spin), $sc | $(fmt "$a") us vs $(fmt "$f") us | $r | <= 1.25 | $(verdict "$r" "<=" 1.25) |"
}

targets_mtu65535() {
    local a b r
    a=$(sval mtu65535 bw 1048576 a) b=$(sval mtu65535 bw 1048576 b)
    r=$(ratio "$a" "$b")
    echo "| 1 MiB bandwidth vs $lb, MTU 65535 | $(fmt "$a") MB/s vs $(fmt "$b") MB/s | $r | >= 1.0 | $(verdict "$r" ">=" 1.0) |"
}

# targets_rate SCENARIO: on a shaped link (rate1g, rate10g), line rate at 1 and 4 MiB
# and CPU per byte against the baseline.
targets_rate() {
    local sc=$1 lim f v a b r
    lim=$(awk -v s="$sc" 'BEGIN {print (s == "rate1g") ? 125 : 1250}')
    f=$(floor_med "$sc" raw-bw || true)
    for v in 1048576 4194304; do
        a=$(sval "$sc" bw "$v" a) b=$(sval "$sc" bw "$v" b)
        r=$(ratio "$a" "$lim")
        echo "| $((v >> 20)) MiB bandwidth vs line rate, $sc | $(fmt "$a") MB/s vs $lim MB/s ($lb $(fmt "$b") MB/s, raw frame stream $(fmt "$f") MB/s) | $r | >= 0.95 | $(verdict "$r" ">=" 0.95) |"
        a=$(sval "$sc" bw "$v" a_cpu_s_per_gb) b=$(sval "$sc" bw "$v" b_cpu_s_per_gb)
        r=$(ratio "$a" "$b")
        echo "| $((v >> 20)) MiB CPU per byte vs $lb, $sc | $(fmt "$a") vs $(fmt "$b") CPU s/GB | $r | < 1 | $(verdict "$r" "<" 1) |"
    done
}

# targets_apps SCENARIO: the application kernels never slower than the baseline at any
# size; faster at their smallest (latency-bound) size; sort and transpose, which move
# large blocks all-to-all, faster by a fifth at every size (issue 34).
targets_apps() {
    local sc=$1 b rb v best first fs r
    for b in halo2d halo3d isort wavefront transpose; do
        rb=$(awk -F, -v s="$sc" -v b="$b" 'NR > 1 && $1 == s && $2 == b && $7 != "" {if (max == "" || $7 + 0 > max + 0) max = $7; if (first == "") {first = $7; fs = $3}}
            END {if (max != "") print max, first, fs}' "$out/summary.csv")
        [ -n "$rb" ] || continue
        read -r v first fs <<<"$rb"
        echo "| $b never slower than $lb (worst size), $sc | $la/$lb $v | $v | <= 1.0 | $(verdict "$v" "<=" 1.0) |"
        case $b in
        isort | transpose)
            best=$(awk -v v="$v" 'BEGIN {printf "%.3g", 1 / v}')
            echo "| $b faster than $lb at every size (worst size), $sc | $lb/$la $best | $best | >= 1.2 | $(verdict "$best" ">=" 1.2) |"
            ;;
        esac
        [ "$b" != transpose ] || continue
        r=$(awk -v f="$first" 'BEGIN {printf "%.3g", 1 / f}')
        echo "| $b at $fs (smallest, latency-bound): speed-up over $lb, $sc | $lb/$la $r | $r | >= 1.5 | $(verdict "$r" ">=" 1.5) |"
    done
}

# targets_control: nodes4spin, PME polling as UCX does (no goal: a control).
targets_control() {
    local b rb fs first r
    for b in halo2d halo3d isort wavefront; do
        rb=$(awk -F, -v b="$b" 'NR > 1 && $1 == "nodes4spin" && $2 == b && $7 != "" {print $3, $7; exit}' "$out/summary.csv")
        [ -n "$rb" ] || continue
        read -r fs first <<<"$rb"
        r=$(awk -v f="$first" 'BEGIN {printf "%.3g", 1 / f}')
        echo "| (control) $b at $fs with PME polling as UCX does (PME_WAIT=spin), nodes4spin | $lb/$la $r | $r | - | - |"
    done
}
