# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# base.sh - what every part of vcluster leans on: the exit codes, messages, the
# limits, cluster names and the tools a cluster needs.
#
# Owns: PROG, E_* (exit codes), MAX_NODES, MAX_RAILS, die, warn, usage_error, now_ms,
# need_root, apt_install, ensure_tools, ensure_base_tools, check_name.
# Expects: nothing; sourced first.

PROG=${0##*/}
# shellcheck disable=SC2034 # the other parts check against them
readonly MAX_NODES=250 MAX_RAILS=8
# Exit codes: see doc/vcluster.md.
# shellcheck disable=SC2034 # used by the other parts
readonly E_FAIL=1 E_USAGE=2 E_PREREQ=3 E_NOCLUSTER=4

die() { local code=$1; shift; printf '%s: %s\n' "$PROG" "$*" >&2; exit "$code"; }
warn() { printf '%s: %s\n' "$PROG" "$*" >&2; }
usage_error() { printf '%s: %s\n' "$PROG" "$*" >&2; printf "Try '%s help'.\n" "$PROG" >&2; exit "$E_USAGE"; }
now_ms() { local t; t=$(date +%s%N); echo $((t / 1000000)); }

need_root() {
    [ "$(id -u)" = 0 ] || die "$E_PREREQ" "must run as root (namespaces, veth, bridges and nftables need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
}

# apt_install PKG...: install Debian packages non-interactively. Waits for a dpkg lock
# held by a concurrent apt-get rather than failing, and refreshes the package lists only
# when the first attempt fails (a fresh CI machine has none).
apt_install() {
    command -v apt-get >/dev/null || die "$E_PREREQ" "missing $*, and no apt-get to install it with"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300)
    warn "installing $* with apt-get"
    "${apt[@]}" install --no-install-recommends "$@" >/dev/null 2>&1 && return 0
    "${apt[@]}" update >/dev/null 2>&1 || true
    "${apt[@]}" install --no-install-recommends "$@" >/dev/null || die "$E_PREREQ" "apt-get install $* failed"
}

# ensure_tools CMD:PACKAGE...: install the package of every missing command.
ensure_tools() {
    local spec pkgs=()
    for spec in "$@"; do
        command -v "${spec%%:*}" >/dev/null || pkgs+=("${spec#*:}")
    done
    [ ${#pkgs[@]} -eq 0 ] && return 0
    # shellcheck disable=SC2046 # deliberate word splitting of the de-duplicated list
    apt_install $(printf '%s\n' "${pkgs[@]}" | sort -u)
}

ensure_base_tools() {
    ensure_tools ip:iproute2 tc:iproute2 nft:nftables nsenter:util-linux \
        unshare:util-linux flock:util-linux mountpoint:util-linux
}

# check_name NAME: the cluster name goes into every host-namespace interface name, which
# the kernel limits to 15 characters ("NAME-mgmt", "NAME-m249"), hence at most 8
# characters, and into hostnames, hence lower-case letters and digits only (no '_': Open
# MPI's orted rejects it; no '-': it separates the name from the node part).
check_name() {
    [[ $1 =~ ^[a-z][a-z0-9]{0,7}$ ]] ||
        usage_error "bad cluster name '$1': 1 to 8 lower-case letters and digits, starting with a letter"
}
