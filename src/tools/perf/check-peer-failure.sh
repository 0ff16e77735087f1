#!/bin/sh
#
# uct_perftest over tcp/lo with a peer that dies or stops, run as a user
# runs it: a server and a client process, each in the background.
#   check-peer-failure.sh BUILDDIR
#  1. the server is SIGKILLed mid-run (am_bw, am_lat, put_lat): the
#     client exits 1 within 5 s with one "peer failed" line;
#  2. the client is SIGKILLed (am_bw, am_lat, put_lat, put_bw): the
#     server exits 1 the same way;
#  3. the server is SIGSTOPped under a client with -T 2 (am_lat, put_lat,
#     am_bw): the client exits 1 within 5 s with the -T line; once the
#     server continues it sees the client gone and exits 1;
#  4. the client of put_bw is SIGSTOPped under a server with -T 2, which
#     waits in a barrier meanwhile: the server exits 1 with the -T line;
#  5. a put_bw run during which the server waits in a barrier for longer
#     than its -T 1 ends well (the client's heartbeats keep it waiting);
#  6. rndv_lat (register, rkey in an AM, GET zcopy, AM back, deregister,
#     every message checked) of 8 KiB, 64 KiB and 1 MiB, connected to the
#     endpoint and to the interface: both exit 0 with three rows; and the
#     server killed during it, the client exits 1 as in 1.
# Every wait is bounded: a hang fails the check, and whatever is left is
# killed on exit. Detection times are printed, and judged only against
# the bounds above.

. "$(dirname "$0")/check-lib.sh"

builddir=${1:?usage: check-peer-failure.sh BUILDDIR}
tl_args="-x tcp -d lo"
detect_limit=5    # seconds from the failure to the survivor's exit
start_limit=15    # seconds for a run to start measuring
check_begin check-peer-failure "$builddir"

# Starts a server with options $*; every step needs one, so without it
# the check ends here
need_server() {
    start_server "$@" && return 0
    fail "no server could listen (last try port $port)"
    check_end
}

# Waits until the client reports progress: the run is measuring
wait_measuring() {
    deadline=$(($(now_ms) + start_limit * 1000))
    while ! grep -q " operations, " "$work/client.err" 2>/dev/null; do
        if ! kill -0 "$client" 2>/dev/null ||
           [ "$(now_ms)" -ge "$deadline" ]; then
            return 1
        fi
        sleep 0.05
    done
    return 0
}

# check_survivor NAME PID ERRFILE PATTERN START_MS: PID exits 1 within
# the limit, and ERRFILE holds exactly one line besides progress reports,
# matching PATTERN (grep -E)
check_survivor() {
    name=$1 pid=$2 errfile=$3 pattern=$4 start=$5
    wait_exit "$pid" "$detect_limit"
    elapsed=$(($(now_ms) - start))
    other=$(error_lines "$errfile")
    if [ "$rc" != 1 ]; then
        fail "$name: exit code $rc, expected 1 within $detect_limit s"
    elif [ "$(printf '%s\n' "$other" | grep -c .)" -ne 1 ]; then
        fail "$name: expected one error line on stderr"
    elif ! printf '%s\n' "$other" | grep -Eq "$pattern"; then
        fail "$name: the error line does not match '$pattern'"
    else
        printf 'PASS: %s: exit 1 after %s: %s\n' "$name" \
            "$(seconds "$elapsed")" "$other"
        return 0
    fi
    return 1
}
peer_failed="^uct_perftest: peer failed during"
on_tl="over tcp/lo: "
no_progress="^uct_perftest: no progress from the peer for 2 s during"
ask_alive="over tcp/lo; is it alive\\? \\(-T\\)$"
long_run="-n 100000000 -w 100"

if ! "$uct_info" -d -t tcp 2>/dev/null | grep -q "Device: lo$"; then
    echo "SKIP: check-peer-failure: no tcp/lo here"
    exit 0
fi

# 1. The server dies: the client notices
for test in am_bw am_lat put_lat; do
    need_server
    start_client -t "$test" $long_run
    if ! wait_measuring; then
        fail "kill server, $test: the run did not start"
        continue
    fi
    kill -KILL "$server"
    t0=$(now_ms)
    wait "$server" 2>/dev/null
    check_survivor "kill server, $test: client" "$client" \
        "$work/client.err" "$peer_failed $test .*$on_tl" "$t0"
done

# 2. The client dies: the server notices (put_bw: in the end barrier)
for test in am_bw am_lat put_lat put_bw; do
    need_server
    start_client -t "$test" $long_run
    if ! wait_measuring; then
        fail "kill client, $test: the run did not start"
        continue
    fi
    kill -KILL "$client"
    t0=$(now_ms)
    wait "$client" 2>/dev/null
    check_survivor "kill client, $test: server" "$server" \
        "$work/server.err" "$peer_failed $test .*$on_tl" "$t0"
done

# 3. The server stops: -T ends the client; the server, continued, sees
#    the client gone. am_bw sends 1 KiB messages so that the socket
#    buffers, which take sends while the server is stopped, fill quickly.
for args in "am_lat" "put_lat" "am_bw -D bcopy -s 1k"; do
    test=${args%% *}
    need_server
    start_client -T 2 -t $args $long_run
    if ! wait_measuring; then
        fail "stop server, $test: the run did not start"
        continue
    fi
    kill -STOP "$server"
    t0=$(now_ms)
    check_survivor "stop server, $test: client" "$client" \
        "$work/client.err" "$no_progress $test .*$ask_alive" "$t0"
    kill -CONT "$server"
    t0=$(now_ms)
    check_survivor "stop server, $test: continued server" "$server" \
        "$work/server.err" "$peer_failed $test .*$on_tl" "$t0"
done

# 4. The client of put_bw stops while the server waits in the barrier
need_server -T 2
start_client -t put_bw $long_run
if wait_measuring; then
    kill -STOP "$client"
    t0=$(now_ms)
    check_survivor "stop client, put_bw: server" "$server" \
        "$work/server.err" "$no_progress put_bw .*$ask_alive" "$t0"
    kill -KILL "$client"
    wait "$client" 2>/dev/null
else
    fail "stop client, put_bw: the run did not start"
fi

# 5. A server with -T 1 waits in the barrier while the client measures
need_server -T 1
t0=$(now_ms)
start_client -t put_bw -D zcopy -s 1m -n 1000 -w 10
wait_pair 60 "$detect_limit"
elapsed=$(($(now_ms) - t0))
if [ "$client_rc" != 0 ] || [ "$server_rc" != 0 ]; then
    fail "put_bw with a server -T 1: client exit $client_rc, server $server_rc"
else
    printf 'PASS: put_bw with a server -T 1: both exit 0 after %s\n' \
        "$(seconds "$elapsed")"
fi

# 6. The rendezvous pattern, two processes
for conn in ep iface; do
    need_server
    start_client -t rndv_lat -D zcopy -C "$conn" -s 8k,64k,1m -n 300 -w 30
    wait_pair 60 "$detect_limit"
    rows=$(awk '$1 == "rndv_lat" && $2 == "zcopy" && $5 > 0 && $5 <= $6' \
        "$work/client.out" | wc -l)
    if [ "$client_rc" != 0 ] || [ "$server_rc" != 0 ] ||
       [ "$rows" -ne 3 ]; then
        fail "rndv_lat -C $conn: client exit $client_rc, server $server_rc," \
            "$rows rows"
    else
        printf 'PASS: rndv_lat -C %s: both exit 0, p50 %s\n' "$conn" \
            "$(awk '$1 == "rndv_lat" { printf "%s %s us; ", $3, $6 }' \
                "$work/client.out")"
    fi
done
need_server
start_client -t rndv_lat -D zcopy -s 64k $long_run
if wait_measuring; then
    kill -KILL "$server"
    t0=$(now_ms)
    wait "$server" 2>/dev/null
    check_survivor "kill server, rndv_lat: client" "$client" \
        "$work/client.err" "$peer_failed rndv_lat .*$on_tl" "$t0"
else
    fail "kill server, rndv_lat: the run did not start"
fi

check_end
