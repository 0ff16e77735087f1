#!/bin/bash
#
# The verbs baseline: perftest's ib_send_lat, ib_write_lat and ib_write_bw
# over the kernel Soft-RoCE driver (rxe_lo, GID index 1), server and client
# inside the test VM of test/rxe (booted once for all three tools). Prints
# a table and saves it as CSV for the verbs transports' benchmarks to
# compare against.
#
# usage: contrib/bench/verbs-baseline.sh [-o FILE] [-n ITERS] [-b BW_ITERS]
#                                        [-s SIZE] [-S BW_SIZE] [-k]
#
#   -o FILE     CSV output (default $OPENUCT_RXE_CACHE/verbs-baseline.csv,
#               i.e. ~/.cache/openuct-rxe/verbs-baseline.csv)
#   -n ITERS    latency iterations (default 2000)
#   -b ITERS    bandwidth iterations (default 2000)
#   -s SIZE     latency message size in bytes (default 8)
#   -S SIZE     bandwidth message size in bytes (default 65536)
#   -k          keep the tools' raw output (printed after the table)
#
# Exit status: 0 with the table; 1 when a tool failed; 77 when the VM
# could not start.

set -u -o pipefail

prog=verbs-baseline
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cache=${OPENUCT_RXE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/openuct-rxe}
out=$cache/verbs-baseline.csv
iters=2000 bw_iters=2000 size=8 bw_size=65536 raw=0

if [ "${1:-}" = --guest ]; then
    # ---- inside the VM: $2 iters, $3 bw iters, $4 size, $5 bw size, $6 raw
    iters=$2 bw_iters=$3 size=$4 bw_size=$5 raw=$6
    logs=$(mktemp -d /tmp/verbs-baseline.XXXXXX)
    port=18600
    status=0
    # run TOOL ARGS...: server and client on rxe_lo, prints one CSV row
    run() {
        local tool=$1 spid crc src line
        shift
        port=$((port + 1))
        command -v "$tool" >/dev/null ||
            { echo "$tool not found (Debian package perftest)" >&2; return 1; }
        # QP timeout 18 and 7 retries: TCG makes everything 10x slower
        local common=(-d rxe_lo -x 1 -F -u 18 -p "$port" "$@")
        timeout 300 stdbuf -oL "$tool" "${common[@]}" >"$logs/$tool.server" 2>&1 &
        spid=$!
        for _ in $(seq 100); do
            port_listening "$port" && break
            sleep 0.1
        done
        timeout 300 stdbuf -oL "$tool" "${common[@]}" 127.0.0.1 \
            >"$logs/$tool.client" 2>&1
        crc=$?
        wait $spid
        src=$?
        if [ $raw -eq 1 ] || [ $crc -ne 0 ] || [ $src -ne 0 ]; then
            echo "---- $tool client (exit $crc):" >&2
            cat "$logs/$tool.client" >&2
            echo "---- $tool server (exit $src):" >&2
            cat "$logs/$tool.server" >&2
        fi
        [ $crc -eq 0 ] && [ $src -eq 0 ] || return 1
        # The result row is the first line that starts with a number
        line=$(grep -E '^ *[0-9]+ +[0-9]+ ' "$logs/$tool.client" | head -n1)
        [ -n "$line" ] || { echo "$tool printed no result" >&2; return 1; }
        case "$tool" in
        *_lat)
            # bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9
            echo "$line" | awk -v t="$tool" '{ printf "row,%s,%s,%s,%s,%s,%s,,\n",
                t, $1, $2, $5, $6, $8 }' ;;
        *_bw)
            # bytes iters bw_peak bw_avg msg_rate(Mpps)
            echo "$line" | awk -v t="$tool" '{ printf "row,%s,%s,%s,,,,%s,%s\n",
                t, $1, $2, $4, $5 * 1e6 }' ;;
        esac
    }
    echo "# kernel $(uname -r), $(ibv_devinfo -d rxe_lo | grep -m1 active_mtu | xargs)"
    run ib_send_lat  -s "$size" -n "$iters" || status=1
    run ib_write_lat -s "$size" -n "$iters" || status=1
    run ib_write_bw  -s "$bw_size" -n "$bw_iters" || status=1
    rm -rf "$logs"
    exit $status
fi

usage() { header_help "$0"; }
while getopts "o:n:b:s:S:kh" opt; do
    case $opt in
    o) out=$OPTARG ;;
    n) iters=$OPTARG ;;
    b) bw_iters=$OPTARG ;;
    s) size=$OPTARG ;;
    S) bw_size=$OPTARG ;;
    k) raw=1 ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done

tmp=$(mktemp "${TMPDIR:-/tmp}/verbs-baseline.XXXXXX")
trap 'rm -f "$tmp"' EXIT
bash "$top/test/rxe/run.sh" -t 900 -- \
    bash "$top/contrib/bench/verbs-baseline.sh" --guest \
    "$iters" "$bw_iters" "$size" "$bw_size" "$raw" >"$tmp"
rc=$?
[ $rc -eq 77 ] && exit 77

header="test,size,iterations,typical_lat_usec,avg_lat_usec,p99_lat_usec,bw_mib_s,msg_rate"
rows=$(sed -n 's/^row,//p' "$tmp")
grep -v '^row,' "$tmp"
[ -n "$rows" ] || die "no results (exit $rc)"

echo
printf '%-14s %8s %6s %14s %12s %12s %12s %12s\n' test size iters \
    'typical[us]' 'avg[us]' 'p99[us]' 'bw[MiB/s]' 'rate[msg/s]'
echo "$rows" | awk -F, '{ printf "%-14s %8s %6s %14s %12s %12s %12s %12s\n",
    $1, $2, $3, $4 == "" ? "-" : $4, $5 == "" ? "-" : $5,
    $6 == "" ? "-" : $6, $7 == "" ? "-" : $7,
    $8 == "" ? "-" : sprintf("%.0f", $8) }'

mkdir -p "$(dirname "$out")" &&
    { echo "# verbs baseline (perftest on Soft-RoCE rxe_lo in the test VM)," \
           "$(date -u +%FT%TZ)"
      grep '^# kernel' "$tmp"
      echo "$header"
      echo "$rows"; } >"$out" &&
    echo "saved to $out"
[ $rc -eq 0 ] || note "a tool failed (exit $rc)"
exit $((rc != 0))
