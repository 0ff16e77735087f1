#!/bin/bash
# Draws the curves of a size sweep: one PNG with three panels (latency,
# message rate, bandwidth against message size, log scales).
#
#   contrib/bench/plot_curves.sh CSV PNG TITLE
#
# CSV: a header line, then "impl,series,size,latency_usec,msg_per_sec,
# mib_per_sec" rows; every (impl, series) pair is one curve labelled
# "impl series". A series named *_lat goes to the latency panel only, one
# named *_bw to the rate and bandwidth panels only; any other series (a
# floor such as sockperf or memcpy) to every panel it has figures for
# (empty fields are no figure). Used by perf_compare.sh -S and
# rc_vs_perftest.sh -S; needs gnuplot.
set -u -o pipefail

prog=plot_curves
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -eq 3 ] || die "usage: plot_curves.sh CSV PNG TITLE"
csv=$1
png=$2
title=$3
[ -r "$csv" ] || die "cannot read $csv"
require_installed gnuplot

data=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") || die "no temporary directory"
trap 'rm -rf "$data"' EXIT

# plot_item FILE COLUMN LABEL: one curve of a gnuplot plot command
plot_item() {
    printf "'%s' using 1:%s with linespoints title '%s'" "$1" "$2" "$3"
}

plots_lat=""
plots_rate=""
plots_bw=""
n=0
while IFS=, read -r impl series; do
    n=$((n + 1))
    f=$data/$n.dat
    # size latency rate bandwidth, NaN for an empty field
    awk -F, -v i="$impl" -v s="$series" 'NR > 1 && $1 == i && $2 == s {
        print $3, ($4 == "" ? "NaN" : $4), ($5 == "" ? "NaN" : $5),
              ($6 == "" ? "NaN" : $6) }' "$csv" | sort -n >"$f"
    [ -s "$f" ] || continue
    label="$impl $series"
    has() {
        awk -v c="$1" '$c != "NaN" { f = 1 } END { exit !f }' "$f"
    }
    case $series in
    *_lat)
        plots_lat+="${plots_lat:+, }$(plot_item "$f" 2 "$label")" ;;
    *_bw)
        plots_rate+="${plots_rate:+, }$(plot_item "$f" 3 "$label")"
        plots_bw+="${plots_bw:+, }$(plot_item "$f" 4 "$label")" ;;
    *)
        has 2 && plots_lat+="${plots_lat:+, }$(plot_item "$f" 2 "$label")"
        has 3 && plots_rate+="${plots_rate:+, }$(plot_item "$f" 3 "$label")"
        has 4 && plots_bw+="${plots_bw:+, }$(plot_item "$f" 4 "$label")" ;;
    esac
done < <(tail -n +2 "$csv" | cut -d, -f1,2 | awk '!seen[$0]++')

[ -n "$plots_lat$plots_rate$plots_bw" ] || die "no figures in $csv"
# an empty panel gets a note instead of a failed plot command
[ -n "$plots_lat" ] || plots_lat="NaN title 'no latency figures'"
[ -n "$plots_rate" ] || plots_rate="NaN title 'no rate figures'"
[ -n "$plots_bw" ] || plots_bw="NaN title 'no bandwidth figures'"

gnuplot <<GP || die "gnuplot failed to draw $png"
set terminal pngcairo size 1800,560 font ",10" noenhanced
set output '$png'
set multiplot layout 1,3 title "$title"
set logscale x 2
set logscale y 10
set xtics ("8" 8, "32" 32, "128" 128, "512" 512, "2K" 2048, "8K" 8192, \
           "32K" 32768, "128K" 131072, "512K" 524288, "2M" 2097152, \
           "4M" 4194304)
set xlabel "message size [bytes]"
set key top left font ",8"
set grid
set format y "%g"
set title "latency (p50; ping-pong: half a round trip)"
set ylabel "usec"
plot $plots_lat
set title "message rate"
set ylabel "messages/s"
plot $plots_rate
set title "bandwidth"
set ylabel "MiB/s"
plot $plots_bw
unset multiplot
GP
note "wrote $png"
