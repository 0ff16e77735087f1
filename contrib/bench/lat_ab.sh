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

usage() {
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

a= b= rounds=6 tests="put_lat am_lat" port=23456 opts=
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
[ -n "$a" ] && [ -n "$b" ] || usage
for d in "$a" "$b"; do
    [ -x "$d/src/tools/perf/uct_perftest" ] ||
        { echo "lat_ab: no uct_perftest in $d/src/tools/perf" >&2; exit 1; }
done

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# run BUILD TEST: prints the typical latency in us
run() {
    local bin=$1/src/tools/perf/uct_perftest line
    setsid timeout 60 taskset -c 0 "$bin" -x tcp -d lo -p "$port" \
        >/dev/null 2>&1 &
    local spid=$!
    sleep 0.3
    line=$(setsid -w timeout 60 taskset -c 1 "$bin" -x tcp -d lo -p "$port" \
           -t "$2" -n 20000 -w 2000 $opts -f csv 127.0.0.1 2>/dev/null |
           tail -1)
    wait "$spid" 2>/dev/null || true
    port=$((port + 1))
    echo "$line" | cut -d, -f5
}

for r in $(seq "$rounds"); do
    for t in $tests; do
        la=$(run "$a" "$t")
        lb=$(run "$b" "$t")
        echo "round $r $t A $la B $lb"
        echo "$t A $la" >>"$out"
        echo "$t B $lb" >>"$out"
    done
done

median() {
    sort -n | awk '{v[NR] = $1} END {
        print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for t in $tests; do
    ma=$(awk -v t="$t" '$1 == t && $2 == "A" {print $3}' "$out" | median)
    mb=$(awk -v t="$t" '$1 == t && $2 == "B" {print $3}' "$out" | median)
    awk -v t="$t" -v a="$ma" -v b="$mb" 'BEGIN {
        printf "%-8s p50 A %.3f us  B %.3f us  B/A %.3f\n", t, a, b, b / a }'
done
