#!/bin/bash
#
# make check-rxe: the verbs checks on the kernel's Soft-RoCE driver, all in
# one VM boot (test/rxe/run.sh):
#
#   1. ibv_devinfo               the rxe devices and their ports
#   2. ibv_rc_pingpong           rdma-core's RC ping-pong on rxe_lo
#   3. ibv_ud_pingpong           rdma-core's UD ping-pong on rxe_lo
#   4. ibv_rc_pingpong           rxe_v0 (server) <-> rxe_v1 over the veth pair
#   5. uct_info -d               our device listing of the same devices
#   6. gtest (verbs suites)      test/gtest/gtest --gtest_filter=$RXE_GTEST_FILTER,
#                                the transport suites on rxe_v0 sending from rxe_v1
#   7. uct_hello_world rc_verbs  server and client on rxe_lo, -i/-b/-z at
#                                11 bytes and at the limit
#   8. uct_hello_world rc_verbs  the same, server on rxe_v0, client on rxe_v1
#   9. uct_hello_world ud_verbs  7. over ud_verbs
#  10. uct_hello_world ud_verbs  8. over ud_verbs
#  11. uct_perftest rc_verbs     loopback on rxe_lo
#  12. uct_perftest rc_verbs     client/server on rxe_lo
#  13. uct_perftest rc_verbs     client/server, rxe_v1 (client) -> rxe_v0
#  14. uct_perftest ud_verbs     loopback on rxe_lo (its operations only)
#  15. uct_perftest ud_verbs     client/server on rxe_lo
#  16. uct_osc_check rc_verbs    test/stress/check-osc.sh: an MPI one-sided
#                                lock (the device's atomics) guarding PUTs and
#                                GETs up to 4 MiB, each flushed at once, 3
#                                origin processes on rxe_v1, the target on
#                                rxe_v0 (ud_verbs has no GET)
#  17. ud_verbs under netem      test/stress/uct_stream_check, server on
#                                rxe_v0, client on rxe_v1, netem on both
#                                veth ends: 100,000 AMs and PUTs at 5 % loss,
#                                25 % reordering, 2 % duplication, 1 ms
#                                delay; 64 endpoints at 1 % loss
#  18. tcp two_host with netem   test/tcp/two_host.sh (needs sch_netem)
#  19. ud_verbs scale            test/stress/check-ud-scale.sh: 1,000
#                                endpoints from 5 client processes
#                                (rxe_v1 and rxe_v0) to one server iface on
#                                rxe_v0, AM + PUT on each, a fifth of the
#                                clients SIGKILLed, their peer endpoints
#                                reclaimed
#
# usage: check-rxe.sh BUILDDIR        (on the host; boots the VM)
#        check-rxe.sh --guest BUILDDIR (inside the VM; runs the steps)
#
# Environment: RXE_GTEST_FILTER, RXE_PEER_DEVS (OPENUCT_TEST_PEER_DEVS of
# the gtest step, default rxe_v0:1=rxe_v1:1), RXE_STEPS (a bash regular
# expression: only the steps whose name matches run), RXE_TIMEOUT (seconds
# for the whole VM, default 1500), RXE_RUN_ARGS (more options for run.sh,
# e.g. --cache DIR), GTEST_EXTRA_ARGS (more gtest options).
# Exit status: 0 all passed, 1 a step failed, 77 the VM could not start.

set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
: "${RXE_GTEST_FILTER:=uct_ib*:uct_rc*:*rc_verbs*:*ud_verbs*:*ib_md*:*rcache*}"
RXE_PEER_DEVS=${RXE_PEER_DEVS-rxe_v0:1=rxe_v1:1}

if [ "${1:-}" != --guest ]; then
    builddir=$(cd "${1:-.}" && pwd) || exit 1
    start=$(date +%s)
    # shellcheck disable=SC2086
    bash "$here/run.sh" -t "${RXE_TIMEOUT:-1500}" ${RXE_RUN_ARGS:-} -- \
        bash "$here/check-rxe.sh" --guest "$builddir"
    rc=$?
    case $rc in
    0)   verdict="all steps passed" ;;
    77)  verdict="SKIPPED: the VM could not start" ;;
    124) verdict="FAILED: timeout" ;;
    *)   verdict="FAILED" ;;
    esac
    echo "check-rxe: $verdict ($(($(date +%s) - start)) s in all)"
    exit $rc
fi

# ---- inside the guest ----
builddir=$2
results=()
failed=0
logdir=$(mktemp -d /tmp/check-rxe.XXXXXX)

# step NAME TIMEOUT COMMAND...: runs one step, records its verdict
step() {
    local name=$1 limit=$2 t0 rc verdict
    shift 2
    if [ -n "${RXE_STEPS:-}" ] && ! [[ $name =~ $RXE_STEPS ]]; then
        return 0
    fi
    echo
    echo "==== check-rxe: $name"
    t0=$(date +%s)
    # The step runs in a shell of its own so that timeout can end it
    timeout -k 5 "$limit" bash -c '"$@"' step "$@"
    rc=$?
    case $rc in
    0)   verdict=PASS ;;
    77)  verdict=SKIP ;;
    124) verdict="FAIL (timeout after $limit s)" ; failed=1 ;;
    *)   verdict="FAIL (exit $rc)"; failed=1 ;;
    esac
    results+=("$(printf '%-36s %-26s %4d s' "$name" "$verdict" \
                 $(($(date +%s) - t0)))")
}

# A server/client pair of an rdma-core example program: pingpong PROG
# PORT SERVER_DEV CLIENT_DEV SERVER_ADDR [ARGS]; the server starts first,
# the client waits until it listens
pingpong() {
    local prog=$1 port=$2 sdev=$3 cdev=$4 addr=$5 spid crc src=0
    shift 5
    command -v "$prog" >/dev/null ||
        { echo "$prog not found (Debian package ibverbs-utils)"; return 1; }
    stdbuf -oL "$prog" -d "$sdev" -g 1 -p "$port" "$@" \
        >"$logdir/$prog.server" 2>&1 &
    spid=$!
    for _ in $(seq 50); do
        grep -q ":$(printf '%04X' "$port") " /proc/net/tcp /proc/net/tcp6 2>/dev/null &&
            break
        sleep 0.1
    done
    stdbuf -oL "$prog" -d "$cdev" -g 1 -p "$port" "$@" "$addr"
    crc=$?
    wait $spid
    src=$?
    echo "-- server:"
    cat "$logdir/$prog.server"
    [ $crc -eq 0 ] && [ $src -eq 0 ]
}

# Across the veth pair: the packets must have crossed veth0
pingpong_pair() {
    local before after
    before=$(cat /sys/class/net/veth0/statistics/rx_packets)
    pingpong ibv_rc_pingpong 18517 rxe_v0 rxe_v1 10.78.0.1 -n 1000 -c || return 1
    after=$(cat /sys/class/net/veth0/statistics/rx_packets)
    echo "-- veth0 received $((after - before)) packets"
    [ $((after - before)) -ge 1000 ]
}

# The suites as filtered. With OPENUCT_TEST_PEER_DEVS=$RXE_PEER_DEVS the
# transport suites on rxe_v0 send from rxe_v1, so their packets cross
# veth0; a pair within rxe_v0 stays on lo, so veth0's count is the
# crossing traffic. If uct_am ran on rc_verbs/rxe_v0, it must show.
gtest_verbs() {
    local bin=$builddir/test/gtest/gtest before after rc
    [ -x "$bin" ] || { echo "$bin not built"; return 1; }
    before=$(cat /sys/class/net/veth0/statistics/rx_packets)
    # shellcheck disable=SC2086
    OPENUCT_TEST_PEER_DEVS=$RXE_PEER_DEVS \
        "$bin" --gtest_filter="$RXE_GTEST_FILTER" ${GTEST_EXTRA_ARGS:-} |
        tee "$logdir/gtest.log"
    rc=${PIPESTATUS[0]}
    after=$(cat /sys/class/net/veth0/statistics/rx_packets)
    echo "-- OPENUCT_TEST_PEER_DEVS=$RXE_PEER_DEVS:" \
         "veth0 received $((after - before)) packets"
    [ $rc -eq 0 ] || return $rc
    if [ "$RXE_PEER_DEVS" = rxe_v0:1=rxe_v1:1 ] &&
       grep -q '^\[       OK \] uct_am\..*/rc_verbs_rxe_v0_1 ' \
           "$logdir/gtest.log" &&
       [ $((after - before)) -lt 1000 ]; then
        echo "the rc_verbs suites on rxe_v0 ran, but fewer than 1000" \
             "packets crossed veth0"
        return 1
    fi
}

# A build-tree program itself rather than its libtool wrapper script,
# whose shell and sed cost about 2 s per start in the emulated guest
# (LD_LIBRARY_PATH, set below, finds the build's libraries)
direct() {
    local real
    real=$(dirname "$1")/.libs/$(basename "$1")
    if [ -x "$real" ]; then echo "$real"; else echo "$1"; fi
}

# The server's port: what it prints once it listens ("... port N"), or
# empty if it exits or stays silent for 10 s
server_port() {
    local log=$1 pid=$2 pattern=$3 port
    for _ in $(seq 100); do
        port=$(sed -n "s/$pattern/\\1/p" "$log")
        [ -n "$port" ] && { echo "$port"; return 0; }
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# examples/uct_hello_world over transport TL, two processes: hello_pair
# TL SERVER_DEV CLIENT_DEV SERVER_ADDR. Each of -i, -b and -z with the
# default text and at the mode's limit (-s max): both exit 0 with nothing
# on stderr, the client says what it sent and the server prints what it
# received (it exits 1 if the text is not the one expected).
hello_pair() {
    local tl=$1 sdev=$2 cdev=$3 addr=$4 hello flag mode size log spid
    local port src crc n line failed=0
    hello=$(direct "$builddir/examples/uct_hello_world")
    [ -x "$hello" ] || { echo "$hello not built"; return 1; }
    for flag in -i -b -z; do
        case $flag in
        -i) mode=am_short ;;
        -b) mode=am_bcopy ;;
        -z) mode=am_zcopy ;;
        esac
        for size in 11 max; do
            log=$logdir/hello-$tl$flag-$size
            timeout 30 "$hello" -t "$tl" -d "$sdev" -p 0 \
                >"$log.server" 2>"$log.server.err" &
            spid=$!
            port=$(server_port "$log.server" $spid \
                   '^waiting for a client on port \([0-9]*\)$')
            crc=255
            if [ -n "$port" ]; then
                timeout 30 "$hello" -t "$tl" -d "$cdev" -p "$port" \
                    -n "$addr" $flag -s $size \
                    >"$log.client" 2>"$log.client.err"
                crc=$?
            fi
            wait $spid
            src=$?
            n=$(sed -n "s/^sent \([0-9]*\) bytes with $mode over $tl\/$cdev\$/\1/p" \
                "$log.client" 2>/dev/null)
            line=$(grep "^received $n bytes: hello world" "$log.server")
            if [ $crc -eq 0 ] && [ $src -eq 0 ] && [ -n "$n" ] &&
               [ -n "$line" ] && [ ! -s "$log.server.err" ] &&
               [ ! -s "$log.client.err" ]; then
                echo "PASS $tl $mode -s $size, $cdev -> $sdev: $line"
            else
                echo "FAIL $tl $mode -s $size, $cdev -> $sdev: server" \
                     "exit $src, client exit $crc"
                tail -n 20 "$log".* 2>/dev/null | cat -v
                failed=1
            fi
        done
    done
    return $failed
}

# The same across the veth pair: hello_pair_veth TL; the packets must
# have crossed veth0
hello_pair_veth() {
    local before after
    before=$(cat /sys/class/net/veth0/statistics/rx_packets)
    hello_pair "$1" rxe_v0:1 rxe_v1:1 10.78.0.1 || return 1
    after=$(cat /sys/class/net/veth0/statistics/rx_packets)
    echo "-- veth0 received $((after - before)) packets"
    [ $((after - before)) -ge 6 ]
}

# Passes if $1 holds one result row of test $2 per size in $3 (comma
# separated), each with a positive latency and message rate
perf_rows_ok() {
    local out=$1 test=$2 sizes=$3 want rows
    want=$(echo "$sizes" | tr ',' '\n' | wc -l)
    # typical latency and message rate: bandwidth is printed with two
    # decimals, and 8-byte round trips on a loaded host round it to 0.00
    rows=$(awk -v t="$test" '$1 == t && $6 > 0 && $10 > 0' "$out" | wc -l)
    [ "$rows" -eq "$want" ]
}

# The uct_perftest runs of transport $1, one "TEST MODE SIZES" a line:
# only operations it offers (ud_verbs: no GET, no PUT zcopy)
perf_runs() {
    case $1 in
    rc_verbs)
        printf '%s\n' "am_lat short 8" "put_lat short 8" "am_bw short 8" \
            "am_bw bcopy 8,4096" "put_bw zcopy 8,65536" \
            "get_bw zcopy 8,65536" ;;
    ud_verbs)
        printf '%s\n' "am_lat short 8" "put_lat short 8" "am_bw short 8" \
            "am_bw bcopy 8,1024" "put_bw bcopy 8,1024" ;;
    *)
        echo "perf_runs: no runs for $1" >&2
        return 1 ;;
    esac
}

# uct_perftest over transport TL: perf_tl TL loopback DEV, or perf_tl TL
# pair SERVER_DEV CLIENT_DEV SERVER_ADDR (two processes; the server learns
# the test from the client). Every run must exit 0 and print its figures.
perf_tl() {
    local tl=$1 kind=$2 perf list runs run words test mode sizes args out
    local spid rc src port=13400 failed=0
    shift
    perf=$(direct "$builddir/src/tools/perf/uct_perftest")
    [ -x "$perf" ] || { echo "$perf not built"; return 1; }
    list=$(perf_runs "$tl") || return 1
    mapfile -t runs <<<"$list"
    for run in "${runs[@]}"; do
        read -r -a words <<<"$run"
        test=${words[0]} mode=${words[1]} sizes=${words[2]}
        args=(-t "$test" -D "$mode" -s "$sizes" -n 1000 -w 100)
        out=$logdir/perf-$tl-$kind-$test-$mode
        if [ "$kind" = loopback ]; then
            timeout 30 stdbuf -oL "$perf" -x "$tl" -d "$2" -l "${args[@]}" \
                >"$out" 2>&1
            rc=$?
            src=0
        else
            port=$((port + 1))
            timeout 30 "$perf" -x "$tl" -d "$2" -p $port \
                >"$out.server" 2>&1 &
            spid=$!
            timeout 30 stdbuf -oL "$perf" -x "$tl" -d "$3" -p $port \
                "${args[@]}" "$4" >"$out" 2>&1
            rc=$?
            wait $spid
            src=$?
        fi
        grep -v '^#' "$out"
        if [ $rc -ne 0 ] || [ $src -ne 0 ] ||
           ! perf_rows_ok "$out" "$test" "$sizes"; then
            echo "FAIL $tl $test $mode: exit $rc (server $src), or no" \
                 "figures"
            cat "$out"
            [ "$kind" = loopback ] || cat "$out.server"
            failed=1
        fi
    done
    return $failed
}

# Client/server across the veth pair: perf_tl_veth TL; the packets must
# have crossed veth0
perf_tl_veth() {
    local before after
    before=$(cat /sys/class/net/veth0/statistics/rx_packets)
    perf_tl "$1" pair rxe_v0:1 rxe_v1:1 10.78.0.1 || return 1
    after=$(cat /sys/class/net/veth0/statistics/rx_packets)
    echo "-- veth0 received $((after - before)) packets"
    [ $((after - before)) -ge 6000 ]
}

# uct_info -d must list the rxe devices with their port, GID, MTU and
# locality, and the md's registration statistics
uct_info_devices() {
    local out dev
    out=$("$builddir/src/tools/info/uct_info" -d 2>&1)
    echo "$out"
    for dev in rxe_lo rxe_v0 rxe_v1; do
        echo "$out" | grep -q "^# Memory domain: $dev\$" ||
            { echo "uct_info -d does not list $dev"; return 1; }
    done
    for pattern in 'port 1: rxe_lo:1, Ethernet, ACTIVE' \
                   'gid: ::ffff:127.0.0.1 (index 1' \
                   'gid: ::ffff:10.78.0.1 (index 1' 'mtu: 4096' 'mtu: 1024' \
                   'locality: ' 'registrations: cached, rcache ib_rxe_lo: hits'; do
        echo "$out" | grep -qF -- "$pattern" ||
            { echo "uct_info -d does not show '$pattern'"; return 1; }
    done
}

# The whole two_host check; here the netem run must not be skipped
tcp_netem() {
    local rc
    STREAM_CHECK=$builddir/test/tcp/tcp_stream_check \
    UCT_INFO=$builddir/src/tools/info/uct_info \
        bash "$srcdir/test/tcp/two_host.sh" 2>&1 | tee "$logdir/two_host.log"
    rc=$?
    [ $rc -eq 0 ] || return $rc
    grep -q '^PASS veth-netem' "$logdir/two_host.log" ||
        { echo "the netem stream did not run"; return 1; }
}

# qdisc_drops DEV: the packets netem on DEV dropped so far
qdisc_drops() {
    tc -s qdisc show dev "$1" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' |
        head -n 1
}

# test/stress/uct_stream_check over ud_verbs between two processes, server
# on rxe_v0, client on rxe_v1, while netem on both veth ends drops,
# delays, reorders and duplicates: stream_netem NAME QDISC CLIENT_ARGS...
# The server checks that every AM and PUT arrived exactly once, in order,
# every byte as sent; netem must have dropped packets both ways.
stream_netem() {
    local name=$1 qdisc=$2 sc log spid port crc src dev
    local -A drops
    shift 2
    sc=$builddir/test/stress/uct_stream_check
    [ -x "$sc" ] || { echo "$sc not built"; return 1; }
    log=$logdir/stream-$name
    for dev in veth0 veth1; do
        tc qdisc replace dev $dev root netem $qdisc ||
            { echo "tc qdisc netem on $dev failed"; return 1; }
        drops[$dev]=$(qdisc_drops $dev)
    done
    echo "-- $name: netem $qdisc on veth0 and veth1; client $*"
    "$sc" -t ud_verbs -d rxe_v0:1 -p 0 -e -T 60 >"$log.server" 2>&1 &
    spid=$!
    port=$(server_port "$log.server" $spid \
           '.*waiting for a client on port \([0-9]*\)$')
    crc=255
    if [ -n "$port" ]; then
        "$sc" -t ud_verbs -d rxe_v1:1 -p "$port" -e -T 60 "$@" 10.78.0.1 \
            >"$log.client" 2>&1
        crc=$?
    fi
    wait $spid
    src=$?
    for dev in veth0 veth1; do
        drops[$dev]=$(($(qdisc_drops $dev) - ${drops[$dev]}))
        tc qdisc del dev $dev root
    done
    cat "$log.client" "$log.server"
    echo "-- netem dropped ${drops[veth0]} packets on veth0," \
         "${drops[veth1]} on veth1"
    if [ $crc -ne 0 ] || [ $src -ne 0 ] ||
       ! grep -q '^OK .* messages .* endpoints$' "$log.server"; then
        echo "FAIL $name: client exit $crc, server exit $src"
        return 1
    fi
    if [ "${drops[veth0]}" -lt 10 ] || [ "${drops[veth1]}" -lt 10 ]; then
        echo "FAIL $name: netem dropped too little to test recovery"
        return 1
    fi
}

# The issue's two netem runs: 100,000 AMs and PUTs over one endpoint at 5 %
# loss, 25 % reordering, 2 % duplication and 1 ms delay; then 100,032 over
# 64 concurrent endpoints at 1 % loss, connected to the peer's iface
ud_netem() {
    stream_netem ud-netem-1 \
        "delay 1ms loss 5% reorder 25% duplicate 2%" \
        -c 1 -n 100000 -s 1k || return 1
    stream_netem ud-netem-64 "delay 1ms loss 1%" -c 64 -n 1563 -s 1k -C iface
}

# test/stress/check-osc.sh over TL, target on rxe_v0, origins on rxe_v1:
# the lock of an MPI one-sided library (compare-and-swap, fetch-and-add:
# the device's atomics on rc_verbs) guarding PUTs and GETs up to 4 MiB,
# each followed at once by a flush, three origin processes (rc_verbs
# connects to endpoints only)
osc_tl() {
    OSC_CHECK=$builddir/test/stress/uct_osc_check OSC_TL=$1 \
        OSC_TARGET_DEV=rxe_v0:1 OSC_ORIGIN_DEV=rxe_v1:1 OSC_HOST=10.78.0.1 \
        OSC_ITERS=${2:-60} bash "$srcdir/test/stress/check-osc.sh"
}

# test/stress/check-ud-scale.sh at 1,000 endpoints (10,000 and 50,000 are
# run by hand: test/stress/README.md has their tables): every AM
# and PUT verified, no error handler call on a surviving endpoint, the
# killed clients' peer endpoints reclaimed within 2 x UD_TIMEOUT; the
# figures (connect time, CREQ resends, heap per endpoint, kernel objects)
# are printed against their targets but do not fail the step
ud_scale() {
    bash "$srcdir/test/stress/check-ud-scale.sh" "$builddir" 1000
}

LD_LIBRARY_PATH=$builddir/src/uct/.libs:$builddir/src/ucs/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export builddir srcdir logdir RXE_GTEST_FILTER RXE_PEER_DEVS LD_LIBRARY_PATH
export -f pingpong pingpong_pair uct_info_devices gtest_verbs tcp_netem \
    direct server_port hello_pair hello_pair_veth perf_rows_ok perf_runs \
    perf_tl perf_tl_veth qdisc_drops stream_netem ud_netem osc_tl ud_scale

echo "check-rxe: kernel $(uname -r), build tree $builddir"
step "ibv_devinfo"                 60 ibv_devinfo -v -d rxe_lo
step "ibv_rc_pingpong (rxe_lo)"   120 \
    pingpong ibv_rc_pingpong 18515 rxe_lo rxe_lo 127.0.0.1 -n 1000 -c
step "ibv_ud_pingpong (rxe_lo)"   120 \
    pingpong ibv_ud_pingpong 18516 rxe_lo rxe_lo 127.0.0.1 -n 1000 -c
step "ibv_rc_pingpong (rxe_v0-v1)" 120 pingpong_pair
step "uct_info -d"                 60 uct_info_devices
step "gtest: verbs suites"        600 gtest_verbs
for tl in rc_verbs ud_verbs; do
    step "uct_hello_world $tl (rxe_lo)"    120 \
        hello_pair $tl rxe_lo:1 rxe_lo:1 127.0.0.1
    step "uct_hello_world $tl (rxe_v1-v0)" 120 hello_pair_veth $tl
done
step "uct_perftest rc_verbs loopback"       120 \
    perf_tl rc_verbs loopback rxe_lo:1
step "uct_perftest rc_verbs c/s (rxe_lo)"   120 \
    perf_tl rc_verbs pair rxe_lo:1 rxe_lo:1 127.0.0.1
step "uct_perftest rc_verbs c/s (rxe_v1-v0)" 120 perf_tl_veth rc_verbs
step "uct_perftest ud_verbs loopback"       120 \
    perf_tl ud_verbs loopback rxe_lo:1
step "uct_perftest ud_verbs c/s (rxe_lo)"   120 \
    perf_tl ud_verbs pair rxe_lo:1 rxe_lo:1 127.0.0.1
step "uct_osc_check rc_verbs (rxe_v1-v0)" 300 osc_tl rc_verbs
step "ud_verbs streams under netem" 600 ud_netem
step "tcp two_host with netem"    400 tcp_netem
step "ud_verbs scale (1k eps)" 240 ud_scale

echo
echo "==== check-rxe summary (in the VM)"
printf '%s\n' "${results[@]}"
rm -rf "$logdir"
exit $failed
