#!/bin/bash
# openuct and UCX through one harness, beside ucx_perftest and the raw
# floor, interleaved in one run; or (-S) size sweeps drawn as curves.
#
#   contrib/bench/perf_compare.sh [-b BUILDDIR] [-r ROUNDS] [-q] [-c S,C]
#                                 [-t tcp,self,posix,sysv,cma]
#                                 [-u UCXDIR | -U] [-o DIR]
#   contrib/bench/perf_compare.sh -S [-b BUILDDIR] [-t LIST] [-o DIR]
#
# See contrib/bench/README.md for what is measured and how to read it.
set -u -o pipefail

prog=perf_compare
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    cat <<EOF
Usage: contrib/bench/perf_compare.sh [options]

Runs the same benchmark harness (src/tools/perf, uct_perftest) built
against openuct and against Debian's UCX 1.13, UCX's own ucx_perftest,
and the floor (sockperf for tcp, test/bench/sm_floor and memcpy_floor for
the shared-memory transports), interleaved round by round, and prints
the medians, the ratios openuct/UCX and openuct/floor, and the targets.
With -S it sweeps message sizes instead and draws the curves.

  -b BUILDDIR  openuct build tree (default: build/release in the source
               tree, \$OPENUCT_BUILD_DIR/release when that is set)
  -r ROUNDS    rounds (default 5); the table shows the median
  -q           quick: shorter runs, fewer iterations
  -c S,C       CPUs of the server and of the client (default 0,1)
  -t LIST      transports, comma separated: tcp, self, posix, sysv, cma
               (default tcp,self)
  -u UCXDIR    where UCX 1.13 is unpacked (default: BUILDDIR/../ucx-1.13);
               fetched with apt-get download and dpkg-deb -x when missing
  -U           without UCX (openuct and the floor only)
  -S           size sweep, 8 B to 4 MiB: CSV and PNG curves (gnuplot)
  -o DIR       keep the raw output of every run in DIR; with -S the CSV
               and PNG files go there (default BUILDDIR/curves)
  -h           this help

Exit code 0 when the table (or the curves) came out, targets met or not;
1 when a tool is missing or nothing could be measured.
EOF
}

# ---------------------------------------------------------------- options

builddir=""
rounds=5
quick=0
cpus="0,1"
keep_dir=""
ucx_root=""
use_ucx=1
sweep=0
tls="tcp,self"

while getopts "b:r:qc:t:u:USo:h" opt; do
    case $opt in
    b) builddir=$OPTARG ;;
    r) rounds=$OPTARG ;;
    q) quick=1 ;;
    c) cpus=$OPTARG ;;
    t) tls=$OPTARG ;;
    u) ucx_root=$OPTARG ;;
    U) use_ucx=0 ;;
    S) sweep=1 ;;
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
do_tcp=0
do_self=0
sm_fifo_tls=()      # posix, sysv: active messages through a FIFO
do_cma=0
for t in ${tls//,/ }; do
    case $t in
    tcp) do_tcp=1 ;;
    self) do_self=1 ;;
    posix|sysv) [[ " ${sm_fifo_tls[*]} " == *" $t "* ]] || sm_fifo_tls+=("$t") ;;
    cma) do_cma=1 ;;
    *) die "-t: unknown transport '$t'; choose from tcp,self,posix,sysv,cma" ;;
    esac
done
sm_tls=("${sm_fifo_tls[@]}")
[ $do_cma -eq 1 ] && sm_tls+=(cma)
do_rndv=$do_tcp     # the rendezvous rows come with tcp

# ------------------------------------------------------------------ tools

require_tools taskset setsid stdbuf timeout awk
if [ $do_tcp -eq 1 ]; then
    require_installed sockperf
fi
if [ $sweep -eq 1 ]; then
    require_installed gnuplot
fi

[ -n "$builddir" ] || builddir=${OPENUCT_BUILD_DIR:-$top/build}/release
builddir=$(cd "$builddir" 2>/dev/null && pwd) ||
    die "no build tree '$builddir'; build one (contrib/quickstart.sh demo) or pass -b"
perftest=$builddir/src/tools/perf/uct_perftest
[ -x "$perftest" ] || die "no uct_perftest in $builddir/src/tools/perf; build it first"

for c in "$server_cpu" "$client_cpu"; do
    taskset -c "$c" true 2>/dev/null || die "cannot run on CPU $c; pick two with -c S,C"
done
[ "$server_cpu" != "$client_cpu" ] ||
    note "server and client share CPU $server_cpu; busy-polling sides will compete"

# The floors of the shared-memory transports (test/bench): one cache line
# between the two CPUs, and memcpy
sm_floor=$builddir/test/bench/sm_floor
memcpy_floor=$builddir/test/bench/memcpy_floor
if [ ${#sm_tls[@]} -gt 0 ]; then
    [ ${#sm_fifo_tls[@]} -eq 0 ] || [ -x "$sm_floor" ] ||
        note "no $sm_floor (make -C $builddir): the posix and sysv rows have no floor"
    [ -x "$memcpy_floor" ] ||
        note "no $memcpy_floor (make -C $builddir): the memcpy floor is missing"
fi

# The shared-memory transports openuct's build has (uct_info -d); the
# figures of one it lacks are n/a
oct_sm_tls=""
sm_transports() {
    local info=$builddir/src/tools/info/uct_info t
    [ -x "$info" ] || { note "no $info: openuct's shared-memory figures are n/a"; return; }
    oct_sm_tls=" $(env -u UCX_MODULE_DIR "$info" -d 2>/dev/null |
        awk '/Transport:/ { print $NF }' | sort -u | tr '\n' ' ')"
    for t in "${sm_tls[@]}"; do
        [[ $oct_sm_tls == *" $t "* ]] ||
            note "openuct's build has no $t transport (uct_info -d): its $t figures are n/a"
    done
}
[ ${#sm_tls[@]} -gt 0 ] && sm_transports

# The largest AM bcopy and AM zcopy of openuct's tcp on lo, in bytes, as
# uct_info -d -t tcp prints them ("am_bcopy: <= 8184", "am_zcopy:
# 0..64K"); the values of this writing when it cannot say
am_bcopy_max=8184
am_zcopy_max=65536
tcp_am_limits() {
    local info=$builddir/src/tools/info/uct_info out
    [ -x "$info" ] || { note "no $info: AM limits taken as $am_bcopy_max and $am_zcopy_max"; return; }
    out=$(env -u UCX_MODULE_DIR "$info" -d -t tcp 2>/dev/null |
        awk 'function b(v) {
                 if (v ~ /K$/) return (v + 0) * 1024
                 if (v ~ /M$/) return (v + 0) * 1048576
                 if (v ~ /G$/) return (v + 0) * 1073741824
                 return v + 0
             }
             /Device:/ { dev = $NF }
             dev == "lo" && match($0, /am_bcopy: <= [0-9]+[KMG]?/) {
                 v = substr($0, RSTART, RLENGTH); sub(/.* /, "", v); bc = b(v)
             }
             dev == "lo" && match($0, /am_zcopy: [0-9]+\.\.[0-9]+[KMG]?/) {
                 v = substr($0, RSTART, RLENGTH); sub(/.*\.\./, "", v); zc = b(v)
             }
             END { if (bc > 0 && zc > 0) print bc, zc }')
    if [ -n "$out" ]; then
        read -r am_bcopy_max am_zcopy_max <<<"$out"
    else
        note "uct_info gave no AM limits for tcp/lo: taken as $am_bcopy_max and $am_zcopy_max"
    fi
}
[ $do_rndv -eq 1 ] && tcp_am_limits

# -------------------------------------------------------------------- UCX

# The UCX packages of Debian 12, unpacked (never installed: their headers
# in /usr/include would shadow openuct's)
ucx_packages=(libucx0 libucx-dev ucx-utils)

fetch_ucx() {
    local dl p deb
    [ -x "$ucx_root/usr/bin/ucx_perftest" ] && return 0
    note "fetching ${ucx_packages[*]} into $ucx_root"
    if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
        die "apt-get and dpkg-deb are needed to fetch UCX (Debian); or pass -U"
    fi
    mkdir -p "$ucx_root" || die "cannot create $ucx_root"
    dl=$(mktemp -d "${TMPDIR:-/tmp}/$prog-deb.XXXXXX") || die "no temporary directory"
    chmod 0777 "$dl"
    for p in "${ucx_packages[@]}"; do
        (cd "$dl" && apt-get download -q "$p" >/dev/null 2>&1) ||
            { rm -rf "$dl"; die "apt-get download $p failed: run 'apt-get update' as root, or pass -U to go without UCX"; }
    done
    for deb in "$dl"/*.deb; do
        dpkg-deb -x "$deb" "$ucx_root" || { rm -rf "$dl"; die "dpkg-deb -x $deb failed"; }
    done
    rm -rf "$dl"
    [ -x "$ucx_root/usr/bin/ucx_perftest" ] || die "no ucx_perftest in the unpacked $ucx_root"
}

# Builds the harness's sources against UCX's headers and libraries
build_ucx_harness() {
    local src=("$top"/src/tools/perf/perftest*.c) f newer=0
    ucx_harness=$ucx_root/uct_perftest
    if [ -x "$ucx_harness" ] && [ -x "$ucx_root/tcp_ep_memory" ]; then
        for f in "${src[@]}" "$top"/src/tools/perf/perftest*.h \
                 "$top/test/bench/tcp_ep_memory.c" \
                 "$top/test/common/heap_in_use.h"; do
            [ "$f" -nt "$ucx_harness" ] && newer=1
        done
        [ $newer -eq 0 ] && return 0
    fi
    note "building uct_perftest and tcp_ep_memory against UCX 1.13"
    ${CC:-cc} -O3 -std=gnu11 -I"$ucx_root/usr/include" "${src[@]}" \
        -o "$ucx_harness" -L"$ucx_lib" -Wl,-rpath-link,"$ucx_lib" \
        -Wl,-rpath,"$ucx_lib" -luct -lucs ||
        die "uct_perftest does not build against UCX 1.13 in $ucx_root"
    ${CC:-cc} -O3 -std=gnu11 -I"$ucx_root/usr/include" -I"$top/test" \
        "$top/test/bench/tcp_ep_memory.c" "$top/test/common/uct_md_find.c" \
        -o "$ucx_root/tcp_ep_memory" -L"$ucx_lib" \
        -Wl,-rpath-link,"$ucx_lib" -Wl,-rpath,"$ucx_lib" -luct -lucs -lm ||
        die "tcp_ep_memory does not build against UCX 1.13 in $ucx_root"
}

if [ $use_ucx -eq 1 ]; then
    [ -n "$ucx_root" ] || ucx_root=$(dirname "$builddir")/ucx-1.13
    fetch_ucx
    ucx_root=$(cd "$ucx_root" && pwd)
    ucx_lib=$(dirname "$(find "$ucx_root" -name 'libuct.so.0' | head -n 1)")
    [ -d "$ucx_lib/ucx" ] || die "no UCX module directory under $ucx_lib"
    build_ucx_harness
    ucx_version=$(env LD_LIBRARY_PATH="$ucx_lib" UCX_MODULE_DIR="$ucx_lib/ucx" \
        "$ucx_root/usr/bin/ucx_info" -v 2>/dev/null |
        awk '/^# Version / { print $3; exit }')
fi

# The implementations: openuct's uct_perftest (oct), the same harness
# built against UCX (ucx), and UCX's ucx_perftest (uxp)
impls=(oct)
[ $use_ucx -eq 1 ] && impls+=(ucx uxp)

# impl_cmd IMPL: sets cmd to the command prefix of IMPL
impl_cmd() {
    case $1 in
    oct) cmd=(env -u UCX_MODULE_DIR "$perftest") ;;
    ucx) cmd=(env LD_LIBRARY_PATH="$ucx_lib" UCX_MODULE_DIR="$ucx_lib/ucx"
              "$ucx_harness") ;;
    uxp) cmd=(env LD_LIBRARY_PATH="$ucx_lib" UCX_MODULE_DIR="$ucx_lib/ucx"
              "$ucx_root/usr/bin/ucx_perftest") ;;
    esac
}

# self's device: "memory" in openuct, "memory0" in UCX
self_dev() {
    if [ "$1" = oct ]; then echo memory; else echo memory0; fi
}

# tl_dev IMPL TL: the device of TL (tcp runs over lo; posix, sysv and cma
# have "memory" in both libraries)
tl_dev() {
    case $2 in
    self) self_dev "$1" ;;
    tcp) echo lo ;;
    *) echo memory ;;
    esac
}

# ----------------------------------------------------------- run lengths

if [ "$quick" -eq 1 ]; then
    sp_time=1           # seconds per sockperf client run
    n_lat=3000          # iterations: tcp ping-pong
    n_rate=50000        #   tcp 8-byte message rate
    n_64k=5000          #   tcp bandwidth at 8-64 KiB
    n_1m=500            #   tcp bandwidth at 1 MiB
    n_self=1000000      #   self
    n_sm_lat=100000     #   posix, sysv ping-pong (and sm_floor's)
    n_sm_rate=1000000   #   posix, sysv 8-byte message rate
    n_sm_8k=100000      #   posix, sysv AM bcopy 8 KiB
    n_sm_1m=1000        #   cma 1 MiB
else
    sp_time=2
    n_lat=20000
    n_rate=200000
    n_64k=20000
    n_1m=2000
    n_self=10000000
    n_sm_lat=1000000
    n_sm_rate=10000000
    n_sm_8k=1000000
    n_sm_1m=5000
fi
client_timeout=120      # seconds a client run may take before it is killed
server_timeout=600      # upper bound of a server's life

# sockperf's largest message is 1 MiB - 1; its smallest is 14 bytes
sp_sizes=(14 65536 1048575)

# The rendezvous rows: rndv_lat at these sizes, beside am_lat and a
# sockperf ping-pong of the same size (1 MiB - 1 for 1 MiB)
rndv_sizes=(8k 64k 1m)

# ------------------------------------------------- processes and clean-up

bench_work

# ---------------------------------------------------------------- results

declare -A vals     # IMPL:KEY.FIELD -> one value per round: number, n/a, fail
declare -A used     # IMPL:KEY -> the data mode it ran with, when not the asked one

# record_all PREFIX VALUE: the same VALUE for every field of a run
record_all() {
    local f
    for f in p50 avg bw rate rtt; do
        record "$1.$f" "$2"
    done
}

# The output of a client run without terminal colours
client_output() {
    cat "$1" "$1.err" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g'
}

# ------------------------------------------------------------- one run

# bytes SIZE: "1k", "64k", "1m" in bytes
bytes() {
    case $1 in
    *k) echo $((${1%k} * 1024)) ;;
    *m) echo $((${1%m} * 1048576)) ;;
    *) echo "$1" ;;
    esac
}

# to_uxp_args ARGS...: uct_perftest options as ucx_perftest takes them
# (its get test is both latency and bandwidth; sizes without suffixes);
# sets uargs
to_uxp_args() {
    uargs=()
    while [ $# -gt 0 ]; do
        case $1 in
        -s)
            uargs+=(-s "$(bytes "$2")")
            shift 2 ;;
        -t)
            case $2 in
            get_lat|get_bw) uargs+=(-t get) ;;
            *) uargs+=(-t "$2") ;;
            esac
            shift 2 ;;
        *)
            uargs+=("$1")
            shift ;;
        esac
    done
}

# try_run IMPL LOG TL ARGS...: one run of IMPL, loopback over self or
# client/server over tcp/lo, posix, sysv or cma (server on the server
# CPU, client on the client CPU; the out-of-band connection over
# 127.0.0.1). Returns 0 with the figures in fig_p50, fig_avg, fig_bw,
# fig_rate; 2 when IMPL cannot run it; 1 when it failed.
try_run() {
    local impl=$1 log=$2 tl=$3 rc line args base dev
    shift 3
    case $tl in
    posix|sysv|cma)
        if [ "$impl" = oct ] && [[ $oct_sm_tls != *" $tl "* ]]; then
            echo "openuct's build has no $tl transport" >"$log"
            return 2
        fi ;;
    esac
    dev=$(tl_dev "$impl" "$tl")
    impl_cmd "$impl"
    base=("${cmd[@]}")
    if [ "$impl" = uxp ]; then
        # ucx_perftest connects to endpoints when it can and has no choice;
        # its loopback latency is what -1 asks of uct_perftest
        [[ " $* " == *" -C "* ]] && return 2
        if [ "$tl" = self ] && [[ " $* " == *" -t am_lat "* ]] &&
                [[ " $* " != *" -1 "* ]]; then
            return 2 # it has no two-message loopback latency
        fi
        local a=() w skip=0
        for w in "$@"; do
            if [ $skip -eq 1 ]; then
                skip=0
            elif [ "$w" = -B ]; then
                skip=1 # it reads the clock every iteration
            elif [ "$w" != -1 ]; then
                a+=("$w")
            fi
        done
        set -- "${a[@]}"
        to_uxp_args "$@"
        args=("${uargs[@]}" -v -f)
    else
        args=("$@" -f csv)
    fi

    if [ "$tl" = self ]; then
        run_client "$log" "${base[@]}" -x self -d "$(self_dev "$impl")" -l \
            "${args[@]}"
        rc=$?
    else
        start_server "$log.server" "${base[@]}" -x "$tl" -d "$dev" -p @PORT@ ||
            { note "the $impl $tl server did not start (see -o logs)"; return 1; }
        if [ "$impl" = uxp ]; then
            run_client "$log" "${base[@]}" 127.0.0.1 -p "$server_port" \
                -x "$tl" -d "$dev" "${args[@]}"
        else
            run_client "$log" "${base[@]}" -x "$tl" -d "$dev" -p "$server_port" \
                "${args[@]}" 127.0.0.1
        fi
        rc=$?
        finish_server 3
    fi

    if [ "$impl" = uxp ]; then
        # iterations,p50,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr
        if client_output "$log" | grep -qiE 'does not support|unsupported'; then
            return 2
        fi
        line=$(grep -E '^ *[0-9]+,' "$log" | tail -n 1)
        [ $rc -eq 0 ] && [ -n "$line" ] || return 1
        IFS=, read -r _ fig_p50 _ fig_avg _ fig_bw _ fig_rate <<<"$line"
    else
        # test,mode,size,iterations,p50,avg,bw,rate,min,p99
        [ $rc -eq 2 ] && return 2
        line=$(awk -F, '$1 != "test" && NF >= 8 { print; exit }' "$log")
        [ $rc -eq 0 ] && [ -n "$line" ] || return 1
        IFS=, read -r _ _ _ _ fig_p50 fig_avg fig_bw fig_rate _ <<<"$line"
    fi
    return 0
}

# measure IMPL ROUND KEY TL ARGS...: try_run, and with "-D short" that
# IMPL cannot run, again with zcopy (noted in the table); records
# IMPL:KEY.{p50,avg,bw,rate,rtt}
measure() {
    local impl=$1 r=$2 key=$3 tl=$4 log rc i
    shift 4
    local args=("$@")
    log=$work/r$r-$impl-$key.log
    try_run "$impl" "$log" "$tl" "${args[@]}"
    rc=$?
    if [ $rc -eq 2 ] && [[ " ${args[*]} " == *" -D short "* ]]; then
        for i in "${!args[@]}"; do
            [ "${args[$i]}" = short ] && args[i]=zcopy
        done
        try_run "$impl" "$log.zcopy" "$tl" "${args[@]}"
        rc=$?
        [ $rc -eq 0 ] && used[$impl:$key]=zcopy
    fi
    case $rc in
    0)
        record "$impl:$key.p50" "$fig_p50"
        record "$impl:$key.avg" "$fig_avg"
        record "$impl:$key.bw" "$fig_bw"
        record "$impl:$key.rate" "$fig_rate"
        record "$impl:$key.rtt" "$(awk -v x="$fig_p50" 'BEGIN { printf "%.3f", 2 * x }')"
        ;;
    2)
        record_all "$impl:$key" n/a ;;
    *)
        note "round $r: $impl $key failed: $(client_output "$log" | tail -n 1)"
        record_all "$impl:$key" fail ;;
    esac
}

# metric ROUND KEY TL ARGS...: every implementation once, in an order
# that turns around every round
metric() {
    local r=$1 impl order=("${impls[@]}") i
    if [ $((r % 2)) -eq 0 ]; then
        order=()
        for ((i = ${#impls[@]} - 1; i >= 0; i--)); do
            order+=("${impls[$i]}")
        done
    fi
    for impl in "${order[@]}"; do
        measure "$impl" "$@"
    done
}

tcp_round() {
    local r=$1 s n
    metric "$r" am_lat tcp -t am_lat -D short -s 8 -n "$n_lat" -w $((n_lat / 10))
    metric "$r" am_lat_iface tcp -t am_lat -D short -s 8 -C iface -n "$n_lat" -w $((n_lat / 10))
    metric "$r" am_rate tcp -t am_bw -D short -s 8 -n "$n_rate" -w $((n_rate / 10))
    metric "$r" put_lat tcp -t put_lat -D short -s 8 -n "$n_lat" -w $((n_lat / 10))
    metric "$r" put_bw_1m tcp -t put_bw -D zcopy -s 1m -n "$n_1m" -w $((n_1m / 10))
    metric "$r" am_bw_64k tcp -t am_bw -D zcopy -s 64k -n "$n_64k" -w $((n_64k / 10))
    metric "$r" am_lat_1k tcp -t am_lat -D bcopy -s 1k -n "$n_lat" -w $((n_lat / 10))
    # GET against AM latency and PUT bandwidth of the same size
    metric "$r" am_lat_8k tcp -t am_lat -D zcopy -s 8k -n "$n_lat" -w $((n_lat / 10))
    metric "$r" am_lat_64k tcp -t am_lat -D zcopy -s 64k -n "$n_lat" -w $((n_lat / 10))
    for s in 1k 8k 64k; do
        metric "$r" "get_lat_$s" tcp -t get_lat -D zcopy -s "$s" -n "$n_lat" -w $((n_lat / 10))
    done
    for s in 8k 64k; do
        n=$n_64k
        metric "$r" "put_bw_$s" tcp -t put_bw -D zcopy -s "$s" -n "$n" -w $((n / 10))
        metric "$r" "get_bw_$s" tcp -t get_bw -D zcopy -s "$s" -n "$n" -w $((n / 10))
    done
}

# The rendezvous rows (openuct only: UCX 1.13's tcp has no get zcopy, so
# the harness built against it cannot run rndv_lat, and ucx_perftest has
# no such test): rndv_lat at each size, am_lat zcopy where the size fits
# an AM zcopy (8 and 64 KiB run in tcp_round, for the GET rows), am_lat
# bcopy at the largest AM bcopy up to 8 KiB. The order turns around
# every round.
rndv_round() {
    local r=$1 s n i key test mode size jobs=() order=()
    for s in "${rndv_sizes[@]}"; do
        jobs+=("rndv_lat_$s rndv_lat zcopy $s")
        case $s in
        8k|64k) ;;
        *) [ "$(bytes "$s")" -le "$am_zcopy_max" ] &&
               jobs+=("am_lat_$s am_lat zcopy $s") ;;
        esac
    done
    jobs+=("am_lat_bmax am_lat bcopy $(rndv_bcopy_size)")
    if [ $((r % 2)) -eq 0 ]; then
        for ((i = ${#jobs[@]} - 1; i >= 0; i--)); do
            order+=("${jobs[$i]}")
        done
    else
        order=("${jobs[@]}")
    fi
    for i in "${order[@]}"; do
        read -r key test mode size <<<"$i"
        n=$n_lat
        [ "$(bytes "$size")" -gt 65536 ] && n=$n_1m
        measure oct "$r" "$key" tcp -t "$test" -D "$mode" -s "$size" -n "$n" -w $((n / 10))
    done
}

# rndv_bcopy_size: the AM bcopy size of the 8 KiB row, 8 KiB or the
# largest AM bcopy when that is smaller
rndv_bcopy_size() {
    if [ "$am_bcopy_max" -lt 8192 ]; then echo "$am_bcopy_max"; else echo 8192; fi
}

self_round() {
    local r=$1
    # the clock read every 16 round trips: it costs as much as one here
    metric "$r" self_am_lat self -t am_lat -D short -s 8 -B 16 -n "$n_self" -w $((n_self / 10))
    metric "$r" self_am_lat1 self -t am_lat -D short -s 8 -1 -B 16 -n "$n_self" -w $((n_self / 10))
    metric "$r" self_am_rate self -t am_bw -D short -s 8 -n "$n_self" -w $((n_self / 10))
}

# posix and sysv: AM latency, rate and bcopy bandwidth; cma: PUT and GET
# zcopy bandwidth at 1 MiB. Client/server, as tcp. The floors run first
# in odd rounds and last in even ones.
sm_round() {
    local r=$1 t
    [ $((r % 2)) -eq 1 ] && sm_floor_round "$r"
    for t in "${sm_fifo_tls[@]}"; do
        metric "$r" "${t}_am_lat" "$t" -t am_lat -D short -s 8 -n "$n_sm_lat" -w $((n_sm_lat / 10))
        metric "$r" "${t}_am_rate" "$t" -t am_bw -D short -s 8 -n "$n_sm_rate" -w $((n_sm_rate / 10))
        metric "$r" "${t}_am_bw_8k" "$t" -t am_bw -D bcopy -s 8k -n "$n_sm_8k" -w $((n_sm_8k / 10))
    done
    if [ $do_cma -eq 1 ]; then
        metric "$r" cma_put_bw_1m cma -t put_bw -D zcopy -s 1m -n "$n_sm_1m" -w $((n_sm_1m / 10))
        metric "$r" cma_get_bw_1m cma -t get_bw -D zcopy -s 1m -n "$n_sm_1m" -w $((n_sm_1m / 10))
    fi
    [ $((r % 2)) -eq 0 ] && sm_floor_round "$r"
}

# The floors of the shared-memory rows: test/bench/sm_floor, one cache
# line between the server and the client CPU (ping-pong p50, half a round
# trip, and the rate of a 64-line ring acknowledged every 32 messages),
# for posix and sysv; memcpy_floor at 8 KiB and 1 MiB on the client CPU
sm_floor_round() {
    local r=$1 log v
    if [ ${#sm_fifo_tls[@]} -gt 0 ]; then
        log=$work/r$r-sm_floor.log
        if [ -x "$sm_floor" ]; then
            run_client "$log" "$sm_floor" -c "$server_cpu,$client_cpu" \
                -n "$n_sm_lat"
        fi
        v=$(awk -F, '$1 == "am_lat" && $2 == "floor" { print $5; exit }' "$log" 2>/dev/null)
        record sm_lat "${v:-fail}"
        v=$(awk -F, '$1 == "am_bw" && $2 == "floor" { print $8; exit }' "$log" 2>/dev/null)
        record sm_rate "${v:-fail}"
        # the same ping-pong with a line per direction, each line with one
        # writer: the shape of a FIFO per receiver
        log=$work/r$r-sm_floor2.log
        if [ -x "$sm_floor" ]; then
            run_client "$log" "$sm_floor" -c "$server_cpu,$client_cpu" \
                -t lat -L 2 -n "$n_sm_lat"
        fi
        v=$(awk -F, '$1 == "am_lat" && $2 == "floor" { print $5; exit }' "$log" 2>/dev/null)
        record sm_lat2 "${v:-fail}"
    fi
    log=$work/r$r-memcpy_floor.log
    if [ -x "$memcpy_floor" ]; then
        run_client "$log" "$memcpy_floor" -s 8k,1m -t 0.3
    fi
    v=$(awk -F, '$1 == 8192 { print $4; exit }' "$log" 2>/dev/null)
    record mc_bw_8k "${v:-fail}"
    v=$(awk -F, '$1 == 1048576 { print $4; exit }' "$log" 2>/dev/null)
    record mc_bw_1m "${v:-fail}"
}

# Heap of an idle connected tcp endpoint: test/bench/tcp_ep_memory, built
# for both libraries (client side, 1000 endpoints)
mem_round() {
    local r=$1 impl bench log v
    for impl in oct ucx; do
        case $impl in
        oct) bench=(env -u UCX_MODULE_DIR "$builddir/test/bench/tcp_ep_memory") ;;
        ucx)
            [ $use_ucx -eq 1 ] || continue
            bench=(env LD_LIBRARY_PATH="$ucx_lib" UCX_MODULE_DIR="$ucx_lib/ucx"
                   "$ucx_root/tcp_ep_memory") ;;
        esac
        log=$work/r$r-$impl-ep_heap.log
        run_client "$log" "${bench[@]}" -n 1000
        v=$(sed -n 's/^ep-memory: tl=tcp .* client=\([0-9]*\) .*/\1/p' "$log")
        if [ -n "$v" ]; then
            record "$impl:ep_heap.avg" "$v"
        else
            note "round $r: $impl tcp_ep_memory gave no figure (see -o logs)"
            record "$impl:ep_heap.avg" fail
        fi
    done
}

# ---------------------------------------------------------------- sockperf

# sp_size SIZE: the sockperf message of a size like 8k: its bytes, at
# most 1 MiB - 1
sp_size() {
    local b
    b=$(bytes "$1")
    [ "$b" -gt 1048575 ] && b=1048575
    echo "$b"
}

# sp_pingpong ROUND BYTES KEY: one sockperf ping-pong of BYTES against
# the running server, busy-polling (non-blocking socket) on both sides;
# records its p50 (half a round trip) as KEY
sp_pingpong() {
    local r=$1 m=$2 key=$3 log rc v
    log=$work/r$r-sockperf-pp-$m.log
    run_client "$log" sockperf ping-pong --tcp -i 127.0.0.1 -p "$server_port" \
        -m "$m" -t "$sp_time" --nonblocked
    rc=$?
    v=$(client_output "$log" |
        awk '/percentile 50\.000 =/ { print $NF; exit }')
    if [ $rc -eq 0 ] && [ -n "$v" ]; then
        record "$key" "$v"
    else
        note "round $r: sockperf ping-pong -m $m failed (exit $rc)"
        record "$key" fail
    fi
}

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
        if [ $do_rndv -eq 1 ]; then
            for m in "${rndv_sizes[@]}"; do
                record "sp_lat_$m" fail
            done
        fi
        return
    fi

    # ping-pong: 14 B for the 8 B rows, and the rendezvous rows' sizes
    sp_pingpong "$r" 14 sp_lat
    if [ $do_rndv -eq 1 ]; then
        for m in "${rndv_sizes[@]}"; do
            sp_pingpong "$r" "$(sp_size "$m")" "sp_lat_$m"
        done
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

# ------------------------------------------------------------------ table

# med KEY: the median of the rounds of KEY; n/a when none recorded it
med() {
    [ -n "${vals[$1]:-}" ] || { echo n/a; return; }
    # shellcheck disable=SC2086
    median ${vals[$1]}
}

table_header() {
    printf '%-46s %10s %10s %10s %10s %8s %8s %-14s %s\n' metric floor \
        ucx_perftest "UCX" openuct "oct/UCX" "oct/flr" target result
}

# row LABEL KEY FIELD DECIMALS FLOOR_KEY [KIND OP LIMIT]: one line.
# FLOOR_KEY is a vals key or "-". KIND says what the target bounds:
# floor (openuct / floor), ucx (openuct / UCX through the same harness)
# or abs (openuct's own figure).
row() {
    local label=$1 key=$2 f=$3 dec=$4 fkey=$5 kind=${6:-} op=${7:-} lim=${8:-}
    local floor=- uxp=- ucx=- oct r_ucx r_floor x target=- result=- mark=""
    [ "$fkey" != - ] && floor=$(med "$fkey")
    if [ $use_ucx -eq 1 ]; then
        uxp=$(med "uxp:$key.$f")
        ucx=$(med "ucx:$key.$f")
    fi
    oct=$(med "oct:$key.$f")
    r_ucx=$(ratio "$oct" "$ucx")
    r_floor=$(ratio "$oct" "$floor")
    if [ -n "$kind" ]; then
        case $kind in
        floor) x=$r_floor ;;
        ucx) x=$r_ucx ;;
        abs) x=$oct ;;
        esac
        target="$kind $op $lim"
        judge "$x" "$op" "$lim"
        result=$verdict
    fi
    [ -n "${used[uxp:$key]:-}${used[ucx:$key]:-}" ] && mark=" (UCX: zcopy)"
    printf '%-46s %10s %10s %10s %10s %8s %8s %-14s %s\n' "$label$mark" \
        "$(fmt "$floor" "$dec")" "$(fmt "$uxp" "$dec")" \
        "$(fmt "$ucx" "$dec")" "$(fmt "$oct" "$dec")" "$r_ucx" "$r_floor" \
        "$target" "$result"
}

# own_row LABEL KEY FIELD BASE_KEY BASE_FIELD DECIMALS OP LIMIT: openuct
# against another openuct figure of the same run
own_row() {
    local label=$1 key=$2 f=$3 bkey=$4 bf=$5 dec=$6 op=$7 lim=$8 oct base r
    oct=$(med "oct:$key.$f")
    base=$(med "oct:$bkey.$bf")
    r=$(ratio "$oct" "$base")
    judge "$r" "$op" "$lim"
    printf '%-46s %10s %10s %8s %-10s %s\n' "$label" "$(fmt "$oct" "$dec")" \
        "$(fmt "$base" "$dec")" "$r" "$op $lim" "$verdict"
}

# rounds_line LABEL KEY DECIMALS: every round's value and the spread
rounds_line() {
    local label=$1 key=$2 dec=$3 v out="" sp
    # shellcheck disable=SC2086
    for v in ${vals[$key]:-}; do
        out+=" $(fmt "$v" "$dec")"
    done
    # shellcheck disable=SC2086
    sp=$(spread ${vals[$key]:-})
    printf '#   %-34s%s%s\n' "$label" "$out" "${sp:+   (spread $sp%)}"
}

# human SIZE: "8k" as "8 KiB", "1m" as "1 MiB"
human() {
    case $1 in
    *k) echo "${1%k} KiB" ;;
    *m) echo "${1%m} MiB" ;;
    *) echo "$1 B" ;;
    esac
}

# The rendezvous section: rndv_lat against am_lat and sockperf ping-pong
# of the same size, all p50 of half a round trip
rndv_table() {
    local s rndv amz amb sp bsz zmax
    bsz=$(rndv_bcopy_size)
    zmax=$(awk -v b="$am_zcopy_max" 'BEGIN { if (b % 1048576 == 0) printf "%d MiB", b / 1048576
        else if (b % 1024 == 0) printf "%d KiB", b / 1024; else printf "%d B", b }')
    echo "#"
    echo "# tcp rendezvous (openuct): rndv_lat sends every message as an MPI library"
    echo "# sends a large one: buffer registered, rkey packed into an AM, the receiver"
    echo "# registers its buffer, GETs the data (zcopy), checks it, answers with a small"
    echo "# AM, both deregister. p50 of half a round trip [usec], like am_lat; beside it"
    echo "# am_lat of the same size and sockperf ping-pong of the same size (one way)"
    printf '%-34s %9s %6s %9s %9s %9s %9s %9s\n' metric rndv_lat UCX \
        "am zcopy" "am bcopy" sockperf "rndv/amz" "rndv/sp"
    for s in "${rndv_sizes[@]}"; do
        rndv=$(med "oct:rndv_lat_$s.p50")
        amz=-
        [ "$(bytes "$s")" -le "$am_zcopy_max" ] && amz=$(med "oct:am_lat_$s.p50")
        amb=-
        [ "$s" = 8k ] && amb=$(med "oct:am_lat_bmax.p50")
        sp=$(med "sp_lat_$s")
        printf '%-34s %9s %6s %9s %9s %9s %9s %9s\n' \
            "tcp rndv_lat $(human "$s") p50 [usec]" "$(fmt "$rndv" 2)" - \
            "$(fmt "$amz" 2)" "$(fmt "$amb" 2)" "$(fmt "$sp" 2)" \
            "$(ratio "$rndv" "$amz")" "$(ratio "$rndv" "$sp")"
    done
    echo "# am bcopy: $bsz B (the largest AM bcopy of openuct's tcp) in the 8 KiB row,"
    echo "#   none above; am zcopy: at most $zmax (uct_info -d -t tcp), none above;"
    echo "#   sockperf: 1 MiB - 1 B for 1 MiB (its largest message); UCX: 1.13's tcp has"
    echo "#   no get zcopy, so the harness built against it cannot run rndv_lat (-)"
    printf '%-46s %10s %10s %8s %-10s %s\n' metric openuct baseline ratio target result
    own_row "target: rndv 8 KiB <= 2x am_lat zcopy 8 KiB" rndv_lat_8k p50 am_lat_8k p50 2 "<=" 2.0
}

# The rows of posix, sysv and cma. Each is set against UCX's transport
# of the same name through the same harness (oct/UCX)
sm_rows() {
    local t
    for t in "${sm_fifo_tls[@]}"; do
        row "$t am_lat short 8 B p50 [usec]" "${t}_am_lat" p50 3 sm_lat ucx "<=" 1.0
        row "$t am_lat short 8 B p50 vs floor" "${t}_am_lat" p50 3 sm_lat floor "<=" 1.5
        row "$t am_lat short 8 B p50 vs floor -L 2" "${t}_am_lat" p50 3 sm_lat2 floor "<=" 1.5
        row "$t am_bw short 8 B [msg/s]" "${t}_am_rate" rate 0 sm_rate ucx ">=" 1.0
        row "$t am_bw bcopy 8 KiB [MiB/s]" "${t}_am_bw_8k" bw 1 mc_bw_8k ucx ">=" 1.0
    done
    if [ $do_cma -eq 1 ]; then
        for t in put get; do
            row "cma ${t}_bw zcopy 1 MiB [MiB/s]" "cma_${t}_bw_1m" bw 1 mc_bw_1m ucx ">=" 0.95
            row "cma ${t}_bw zcopy 1 MiB vs memcpy" "cma_${t}_bw_1m" bw 1 mc_bw_1m floor ">=" 0.8
        done
    fi
}

# The per-round lines of posix, sysv and cma
sm_rounds_lines() {
    local t i
    if [ ${#sm_fifo_tls[@]} -gt 0 ]; then
        rounds_line "sm_floor ping-pong 8 B p50" sm_lat 3
        rounds_line "sm_floor -L 2 ping-pong 8 B p50" sm_lat2 3
        rounds_line "sm_floor ring 8 B [msg/s]" sm_rate 0
        rounds_line "memcpy 8 KiB [MiB/s]" mc_bw_8k 1
    fi
    for t in "${sm_fifo_tls[@]}"; do
        for i in "${impls[@]}"; do rounds_line "$i $t am_lat 8 B p50" "$i:${t}_am_lat.p50" 3; done
        for i in "${impls[@]}"; do rounds_line "$i $t am_bw 8 B [msg/s]" "$i:${t}_am_rate.rate" 0; done
        for i in "${impls[@]}"; do rounds_line "$i $t am_bw bcopy 8 KiB" "$i:${t}_am_bw_8k.bw" 1; done
    done
    if [ $do_cma -eq 1 ]; then
        rounds_line "memcpy 1 MiB [MiB/s]" mc_bw_1m 1
        for t in put get; do
            for i in "${impls[@]}"; do rounds_line "$i cma ${t}_bw 1 MiB" "$i:cma_${t}_bw_1m.bw" 1; done
        done
    fi
}

print_table() {
    local i s
    echo
    echo "# openuct against UCX ${ucx_version:-(not run)} and the floor," \
        "one harness (src/tools/perf)"
    echo "# $(uname -sr), $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "# server on CPU $server_cpu, client on CPU $client_cpu, each under setsid;" \
        "median of $rounds interleaved round(s)$([ "$quick" -eq 1 ] && echo ", quick"); ${elapsed} s"
    echo "# load average before the run: ${load:-unknown}"
    echo "# columns: floor = the raw floor of the row:"
    if [ $do_tcp -eq 1 ]; then
        echo "#   tcp: sockperf (raw TCP; busy-poll ping-pong 14 B, throughput);"
    fi
    if [ ${#sm_fifo_tls[@]} -gt 0 ]; then
        echo "#   ${sm_fifo_tls[*]}: sm_floor (one cache line between the two CPUs: ping-pong,"
        echo "#   and a 64-line ring acked every 32), memcpy_floor at 8 KiB for bcopy;"
        echo "#   'floor -L 2': the ping-pong with one line per direction, each written by"
        echo "#   one side only, as a message into the other's FIFO must be;"
    fi
    if [ $do_cma -eq 1 ]; then
        echo "#   cma: memcpy_floor at 1 MiB (one process, in cache);"
    fi
    echo "#   ucx_perftest = UCX's own harness; UCX = uct_perftest built against UCX;"
    echo "#   openuct = uct_perftest on openuct. Latency in usec (p50 of half a round"
    echo "#   trip unless said), rate in msg/s, bandwidth in MiB/s."
    echo "#"
    table_header
    if [ $do_tcp -eq 1 ]; then
        row "tcp am_lat short 8 B p50 [usec]" am_lat p50 2 sp_lat floor "<=" 1.10
        row "tcp am_lat 8 B p50, to iface [usec]" am_lat_iface p50 2 sp_lat
        row "tcp am_bw short 8 B [msg/s]" am_rate rate 0 sp_tp_14 floor ">=" 1.4
        row "tcp put_lat short 8 B p50 [usec]" put_lat p50 2 -
        row "tcp put_bw zcopy 1 MiB [MiB/s]" put_bw_1m bw 1 sp_bw_1048575 floor ">=" 0.95
        row "tcp am_bw zcopy 64 KiB [MiB/s]" am_bw_64k bw 1 sp_bw_65536 floor ">=" 0.95
        row "tcp am_lat bcopy 1 KiB p50 [usec]" am_lat_1k p50 2 -
    fi
    if [ $do_self -eq 1 ]; then
        row "self am_lat 8 B p50, 1 msg/2, -B16 [usec]" self_am_lat1 p50 3 - abs "<=" 0.005
        row "self am_lat 8 B avg, 1 msg/2, -B16 [usec]" self_am_lat1 avg 4 - abs "<=" 0.006
        row "self am_lat 8 B avg, 1 msg/2 vs UCX" self_am_lat1 avg 4 - ucx "<=" 1.0
        row "self am_lat short 8 B p50, -B16 [usec]" self_am_lat p50 3 -
        row "self am_lat short 8 B avg, -B16 [usec]" self_am_lat avg 4 - ucx "<=" 1.0
        row "self am_bw short 8 B [msg/s]" self_am_rate rate 0 - ucx ">=" 1.0
    fi
    sm_rows
    if [ $do_tcp -eq 1 ]; then
        row "tcp idle connected ep, heap [B/ep]" ep_heap avg 0 - abs "<=" 160
        row "tcp idle connected ep, heap vs UCX" ep_heap avg 0 - ucx "<=" 1.0
        echo "#"
        echo "# tcp GET (openuct) against AM latency and PUT bandwidth of the same size:"
        echo "# get_lat is one whole get (request and data), so it is set against an"
        echo "# am_lat round trip (the message there and back) and, for information, one way"
        printf '%-46s %10s %10s %8s %-10s %s\n' metric openuct baseline ratio target result
        for i in 1k 8k 64k; do
            case $i in 1k) m=bcopy ;; *) m=zcopy ;; esac
            own_row "get_lat zcopy $i / am_lat $m RTT" "get_lat_$i" p50 "am_lat_$i" rtt 2 "<=" 1.2
            own_row "get_lat zcopy $i / am_lat $m one-way" "get_lat_$i" p50 "am_lat_$i" p50 2 "<=" 1.2
        done
        for i in 8k 64k; do
            own_row "get_bw zcopy $i / put_bw zcopy $i" "get_bw_$i" bw "put_bw_$i" bw 1 ">=" 0.9
        done
    fi
    [ $do_rndv -eq 1 ] && rndv_table
    echo "#"
    echo "# n/a: that implementation cannot run the test (UCX 1.13's tcp has no put"
    echo "# short or get zcopy; openuct's build may lack posix, sysv or cma: uct_info -d);"
    echo "# fail: the run failed (rerun with -o DIR for the logs)"
    echo "#"
    echo "# per round (openuct / UCX through the harness / ucx_perftest):"
    if [ $do_tcp -eq 1 ]; then
        rounds_line "sockperf ping-pong 14 B p50" sp_lat 2
        for i in "${impls[@]}"; do rounds_line "$i tcp am_lat 8 B p50" "$i:am_lat.p50" 2; done
        rounds_line "sockperf throughput 14 B [msg/s]" sp_tp_14 0
        for i in "${impls[@]}"; do rounds_line "$i tcp am_bw 8 B [msg/s]" "$i:am_rate.rate" 0; done
        rounds_line "sockperf 1 MiB-1 [MiB/s]" sp_bw_1048575 1
        for i in "${impls[@]}"; do rounds_line "$i tcp put_bw 1 MiB" "$i:put_bw_1m.bw" 1; done
        rounds_line "sockperf 64 KiB [MiB/s]" sp_bw_65536 1
        for i in "${impls[@]}"; do rounds_line "$i tcp am_bw 64 KiB" "$i:am_bw_64k.bw" 1; done
    fi
    if [ $do_rndv -eq 1 ]; then
        for s in "${rndv_sizes[@]}"; do
            rounds_line "oct tcp rndv_lat $(human "$s") p50" "oct:rndv_lat_$s.p50" 2
            [ "$(bytes "$s")" -le "$am_zcopy_max" ] &&
                rounds_line "oct tcp am_lat zcopy $(human "$s") p50" "oct:am_lat_$s.p50" 2
            [ "$s" = 8k ] &&
                rounds_line "oct tcp am_lat bcopy $(rndv_bcopy_size) B p50" "oct:am_lat_bmax.p50" 2
            rounds_line "sockperf ping-pong $(sp_size "$s") B p50" "sp_lat_$s" 2
        done
    fi
    if [ $do_self -eq 1 ]; then
        for i in "${impls[@]}"; do rounds_line "$i self am_lat avg" "$i:self_am_lat.avg" 4; done
        for i in "${impls[@]}"; do rounds_line "$i self am_bw [msg/s]" "$i:self_am_rate.rate" 0; done
    fi
    sm_rounds_lines
    echo "# targets: $n_passed passed, $n_missed missed"
}


# ------------------------------------------------------------------ sweep

# Sizes of the curves, and where each operation's data mode changes
sweep_sizes="8 32 128 512 2048 8192 32768 131072 524288 2097152 4194304"
sweep_small="8,32,128,512,2k"     # AM short
sweep_mid_tcp="8k,32k"            # AM zcopy (both libraries: up to 64 KiB)
sweep_mid_self="8k"               # AM bcopy (both libraries: up to 8 KiB)
sweep_all="8,32,128,512,2k,8k,32k,128k,512k,2m,4m"
sweep_low="8,32,128,512,2k,8k,32k"
sweep_high="128k,512k,2m,4m"
sweep_sm_short="8,32"             # posix, sysv: AM short (UCX 1.13: up to 100 B)
sweep_sm_bcopy="128,512,2k,8k"    # AM bcopy (UCX 1.13: up to 8256 B)

# sweep_csv IMPL TL SERIES LOG: appends the rows of a uct_perftest CSV
# log as "impl,series,size,latency_usec,msg_per_sec,mib_per_sec"
sweep_csv() {
    local label=openuct
    [ "$1" = ucx ] && label="UCX ${ucx_version:-}"
    awk -F, -v i="$label" -v s="$3" '$1 != "test" && NF >= 8 {
        print i "," s "," $3 "," $5 "," $8 "," $7 }' "$4" >>"$csv"
}

# sweep_run IMPL TL SERIES ARGS...: one uct_perftest run with a size list
sweep_run() {
    local impl=$1 tl=$2 series=$3 log
    shift 3
    log=$work/sweep-$tl-$impl-$series-$RANDOM.log
    if try_run "$impl" "$log" "$tl" "$@"; then
        sweep_csv "$impl" "$tl" "$series" "$log"
    else
        note "sweep: $impl $tl $* gave no figures (see -o logs)"
    fi
}

sweep_tcp() {
    local impl m log s n
    for impl in "${impls[@]}"; do
        [ "$impl" = uxp ] && continue
        note "sweep: tcp, $impl"
        sweep_run "$impl" tcp am_lat -t am_lat -D short -s "$sweep_small" -n 5000 -w 500
        sweep_run "$impl" tcp am_lat -t am_lat -D zcopy -s "$sweep_mid_tcp" -n 5000 -w 500
        sweep_run "$impl" tcp put_lat -t put_lat -D zcopy -s "$sweep_low" -n 5000 -w 500
        sweep_run "$impl" tcp put_lat -t put_lat -D zcopy -s "$sweep_high" -n 300 -w 30
        sweep_run "$impl" tcp am_bw -t am_bw -D short -s "$sweep_small" -n 100000 -w 10000
        sweep_run "$impl" tcp am_bw -t am_bw -D zcopy -s "$sweep_mid_tcp" -n 20000 -w 2000
        sweep_run "$impl" tcp put_bw -t put_bw -D zcopy -s "$sweep_low" -n 20000 -w 2000
        sweep_run "$impl" tcp put_bw -t put_bw -D zcopy -s "$sweep_high" -n 1000 -w 100
    done

    # the floor: sockperf ping-pong (latency) and throughput (rate), one
    # size at a time; 14 B stands for 8, 1 MiB - 1 for 1 MiB and above
    note "sweep: tcp, sockperf"
    start_server "$work/sweep-sockperf-server.log" sockperf server --tcp \
        -i 127.0.0.1 -p @PORT@ --nonblocked -m 1048575 ||
        { note "sweep: the sockperf server did not start"; return; }
    for s in $sweep_sizes; do
        m=$s
        [ "$m" -lt 14 ] && m=14
        [ "$m" -gt 1048575 ] && continue
        log=$work/sweep-sockperf-pp-$m.log
        run_client "$log" sockperf ping-pong --tcp -i 127.0.0.1 \
            -p "$server_port" -m "$m" -t 1 --nonblocked
        n=$(client_output "$log" | awk '/percentile 50\.000 =/ { print $NF; exit }')
        [ -n "$n" ] && echo "sockperf,ping-pong,$s,$n,," >>"$csv"
        log=$work/sweep-sockperf-tp-$m.log
        run_client "$log" sockperf throughput --tcp -i 127.0.0.1 \
            -p "$server_port" -m "$m" -t 1
        n=$(client_output "$log" |
            awk '/Total of [0-9]+ messages sent in/ {
                     for (i = 1; i <= NF; i++) {
                         if ($i == "of") n = $(i + 1)
                         if ($i == "in") t = $(i + 1)
                     }
                     if (t > 0) printf "%.1f\n", n / t
                     exit
                 }')
        [ -n "$n" ] && awk -v s="$s" -v m="$m" -v r="$n" 'BEGIN {
            printf "sockperf,throughput,%s,,%s,%.1f\n", s, r, r * m / 1048576 }' >>"$csv"
    done
    finish_server 0
}

sweep_self() {
    local impl
    for impl in "${impls[@]}"; do
        [ "$impl" = uxp ] && continue
        note "sweep: self, $impl"
        sweep_run "$impl" self am_lat -t am_lat -D short -s "$sweep_small" -n 1000000 -w 100000
        sweep_run "$impl" self am_lat -t am_lat -D bcopy -s "$sweep_mid_self" -n 100000 -w 10000
        sweep_run "$impl" self put_lat -t put_lat -D bcopy -s "$sweep_low" -n 100000 -w 10000
        sweep_run "$impl" self put_lat -t put_lat -D bcopy -s "$sweep_high" -n 2000 -w 200
        sweep_run "$impl" self am_bw -t am_bw -D short -s "$sweep_small" -n 1000000 -w 100000
        sweep_run "$impl" self am_bw -t am_bw -D bcopy -s "$sweep_mid_self" -n 100000 -w 10000
        sweep_run "$impl" self put_bw -t put_bw -D bcopy -s "$sweep_low" -n 100000 -w 10000
        sweep_run "$impl" self put_bw -t put_bw -D bcopy -s "$sweep_high" -n 2000 -w 200
    done
    sweep_memcpy "$sweep_all"
}

# sweep_sm_fifo TL: posix or sysv, AM 8 B - 8 KiB (their puts reach
# only memory their md allocated, which the harness does not use); the
# floors are sm_floor at 8 B and memcpy
sweep_sm_fifo() {
    local tl=$1 impl
    for impl in "${impls[@]}"; do
        [ "$impl" = uxp ] && continue
        note "sweep: $tl, $impl"
        sweep_run "$impl" "$tl" am_lat -t am_lat -D short -s "$sweep_sm_short" -n 200000 -w 20000
        sweep_run "$impl" "$tl" am_lat -t am_lat -D bcopy -s "$sweep_sm_bcopy" -n 200000 -w 20000
        sweep_run "$impl" "$tl" am_bw -t am_bw -D short -s "$sweep_sm_short" -n 2000000 -w 200000
        sweep_run "$impl" "$tl" am_bw -t am_bw -D bcopy -s "$sweep_sm_bcopy" -n 500000 -w 50000
    done
    sweep_sm_floor
    sweep_memcpy "8,32,128,512,2k,8k"
}

# sweep_cma: PUT and GET zcopy, 8 B - 4 MiB; the floor is memcpy
sweep_cma() {
    local impl
    for impl in "${impls[@]}"; do
        [ "$impl" = uxp ] && continue
        note "sweep: cma, $impl"
        sweep_run "$impl" cma put_lat -t put_lat -D zcopy -s "$sweep_low" -n 20000 -w 2000
        sweep_run "$impl" cma put_lat -t put_lat -D zcopy -s "$sweep_high" -n 500 -w 50
        sweep_run "$impl" cma get_lat -t get_lat -D zcopy -s "$sweep_low" -n 20000 -w 2000
        sweep_run "$impl" cma get_lat -t get_lat -D zcopy -s "$sweep_high" -n 500 -w 50
        sweep_run "$impl" cma put_bw -t put_bw -D zcopy -s "$sweep_low" -n 50000 -w 5000
        sweep_run "$impl" cma put_bw -t put_bw -D zcopy -s "$sweep_high" -n 1000 -w 100
        sweep_run "$impl" cma get_bw -t get_bw -D zcopy -s "$sweep_low" -n 50000 -w 5000
        sweep_run "$impl" cma get_bw -t get_bw -D zcopy -s "$sweep_high" -n 1000 -w 100
    done
    sweep_memcpy "$sweep_all"
}

# sweep_sm_floor: sm_floor's ping-pong latency and ring rate at 8 B
sweep_sm_floor() {
    local log=$work/sweep-sm_floor-$RANDOM.log
    if [ ! -x "$sm_floor" ]; then
        note "sweep: no $sm_floor; no cache-line floor"
        return
    fi
    note "sweep: sm_floor"
    run_client "$log" "$sm_floor" -c "$server_cpu,$client_cpu"
    awk -F, '$1 == "am_lat" && $2 == "floor" { lat = $5 }
             $1 == "am_bw" && $2 == "floor" { rate = $8; bw = $7 }
             END { if (lat != "" || rate != "") print "sm_floor,line,8," lat "," rate "," bw }' \
        "$log" >>"$csv"
}

# sweep_memcpy SIZES: memcpy_floor's curve
sweep_memcpy() {
    local log=$work/sweep-memcpy-$RANDOM.log
    if [ ! -x "$memcpy_floor" ]; then
        note "sweep: no $memcpy_floor; no memcpy floor"
        return
    fi
    note "sweep: memcpy"
    run_client "$log" "$memcpy_floor" -s "$1"
    awk -F, 'NR > 1 { print "memcpy,copy," $1 "," $2 "," $3 "," $4 }' "$log" >>"$csv"
}

# sweep_plot TL TITLE: TL's CSV drawn to TL.png
sweep_plot() {
    "$top/contrib/bench/plot_curves.sh" "$csv" "$out_dir/$1.png" "$2" ||
        note "no curves for $1"
}

sweep_main() {
    local t
    out_dir=${keep_dir:-$builddir/curves}
    mkdir -p "$out_dir" || die "cannot create $out_dir"
    keep_dir=""         # the CSV and PNG files are the output
    if [ $do_tcp -eq 1 ]; then
        csv=$out_dir/tcp.csv
        echo "impl,series,size,latency_usec,msg_per_sec,mib_per_sec" >"$csv"
        sweep_tcp
        sweep_plot tcp "tcp over loopback: openuct, UCX ${ucx_version:-}, sockperf ($(nproc) CPUs, $(date +%F))"
    fi
    if [ $do_self -eq 1 ]; then
        csv=$out_dir/self.csv
        echo "impl,series,size,latency_usec,msg_per_sec,mib_per_sec" >"$csv"
        sweep_self
        sweep_plot self "self (in-process): openuct, UCX ${ucx_version:-}, memcpy ($(nproc) CPUs, $(date +%F))"
    fi
    for t in "${sm_fifo_tls[@]}"; do
        csv=$out_dir/$t.csv
        echo "impl,series,size,latency_usec,msg_per_sec,mib_per_sec" >"$csv"
        sweep_sm_fifo "$t"
        sweep_plot "$t" "$t (shared-memory FIFO, CPUs $server_cpu and $client_cpu): openuct, UCX ${ucx_version:-}, sm_floor, memcpy ($(nproc) CPUs, $(date +%F))"
    done
    if [ $do_cma -eq 1 ]; then
        csv=$out_dir/cma.csv
        echo "impl,series,size,latency_usec,msg_per_sec,mib_per_sec" >"$csv"
        sweep_cma
        sweep_plot cma "cma (process_vm_writev/readv, CPUs $server_cpu and $client_cpu): openuct, UCX ${ucx_version:-}, memcpy ($(nproc) CPUs, $(date +%F))"
    fi
    note "CSV and PNG files in $out_dir"
}

# -------------------------------------------------------------------- run

if [ $sweep -eq 1 ]; then
    sweep_main
    exit $?
fi

note "openuct: $perftest"
[ $use_ucx -eq 1 ] && note "UCX $ucx_version from $ucx_root: $ucx_harness and ucx_perftest"
[ $do_tcp -eq 1 ] && note "sockperf $(sockperf --version 2>&1 | awk '/version/ { print $NF; exit }')"
note "$rounds round(s)$([ "$quick" -eq 1 ] && echo ", quick"), server on CPU $server_cpu, client on CPU $client_cpu"

load=$(load_average)
start=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
    if [ $do_tcp -eq 1 ]; then
        note "round $r/$rounds: sockperf"
        sockperf_round "$r"
        note "round $r/$rounds: tcp"
        tcp_round "$r"
        if [ $do_rndv -eq 1 ]; then
            note "round $r/$rounds: tcp rendezvous"
            rndv_round "$r"
        fi
        mem_round "$r"
    fi
    if [ $do_self -eq 1 ]; then
        note "round $r/$rounds: self"
        self_round "$r"
    fi
    if [ ${#sm_tls[@]} -gt 0 ]; then
        note "round $r/$rounds: ${sm_tls[*]}"
        sm_round "$r"
    fi
done
elapsed=$(($(date +%s) - start))

# sockperf bandwidth in MiB/s from its message rate
for m in 65536 1048575; do
    for v in ${vals[sp_tp_$m]:-}; do
        if is_number "$v"; then
            record "sp_bw_$m" "$(awk -v x="$v" -v m="$m" 'BEGIN { printf "%.1f", x * m / 1048576 }')"
        else
            record "sp_bw_$m" "$v"
        fi
    done
done

print_table

# Nothing measured for openuct means the comparison could not run at all
have=0
failed=0
for k in "${!vals[@]}"; do
    [[ $k == oct:* ]] || continue
    for v in ${vals[$k]}; do
        is_number "$v" && have=1
        [ "$v" = fail ] && failed=1
    done
done
if [ $have -eq 0 ] && [ $failed -eq 0 ]; then
    die "openuct could run none of the tests: its build lacks the transports asked (uct_info -d)"
fi
[ $have -eq 1 ] || die "openuct's uct_perftest produced no result; rerun with -o DIR and read its logs"
exit 0
