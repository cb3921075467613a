# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# options.sh - maint/bench's command line: the settings, their defaults, and their checks
# (the options themselves are documented at the top of maint/bench, which --help prints).
#
# Owns: the settings as globals: mode (quick|full|custom), topology, nodes, ppn, mtu,
# rate, loss, bench, sizes, reps, time_s, out, pme_prefix, baseline_only, raw, plots,
# timeout_s, grace, keep, report_only, pme_env, tcp_env; die, bad, say;
# parse_options, check_options.
# Expects: usage (maint/bench) for --help. Nothing here touches the system.

# shellcheck disable=SC2034 # the settings are read by the other parts
{
    mode=custom topology=switch nodes=2 ppn=1 mtu=9000 rate='' loss='' bench=pingpong,bw sizes=''
    reps='' time_s='' out='' pme_prefix='' baseline_only=0 raw=1 plots=1 timeout_s='' grace=10
    keep=0 report_only=''
    pme_env=() tcp_env=()
}

die() { echo "bench: error: $*" >&2; exit 1; }
bad() { echo "bench: $*" >&2; exit 2; }
say() { echo "bench: $*" >&2; }

# parse_options ARGS...: the settings from the command line ("--opt=value" or "--opt
# value"), or exit 2 on an unknown option or a missing value.
# shellcheck disable=SC2034 # the settings are read by the other parts
parse_options() {
    local opt v
    while [ $# -gt 0 ]; do
        opt=$1
        case $opt in
        --*=*) set -- "${opt%%=*}" "${opt#*=}" "${@:2}"; continue ;;
        esac
        case $opt in
        --quick) mode=quick; shift ;;
        --full) mode=full; shift ;;
        --baseline-only) baseline_only=1; shift ;;
        --no-raw) raw=0; shift ;;
        --no-plots) plots=0; shift ;;
        --keep) keep=1; shift ;;
        -h | --help) usage; exit 0 ;;
        --topology | --nodes | --ppn | --mtu | --rate | --loss | --bench | --sizes | --reps | \
            --time | --out | --pme-prefix | --pme-env | --tcp-env | --timeout | --grace | --report-only)
            [ $# -ge 2 ] || bad "$opt needs a value"
            v=$2
            shift 2
            case $opt in
            --topology) topology=$v ;;
            --nodes) nodes=$v ;;
            --ppn) ppn=$v ;;
            --mtu) mtu=$v ;;
            --rate) rate=$v ;;
            --loss) loss=$v ;;
            --bench) bench=$v ;;
            --sizes) sizes=$v ;;
            --reps) reps=$v ;;
            --time) time_s=$v ;;
            --out) out=$v ;;
            --pme-prefix) pme_prefix=$v ;;
            --pme-env) pme_env+=("$v") ;;
            --tcp-env) tcp_env+=("$v") ;;
            --timeout) timeout_s=$v ;;
            --grace) grace=$v ;;
            --report-only) report_only=$v ;;
            esac
            ;;
        *) bad "unknown option $opt (see --help)" ;;
        esac
    done
}

# check_options: exit 2 with the reason when a setting is not usable.
check_options() {
    local v e
    for v in nodes ppn mtu grace; do
        [[ ${!v} =~ ^[0-9]+$ ]] || bad "--$v wants a number, not '${!v}'"
    done
    [ "$nodes" -ge 2 ] || bad "--nodes: at least 2"
    [ "$ppn" -ge 1 ] || bad "--ppn: at least 1"
    [ -z "$reps" ] || [[ $reps =~ ^[1-9][0-9]*$ ]] || bad "--reps wants a positive number"
    [ -z "$timeout_s" ] || [[ $timeout_s =~ ^[1-9][0-9]*$ ]] || bad "--timeout wants seconds"
    [ -z "$time_s" ] || [[ $time_s =~ ^[0-9]*\.?[0-9]+$ ]] || bad "--time wants seconds"
    for e in "${pme_env[@]}" "${tcp_env[@]}"; do
        [[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bad "--pme-env/--tcp-env want VAR=VALUE, not '$e'"
    done
}
