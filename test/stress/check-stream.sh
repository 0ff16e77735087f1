#!/bin/bash
#
# uct_stream_check over tcp on loopback, client and server processes:
#   1. one endpoint and 64 endpoints, connected to the peer's endpoints
#      (when tcp announces CONNECT_TO_EP) and to its interface, AMs and
#      PUTs of every kind the interface has, each endpoint verified
#   2. many small messages (the short and bcopy paths) on 16 endpoints
#   3. the stall limit: with the server stopped (SIGSTOP) mid-stream the
#      client must fail with "nothing moved" within -T plus 2 s, not hang
#
# STREAM_CHECK and UCT_INFO point at the programs (make check sets them).
# Prints one line per step and PASS/FAIL/SKIP lines; exits 0 or 1.

: "${STREAM_CHECK:=./uct_stream_check}"
: "${UCT_INFO:=../../src/tools/info/uct_info}"
: "${STREAM_BYTES:=100m}"

. "$(dirname "$0")/lib.sh"
stress_init stream

[ -x "$STREAM_CHECK" ] || { echo "FAIL: $STREAM_CHECK not built"; exit 1; }

# Starts a server (arguments: its log, its options) on a port it picks;
# sets SERVER_PID and PORT (empty if it did not come up within 10 s). It
# runs bare, so that signals reach it; wait_exit ends it if need be.
start_server() {
    local log=$1 rc
    shift
    start_listener "$log" '.*waiting for a client on port \([0-9]*\)$' \
        "$STREAM_CHECK" -p 0 "$@"
    rc=$?
    SERVER_PID=$LISTENER_PID
    return $rc
}

# A verified run: stream NAME CLIENT-OPTIONS...
stream() {
    local name=$1 slog="$LOGDIR/$1.server" clog="$LOGDIR/$1.client"
    local crc src
    shift
    step "$name: uct_stream_check $* 127.0.0.1"
    if ! start_server "$slog"; then
        fail "$name: the server did not start"
        show_log "$slog"
        return
    fi
    timeout -s KILL 300 "$STREAM_CHECK" -p "$PORT" "$@" 127.0.0.1 \
        >"$clog" 2>&1
    crc=$?
    wait_exit $SERVER_PID 10
    src=$RC
    if [ $crc -eq 0 ] && [ $src -eq 0 ] && grep -q '^OK ' "$slog"; then
        pass "$name: $(grep '^OK ' "$slog");" \
             "$(sed -n 's/^client: sent .* in \([0-9.]* s, .*\)/\1/p' "$clog")"
    else
        fail "$name: server exit $src, client exit $crc"
        echo "    server:"; show_log "$slog"
        echo "    client:"; show_log "$clog"
    fi
}

# The client must give up within -T (plus 2 s) when the server stops
stall() {
    local slog="$LOGDIR/stall.server" clog="$LOGDIR/stall.client"
    local limit=3 cpid i
    step "stall: SIGSTOP the server mid-stream, client with -T $limit"
    if ! start_server "$slog" -T $limit; then
        fail "stall: the server did not start"
        show_log "$slog"
        return
    fi
    "$STREAM_CHECK" -p "$PORT" -T $limit -k 0 127.0.0.1 >"$clog" 2>&1 &
    cpid=$!
    PIDS="$PIDS $cpid"
    for i in $(seq 100); do
        grep -q streaming "$clog" && break
        sleep 0.1
    done
    sleep 0.5
    kill -STOP $SERVER_PID
    for i in $(seq $(((limit + 2) * 10))); do
        kill -0 $cpid 2>/dev/null || break
        sleep 0.1
    done
    wait_exit $cpid 1
    kill -CONT $SERVER_PID
    wait_exit $SERVER_PID 10
    if [ $RC -eq 1 ] && grep -q 'error: nothing moved for' "$clog"; then
        pass "stall: $(grep 'error:' "$clog")"
    elif [ $RC -eq 124 ]; then
        fail "stall: the client still ran $((limit + 3)) s after the" \
             "server stopped"
        show_log "$clog"
    else
        fail "stall: client exit $RC, expected 1 and \"nothing moved\""
        show_log "$clog"
    fi
}

# Whether tcp on lo can connect to a peer's endpoint
tcp_connects_to_ep() {
    "$UCT_INFO" -d 2>/dev/null | awk '
        /Transport:/ { tl = $3 }
        /Device:/    { dev = $3 }
        /connection:/ && tl == "tcp" && dev == "lo" && /to ep/ { found = 1 }
        END { exit !found }'
}

modes="iface"
if tcp_connects_to_ep; then
    modes="ep iface"
else
    echo "SKIP -C ep: tcp/lo does not announce CONNECT_TO_EP"
fi
for mode in $modes; do
    stream "$mode-1"  -C "$mode" -c 1  -b "$STREAM_BYTES"
    stream "$mode-64" -C "$mode" -c 64 -b "$STREAM_BYTES"
done
stream small-16 -c 16 -n 5000 -s 512
stall

exit $FAILED
