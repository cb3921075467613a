# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# plots.sh - one PNG per scenario and benchmark (OUT/SCENARIO-BENCH.png): A's and B's
# medians against the message size, with the raw-frame floor where there is one.
#
# Owns: the PNGs; make_plots, plot.
# Expects: results.sh (sval, floor_med, best_pp); out (summary.csv, floor.csv and the
# .scenario files), work (scratch), sc_names, la, lb, reps; gnuplot.
# The globals named under "Expects" are assigned by the other parts:
# shellcheck disable=SC2154

make_plots() {
    local sc b
    for sc in "${sc_names[@]}"; do
        awk -F, -v s="$sc" 'NR > 1 && $1 == s && !seen[$2]++ {print $2}' "$out/summary.csv" >"$work/benches"
        while read -r b; do plot "$sc" "$b"; done <"$work/benches"
    done
}

plot() { # scenario bench
    local sc=$1 b=$2 dat unit xl ylog yl extra conf xtics v m
    dat=$work/$sc-$b.dat
    awk -F, -v s="$sc" -v b="$b" 'NR > 1 && $1 == s && $2 == b && $3 > 0 && $5 != "" && $6 != "" {print $3, $5, $6}' \
        "$out/summary.csv" >"$dat"
    [ -s "$dat" ] || return 0
    unit=$(sval "$sc" "$b" "$(head -n1 "$dat" | cut -d' ' -f1)" unit)
    xl="message size (bytes)"
    case $b in halo* | wavefront) xl="local edge (points per dimension)" ;; isort) xl="keys per rank" ;; transpose) xl="rows per rank" ;; esac
    ylog="set logscale y"
    yl="$unit (lower is better)"
    case $unit in MB/s | Mmsg/s) ylog="unset logscale y"; yl="$unit (higher is better)" ;; esac
    extra=''
    case $b in
    pingpong)
        read -r v m < <(best_pp "$sc") || true
        [ -z "${v:-}" ] || extra=", $v with lines dt 2 lc rgb '#555555' title 'raw frames, 8 B, $m ($v us)'"
        ;;
    bw)
        v=$(floor_med "$sc" raw-bw || true)
        [ -z "$v" ] || extra=", $v with lines dt 2 lc rgb '#555555' title 'raw frame stream ($v MB/s)'"
        ;;
    esac
    conf=$(cat "$out/$sc.scenario")
    xtics=$(awk 'function h(n) {return n >= 1048576 ? n / 1048576 "M" : n >= 1024 ? n / 1024 "K" : n}
        {s[++n] = $1} END {step = n > 12 ? 2 : 1; for (i = 1; i <= n; i += step) t = t (t == "" ? "" : ", ") "\"" h(s[i]) "\" " s[i]; print t}' "$dat")
    gnuplot <<EOF
set terminal pngcairo size 1000,560 font "DejaVu Sans,10" noenhanced
set output "$out/$sc-$b.png"
set title "$b, scenario $sc: ${conf%% iface=*}$(grep -o ' A_env=[^ ]*' <<<"$conf" | sed "s/ A_env=/, $la with /")\n$la vs $lb (Debian MPICH ch4:ucx, UCX_TLS=tcp,self), medians of $reps runs"
set xlabel "$xl"
set ylabel "$yl"
set logscale x 2
$ylog
set grid
set key outside right top vertical Left reverse
set xtics ($xtics)
plot "$dat" using 1:2 with linespoints pt 7 lc rgb '#c0392b' title "$la", \
     "$dat" using 1:3 with linespoints pt 5 lc rgb '#2e86c1' title "$lb"$extra
EOF
}
