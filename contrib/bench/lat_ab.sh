#!/bin/bash
# Latency of two builds of uct_perftest over tcp/lo, alternated in one run:
#   contrib/bench/lat_ab.sh -a BUILD_A -b BUILD_B [-r ROUNDS] [-t TESTS]
#                           [-o "CLIENT OPTIONS"]
# -o adds options to every client run (e.g. "-D zcopy -s 8k -C iface").
# Each round runs every test once with A, then with B; the server is on
# CPU 0, the client on CPU 1, each in its own session. Prints each
# round's typical (p50) latency and the medians with the ratio B/A. Used
# to check that a change costs nothing above noise (e.g. the key check of
# tcp RMA: A = a build before it, B = main).
set -euo pipefail

prog=lat_ab
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    header_help "$0"
    exit 2
}

a="" b="" rounds=6 tests="put_lat am_lat" opts=""
while getopts "a:b:r:t:o:h" opt; do
    case $opt in
    a) a=$OPTARG ;;
    b) b=$OPTARG ;;
    r) rounds=$OPTARG ;;
    t) tests=$OPTARG ;;
    o) opts=$OPTARG ;;
    *) usage ;;
    esac
done
if [ -z "$a" ] || [ -z "$b" ]; then
    usage
fi
for d in "$a" "$b"; do
    [ -x "$d/src/tools/perf/uct_perftest" ] || die "no uct_perftest in $d/src/tools/perf"
done
read -r -a client_opts <<<"$opts"

server_cpu=0 client_cpu=1 server_timeout=60 client_timeout=60
bench_work
declare -A vals     # "TEST A" or "TEST B" -> the latency of each round

# run BUILD TEST: sets lat to the typical latency in us; dies when the
# run failed
run() {
    local bin=$1/src/tools/perf/uct_perftest log=$work/client.csv rc
    start_server "$work/server.log" "$bin" -x tcp -d lo -p @PORT@ ||
        die "the server of $bin did not start"
    run_client "$log" "$bin" -x tcp -d lo -p "$server_port" -t "$2" \
        -n 20000 -w 2000 "${client_opts[@]}" -f csv 127.0.0.1 || {
        rc=$?
        die "$bin -t $2 failed (exit $rc): $(tail -n 1 "$log.err")"
    }
    finish_server 3 || true
    lat=$(tail -n 1 "$log" | cut -d, -f5)
}

for r in $(seq "$rounds"); do
    for t in $tests; do
        run "$a" "$t"
        la=$lat
        run "$b" "$t"
        lb=$lat
        echo "round $r $t A $la B $lb"
        record "$t A" "$la"
        record "$t B" "$lb"
    done
done

for t in $tests; do
    # shellcheck disable=SC2086
    ma=$(median ${vals[$t A]:-})
    # shellcheck disable=SC2086
    mb=$(median ${vals[$t B]:-})
    awk -v t="$t" -v a="$ma" -v b="$mb" 'BEGIN {
        printf "%-8s p50 A %.3f us  B %.3f us  B/A %.3f\n", t, a, b, b / a }'
done
