# SPDX-License-Identifier: BSD-3-Clause
# deps.sh - the Debian packages PME's build, tests and demos need, installed on demand.
# Sourced by maint scripts:  . maint/deps.sh; pme_deps build test
#
# Groups: build (pme_core and tools), test (sanitizers, valgrind, namespaces, loss, and
# the BPF fault injector and mesh forwarder: clang, libbpf, bpftool),
# mpich (building MPICH 4.0.2 with ch4:pme, and Debian's mpich as the baseline),
# kmod (the kernel module and its qemu test), bench (plots).

pme_deps_packages() {
    local g pkgs=()
    for g in "$@"; do
        case $g in
        build) pkgs+=(build-essential autoconf automake libtool pkg-config libpcap-dev libhwloc-dev libssl-dev) ;;
        test) pkgs+=(valgrind iproute2 nftables util-linux libcap2-bin iputils-ping procps tcpdump clang libclang-rt-14-dev libfuzzer-14-dev libbpf-dev bpftool) ;;
        mpich) pkgs+=(gfortran dpkg-dev ccache mpich libmpich-dev hwloc python3 file) ;;
        kmod) pkgs+=(linux-headers-amd64 linux-image-amd64 qemu-system-x86 busybox-static cpio dkms linux-source) ;;
        bench) pkgs+=(gnuplot-nox) ;;
        *) echo "pme_deps: unknown group $g" >&2; return 2 ;;
        esac
    done
    printf '%s\n' "${pkgs[@]}"
}

# Install what is missing (as root; apt-get only).
pme_deps() {
    local missing=() p
    for p in $(pme_deps_packages "$@"); do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "missing packages: ${missing[*]} (run as root, or apt-get install them)" >&2
        return 1
    fi
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || true
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}
