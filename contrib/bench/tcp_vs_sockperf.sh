#!/bin/bash
# Raw TCP (sockperf) against uct_perftest over tcp/lo, measured in one run
# on loopback and printed side by side with the ratios to the targets.
#
#   contrib/bench/tcp_vs_sockperf.sh [-b BUILDDIR] [-r ROUNDS] [-q] [-c S,C] [-o DIR]
#
# Each round runs every sockperf measurement, then every uct_perftest
# measurement; the table shows the median of the rounds. See
# contrib/bench/README.md for what is measured and how to read it.
set -u -o pipefail

prog=tcp_vs_sockperf
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

usage() {
    cat <<EOF
Usage: contrib/bench/tcp_vs_sockperf.sh [options]

Measures raw TCP with sockperf and uct_perftest over tcp/lo for the same
message sizes, alternating the two, and prints the medians, their ratios
and the targets.

  -b BUILDDIR  build tree holding src/tools/perf/uct_perftest (default:
               build/release in the source tree, \$OPENUCT_BUILD_DIR/release
               when that is set; else uct_perftest from PATH)
  -r ROUNDS    rounds of sockperf + uct_perftest (default 3)
  -q           quick: shorter runs, fewer iterations
  -c S,C       CPUs of the server and of the client (default 0,1)
  -o DIR       keep the raw output of every run in DIR
  -h           this help

Exit code 0 when the table was printed, whether or not the targets are met;
1 when a tool is missing or nothing could be measured.
EOF
}

die() {
    echo "$prog: $*" >&2
    exit 1
}

note() {
    echo "$prog: $*" >&2
}

# ---------------------------------------------------------------- options

builddir=""
rounds=3
quick=0
cpus="0,1"
keep_dir=""

while getopts "b:r:qc:o:h" opt; do
    case $opt in
    b) builddir=$OPTARG ;;
    r) rounds=$OPTARG ;;
    q) quick=1 ;;
    c) cpus=$OPTARG ;;
    o) keep_dir=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 1 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || die "unexpected argument '$1' (see -h)"

[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive number, not '$rounds'"
[[ $cpus =~ ^[0-9]+,[0-9]+$ ]] || die "-c wants two CPU numbers like 0,1, not '$cpus'"
server_cpu=${cpus%,*}
client_cpu=${cpus#*,}

# ------------------------------------------------------------------ tools

command -v sockperf >/dev/null 2>&1 ||
    die "sockperf is not installed; run contrib/install-deps.sh as root"
for t in taskset setsid stdbuf timeout awk; do
    command -v "$t" >/dev/null 2>&1 || die "'$t' is missing (util-linux/coreutils)"
done

if [ -n "$builddir" ]; then
    perftest=$builddir/src/tools/perf/uct_perftest
    [ -x "$perftest" ] || die "no uct_perftest in $builddir/src/tools/perf; build it first"
else
    perftest=${OPENUCT_BUILD_DIR:-$top/build}/release/src/tools/perf/uct_perftest
    if [ ! -x "$perftest" ]; then
        perftest=$(command -v uct_perftest) ||
            die "uct_perftest not found: build into build/release, pass -b BUILDDIR, or put it on PATH"
    fi
fi

for c in "$server_cpu" "$client_cpu"; do
    taskset -c "$c" true 2>/dev/null || die "cannot run on CPU $c; pick two with -c S,C"
done
[ "$server_cpu" != "$client_cpu" ] ||
    note "server and client share CPU $server_cpu; busy-polling sides will compete"

# ----------------------------------------------------------- run lengths

if [ "$quick" -eq 1 ]; then
    sp_time=1           # seconds per sockperf client run
    n_lat=3000          # uct_perftest iterations: ping-pong
    n_rate=50000        #   8-byte message rate
    n_1k=50000          #   bandwidth at 1 KiB, 64 KiB, 1 MiB
    n_64k=5000
    n_1m=500
else
    sp_time=2
    n_lat=10000
    n_rate=200000
    n_1k=200000
    n_64k=20000
    n_1m=2000
fi
client_timeout=120      # seconds a client run may take before it is killed
server_timeout=600      # upper bound of a server's life

# sockperf's largest message is 1 MiB - 1; its smallest is 14 bytes
sp_sizes=(14 1024 65536 1048575)
uct_sizes=(1k 64k 1m)

# ------------------------------------------------- processes and clean-up

work=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") || die "cannot create a temporary directory"
server_pid=""
server_port=""
client_pid=""

# True while PID runs (a zombie counts as ended)
alive() {
    local state
    state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# Ends the process group that PID leads (started under setsid), reaps
# PID and returns its exit code
stop_group() {
    local pid=$1 i
    [ -n "$pid" ] || return 0
    if alive "$pid"; then
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
        for ((i = 0; i < 40; i++)); do
            alive "$pid" || break
            sleep 0.05
        done
        if alive "$pid"; then
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
        fi
    fi
    wait "$pid" 2>/dev/null
}

# shellcheck disable=SC2317  # runs from the traps
cleanup() {
    trap - EXIT INT TERM
    stop_group "$client_pid"
    stop_group "$server_pid"
    if [ -n "$keep_dir" ]; then
        mkdir -p "$keep_dir" && cp -r "$work"/. "$keep_dir"/ &&
            note "raw output kept in $keep_dir"
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'note "interrupted"; exit 130' INT
trap 'exit 143' TERM

# True when something listens on TCP port $1 (any address)
port_listening() {
    local hex files=()
    hex=$(printf '%04X' "$1")
    [ -r /proc/net/tcp ] && files+=(/proc/net/tcp)
    [ -r /proc/net/tcp6 ] && files+=(/proc/net/tcp6)
    awk -v p="$hex" '$4 == "0A" { n = split($2, a, ":"); if (a[n] == p) f = 1 }
                     END { exit !f }' "${files[@]}"
}

# A random port outside the ephemeral range that nothing listens on
pick_port() {
    local lo=32768 hi=60999 base span port i
    read -r lo hi 2>/dev/null </proc/sys/net/ipv4/ip_local_port_range
    if [ "$lo" -gt 12000 ]; then
        base=10000 span=$((lo - 10000))
    elif [ "$hi" -lt 64000 ]; then
        base=$((hi + 1)) span=$((65535 - hi))
    else
        base=1024 span=64000
    fi
    for ((i = 0; i < 50; i++)); do
        port=$((base + (RANDOM * 32768 + RANDOM) % span))
        if ! port_listening "$port"; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# start_server LOG CMD...: starts CMD on the server CPU in its own session,
# with every @PORT@ in its words replaced by a free port, and waits until
# the port listens. Sets server_pid and server_port. Retries other ports
# when the server cannot bind.
start_server() {
    local log=$1 attempt port pid i w words
    shift
    for ((attempt = 1; attempt <= 8; attempt++)); do
        port=$(pick_port) || continue
        words=()
        for w in "$@"; do
            words+=("${w//@PORT@/$port}")
        done
        setsid timeout -k 5 "$server_timeout" \
            taskset -c "$server_cpu" stdbuf -oL "${words[@]}" >"$log" 2>&1 &
        pid=$!
        for ((i = 0; i < 200; i++)); do
            if port_listening "$port"; then
                server_pid=$pid
                server_port=$port
                return 0
            fi
            alive "$pid" || break
            sleep 0.05
        done
        stop_group "$pid"
    done
    return 1
}

# Waits up to $1 seconds for the server to end by itself, then ends it;
# returns its exit code
finish_server() {
    local secs=$1 i rc
    for ((i = 0; i < secs * 20; i++)); do
        alive "$server_pid" || break
        sleep 0.05
    done
    stop_group "$server_pid"
    rc=$?
    server_pid=""
    return $rc
}

# run_client LOG CMD...: runs CMD on the client CPU in its own session,
# bounded by client_timeout, its output in LOG and LOG.err; returns its
# exit code (124: timed out)
run_client() {
    local log=$1 rc
    shift
    setsid -w timeout -k 5 "$client_timeout" \
        taskset -c "$client_cpu" stdbuf -oL "$@" >"$log" 2>"$log.err" &
    client_pid=$!
    wait "$client_pid"
    rc=$?
    client_pid=""
    return $rc
}

# ---------------------------------------------------------------- results

declare -A vals     # metric -> one value per round: number, n/a or fail

record() {
    vals[$1]="${vals[$1]:-} $2"
}

# The output of a client run without terminal colours
client_output() {
    cat "$1" "$1.err" | sed 's/\x1b\[[0-9;]*m//g'
}

# ---------------------------------------------------------------- sockperf

sockperf_round() {
    local r=$1 log rc v m
    if ! start_server "$work/r$r-sockperf-server.log" \
            sockperf server --tcp -i 127.0.0.1 -p @PORT@ --nonblocked \
            -m 1048575; then
        note "round $r: the sockperf server did not start (see -o logs)"
        record sp_lat fail
        for m in "${sp_sizes[@]}"; do
            record "sp_tp_$m" fail
        done
        return
    fi

    # ping-pong, busy-polling (non-blocking socket) on both sides
    log=$work/r$r-sockperf-pp-14.log
    run_client "$log" sockperf ping-pong --tcp -i 127.0.0.1 -p "$server_port" \
        -m 14 -t "$sp_time" --nonblocked
    rc=$?
    v=$(client_output "$log" |
        awk '/percentile 50\.000 =/ { print $NF; exit }')
    if [ $rc -eq 0 ] && [ -n "$v" ]; then
        record sp_lat "$v"
    else
        note "round $r: sockperf ping-pong failed (exit $rc)"
        record sp_lat fail
    fi

    # throughput: messages the client wrote per second, whole run
    for m in "${sp_sizes[@]}"; do
        log=$work/r$r-sockperf-tp-$m.log
        run_client "$log" sockperf throughput --tcp -i 127.0.0.1 \
            -p "$server_port" -m "$m" -t "$sp_time"
        rc=$?
        v=$(client_output "$log" |
            awk '/Total of [0-9]+ messages sent in/ {
                     for (i = 1; i <= NF; i++) {
                         if ($i == "of") n = $(i + 1)
                         if ($i == "in") t = $(i + 1)
                     }
                     if (t > 0) printf "%.1f\n", n / t
                     exit
                 }')
        if [ $rc -eq 0 ] && [ -n "$v" ]; then
            record "sp_tp_$m" "$v"
        else
            note "round $r: sockperf throughput -m $m failed (exit $rc)"
            record "sp_tp_$m" fail
        fi
    done

    finish_server 0
}

# ------------------------------------------------------------ uct_perftest

# perftest_run ROUND KEY FIELD ARGS...: one client/server run of
# uct_perftest over tcp/lo; records CSV column FIELD (5 typical latency,
# 7 MiB/s, 8 msg/s) under KEY, "n/a" when the transport cannot run it
perftest_run() {
    local r=$1 key=$2 field=$3 log rc src v
    shift 3
    log=$work/r$r-uct-$key.log
    if ! start_server "$work/r$r-uct-$key-server.log" \
            "$perftest" -x tcp -d lo -p @PORT@; then
        note "round $r: the uct_perftest server did not start for $key"
        record "$key" fail
        return
    fi
    run_client "$log" "$perftest" -x tcp -d lo -p "$server_port" -f csv \
        "$@" 127.0.0.1
    rc=$?
    finish_server 3
    case $rc in
    0)
        v=$(awk -F, -v f="$field" '$1 != "test" && NF >= 8 { print $f; exit }' "$log")
        if [ -n "$v" ]; then
            record "$key" "$v"
        else
            note "round $r: no result from uct_perftest $*"
            record "$key" fail
        fi
        ;;
    2)
        record "$key" n/a
        ;;
    *)
        src=$(grep -v '^uct_perftest: .* operations, ' "$log.err" | tail -n 1)
        note "round $r: uct_perftest $* failed (exit $rc)${src:+: $src}"
        record "$key" fail
        ;;
    esac
}

perftest_round() {
    local r=$1 s n
    perftest_run "$r" uct_am_lat 5 -t am_lat -D short -s 8 -n "$n_lat"
    perftest_run "$r" uct_put_lat 5 -t put_lat -D short -s 8 -n "$n_lat"
    perftest_run "$r" uct_am_rate 8 -t am_bw -D short -s 8 -n "$n_rate"
    for s in "${uct_sizes[@]}"; do
        case $s in
        1k) n=$n_1k ;;
        64k) n=$n_64k ;;
        1m) n=$n_1m ;;
        esac
        perftest_run "$r" "uct_put_bw_$s" 7 -t put_bw -D zcopy -s "$s" -n "$n"
        perftest_run "$r" "uct_am_bw_$s" 7 -t am_bw -D zcopy -s "$s" -n "$n"
    done
}

# ------------------------------------------------------------- statistics

# median VALUES...: the median of the numbers; "fail" or "n/a" when none
median() {
    local v nums=() bad=n/a
    for v in "$@"; do
        case $v in
        fail) bad=fail ;;
        n/a) ;;
        *) nums+=("$v") ;;
        esac
    done
    if [ ${#nums[@]} -eq 0 ]; then
        echo "$bad"
        return
    fi
    printf '%s\n' "${nums[@]}" | sort -g |
        awk '{ v[NR] = $1 }
             END { if (NR % 2) print v[(NR + 1) / 2]
                   else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

is_number() {
    [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]
}

# fmt VALUE DECIMALS
fmt() {
    if is_number "$1"; then
        awk -v x="$1" -v d="$2" 'BEGIN { printf "%.*f", d, x }'
    else
        printf '%s' "$1"
    fi
}

# spread VALUES...: (max - min) / median of the numbers, in percent;
# nothing for fewer than two numbers
spread() {
    local med
    med=$(median "$@")
    is_number "$med" || return 0
    printf '%s\n' "$@" | grep -E '^[0-9]+(\.[0-9]+)?$' |
        awk -v m="$med" 'NR == 1 { lo = hi = $1 }
                         { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
                         END { if (NR > 1 && m > 0)
                                   printf "%.1f%%", 100 * (hi - lo) / m }'
}

n_rows=0
n_missed=0
n_passed=0

# row LABEL BASE_KEY UCT_KEY DECIMALS [OP LIMIT]: one table line; OP is
# "<=" (ratio at most LIMIT) or ">=" (at least); without them the line
# is for information. BASE_KEY "=KEY" marks a baseline that is not sockperf.
row() {
    local label=$1 bkey=$2 ukey=$3 dec=$4 op=${5:-} limit=${6:-}
    local base uct ratio=- target=- result=- mark=""
    if [ "${bkey:0:1}" = "=" ]; then
        bkey=${bkey:1}
        mark="*"
    fi
    # shellcheck disable=SC2086
    base=$(median ${vals[$bkey]:-})
    # shellcheck disable=SC2086
    uct=$(median ${vals[$ukey]:-})
    if is_number "$base" && is_number "$uct" &&
            awk -v b="$base" 'BEGIN { exit !(b > 0) }'; then
        ratio=$(awk -v u="$uct" -v b="$base" 'BEGIN { printf "%.3f", u / b }')
    fi
    if [ -n "$op" ]; then
        target="$op $limit"
        if [ "$ratio" = - ]; then
            result=n/a
        elif awk -v u="$uct" -v b="$base" -v l="$limit" -v op="$op" \
                'BEGIN { x = u / b; exit !((op == "<=") ? (x <= l) : (x >= l)) }'; then
            result=PASS
            n_passed=$((n_passed + 1))
        else
            result=MISS
            n_missed=$((n_missed + 1))
        fi
    fi
    printf '%-36s %12s %12s %7s %8s  %s\n' "$label" \
        "$mark$(fmt "$base" "$dec")" "$(fmt "$uct" "$dec")" "$ratio" \
        "$target" "$result"
    n_rows=$((n_rows + 1))
}

# rounds_line LABEL KEY DECIMALS: the value of every round and the spread
rounds_line() {
    local label=$1 key=$2 dec=$3 v out="" sp
    # shellcheck disable=SC2086
    for v in ${vals[$key]:-}; do
        out+=" $(fmt "$v" "$dec")"
    done
    # shellcheck disable=SC2086
    sp=$(spread ${vals[$key]:-})
    printf '#   %-38s%s%s\n' "$label" "$out" "${sp:+   (spread $sp)}"
}

# -------------------------------------------------------------------- run

sp_version=$(sockperf --version 2>&1 | awk '/version/ { print $NF; exit }')
note "sockperf $sp_version, uct_perftest $perftest"
note "$rounds round(s)$([ "$quick" -eq 1 ] && echo ", quick"), server on CPU $server_cpu, client on CPU $client_cpu"

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
start=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
    note "round $r/$rounds: sockperf"
    sockperf_round "$r"
    note "round $r/$rounds: uct_perftest"
    perftest_round "$r"
done
elapsed=$(($(date +%s) - start))

# sockperf bandwidth in MiB/s from its message rate
for m in 1024 65536 1048575; do
    for v in ${vals[sp_tp_$m]:-}; do
        if is_number "$v"; then
            record "sp_bw_$m" "$(awk -v x="$v" -v m="$m" 'BEGIN { printf "%.1f", x * m / 1048576 }')"
        else
            record "sp_bw_$m" "$v"
        fi
    done
done

echo
echo "# tcp over loopback: sockperf (raw TCP) against uct_perftest -x tcp -d lo"
echo "# $(uname -sr), $(nproc) CPUs; server on CPU $server_cpu, client on CPU $client_cpu;" \
    "median of $rounds round(s)$([ "$quick" -eq 1 ] && echo ", quick"); ${elapsed} s"
echo "# load average before the run: ${load:-unknown} (other work on the machine skews every number)"
echo "# ratio = uct / baseline; latency in usec (one-way, p50), rate in msg/s, bandwidth in MiB/s"
echo "#"
printf '%-36s %12s %12s %7s %8s  %s\n' metric sockperf uct ratio target result
row "am_lat short 8 B p50 [usec]" sp_lat uct_am_lat 2 "<=" 1.10
row "put_lat short 8 B p50 [usec]" "=uct_am_lat" uct_put_lat 2 "<=" 1.15
row "am_bw short 8 B rate [msg/s]" sp_tp_14 uct_am_rate 0 ">=" 0.80
for t in put_bw am_bw; do
    for s in "${uct_sizes[@]}"; do
        case $s in
        1k) m=1024 label="1 KiB" ;;
        64k) m=65536 label="64 KiB" ;;
        1m) m=1048575 label="1 MiB" ;;
        esac
        if [ "$s" = 1m ]; then
            row "$t zcopy $label [MiB/s]" "sp_bw_$m" "uct_${t}_$s" 1 ">=" 0.95
        else
            row "$t zcopy $label [MiB/s]" "sp_bw_$m" "uct_${t}_$s" 1
        fi
    done
done
echo "#"
echo "# * baseline is uct am_lat short 8 B of the same run"
echo "# sockperf: ping-pong 14 B, p50 of round trip / 2, busy-polling non-blocking sockets;"
echo "#   throughput 14 B (message rate), 1 KiB, 64 KiB, 1 MiB - 1 B (bandwidth)"
echo "# n/a: the transport cannot run that test (uct_perftest exit 2); fail: the run failed"
echo "#"
echo "# per round:"
rounds_line "sockperf ping-pong 14 B p50 [usec]" sp_lat 2
rounds_line "uct am_lat short 8 B p50 [usec]" uct_am_lat 2
rounds_line "uct put_lat short 8 B p50 [usec]" uct_put_lat 2
rounds_line "sockperf throughput 14 B [msg/s]" sp_tp_14 0
rounds_line "uct am_bw short 8 B [msg/s]" uct_am_rate 0
rounds_line "sockperf throughput 1 KiB [MiB/s]" sp_bw_1024 1
rounds_line "sockperf throughput 64 KiB [MiB/s]" sp_bw_65536 1
rounds_line "sockperf throughput 1 MiB-1 [MiB/s]" sp_bw_1048575 1
for t in put_bw am_bw; do
    rounds_line "uct $t zcopy 1 KiB [MiB/s]" "uct_${t}_1k" 1
    rounds_line "uct $t zcopy 64 KiB [MiB/s]" "uct_${t}_64k" 1
    rounds_line "uct $t zcopy 1 MiB [MiB/s]" "uct_${t}_1m" 1
done
echo "# targets: $n_passed passed, $n_missed missed"

# Nothing measured on one side means the comparison could not run at all
have_sp=0
have_uct=0
for k in "${!vals[@]}"; do
    for v in ${vals[$k]}; do
        if is_number "$v"; then
            case $k in
            sp_*) have_sp=1 ;;
            uct_*) have_uct=1 ;;
            esac
        fi
    done
done
[ $have_sp -eq 1 ] || die "sockperf produced no result; rerun with -o DIR and read its logs"
[ $have_uct -eq 1 ] || die "uct_perftest produced no result over tcp/lo; rerun with -o DIR and read its logs"
exit 0
