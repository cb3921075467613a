# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# kmod-bench.sh - maint/kmod-bench's tables, sourced, apart from the measuring so that
# a test can feed them made-up measurements.
#
#   kmod_table     both tables: the kernel device against the ring device and TCP,
#                  then the CPU time per GB of a 4 MiB stream by device
#
# Expects: vals, an associative array of lists over runs ("KEY" -> " v1 v2 ...", a
# failed measurement kept as "-"; keys pp_D_M for D kernel, ring, tcp and M spin,
# block; bw_D for D kernel, ring; cpu_D for D kernel, kcopy, ring, tcp); runs; median
# (maint/lib/stats.sh).
# The globals named under "Expects" are the caller's:
# shellcheck disable=SC2154

# kmod_ratio KEY_A KEY_B: A over B run by run (runs where either failed left out), the
# median of those to 2 decimals; "-" when there is none (it used to print "0.00-":
# printf's output for the "-" and then the echo after its failure).
kmod_ratio() {
    local -a a b
    read -ra a <<<"${vals[$1]:-}"
    read -ra b <<<"${vals[$2]:-}"
    local i out="" m
    for i in "${!a[@]}"; do
        [[ ${a[$i]} == - || ${b[$i]:--} == - ]] && continue
        out+=" $(echo "${a[$i]} / ${b[$i]}" | bc -l)"
    done
    m=$(median "$out")
    if [ "$m" = - ]; then echo -; else printf '%.2f' "$m"; fi
}
# kmod_fmt KEY: the median of KEY to 4 significant digits, "-" when there is none
kmod_fmt() { local m; m=$(median "${vals[$1]:-}"); [ "$m" = - ] && echo - || printf '%.4g' "$m"; }
# kmod_row LABEL KEY_KERNEL KEY_RING [KEY_TCP]: a row of the first table
kmod_row() {
    printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$(kmod_fmt "$2")" "$(kmod_fmt "$3")" \
        "${4:+$(kmod_fmt "$4")}" "$(kmod_ratio "$2" "$3")" "${4:+$(kmod_ratio "$2" "$4")}"
}

kmod_table() {
    echo "kmod-bench: $runs runs in a TCG guest, veth MTU 9000 (ratios only mean anything)"
    echo
    echo "| measure | kernel | ring | TCP | kernel/ring | kernel/TCP |"
    echo "|---|---|---|---|---|---|"
    kmod_row "8 B half round trip, spin (us)" pp_kernel_spin pp_ring_spin pp_tcp_spin
    kmod_row "8 B half round trip, block (us)" pp_kernel_block pp_ring_block pp_tcp_block
    kmod_row "1 MiB stream (MB/s)" bw_kernel bw_ring
    kmod_row "CPU s per GB, 4 MiB stream" cpu_kernel cpu_ring cpu_tcp
    echo
    echo "| CPU s per GB, 4 MiB stream | kernel, zero copy | kernel, copying | ring | TCP | zero copy/copying | zero copy/TCP |"
    echo "|---|---|---|---|---|---|---|"
    printf '| both processes | %s | %s | %s | %s | %s | %s |\n' "$(kmod_fmt cpu_kernel)" \
        "$(kmod_fmt cpu_kcopy)" "$(kmod_fmt cpu_ring)" "$(kmod_fmt cpu_tcp)" \
        "$(kmod_ratio cpu_kernel cpu_kcopy)" "$(kmod_ratio cpu_kernel cpu_tcp)"
}
