#!/bin/bash
#
# Peer failure while streaming, with error handlers set (-e) on both
# sides. The survivor must report "peer failed: <status>" and exit 3
# within a few seconds, not crash or hang:
#   1. the server is SIGKILLed: the client (sender) sees the reset
#   2. the client is SIGKILLed: the server (receiver) sees the reset
#   3. keepalive: with UCX_TCP_KEEPIDLE=1s, KEEPINTVL=1s, KEEPCNT=2, the
#      client's link is cut (vB down) in the two-namespace setup; the
#      server must report the endpoint timeout within 10 s, and the client
#      (data in flight) some peer failure within the same 10 s.
# 1 and 2 run on loopback; 3 needs root and iproute2 and is skipped
# without them.

. "$(dirname "$0")/common.sh"

KILL_DETECT_SEC=5
KEEPALIVE_DETECT_SEC=10
LIMIT=120

trap cleanup EXIT
[ -x "$STREAM_CHECK" ] || { echo "FAIL: $STREAM_CHECK not built"; exit 1; }

# Checks that process $1 (named $2, log $3) exits 3 within $4 seconds
# reporting status $5; $6 is when the failure was caused
check_survivor() {
    local pid=$1 name=$2 log=$3 limit=$4 status=$5 start=$6
    local elapsed

    wait_exit "$pid" "$limit"
    if [ $RC -eq 3 ] && grep -q "peer failed: $status" "$log"; then
        elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" \
                  'BEGIN { printf "%.1f", b - a }')
        pass "$name: $(grep 'peer failed' "$log") (exit 3, $elapsed s" \
             "after the failure)"
        return 0
    fi
    if [ $RC -eq 124 ]; then
        fail "$name: the survivor did not exit within $limit s"
    else
        fail "$name: the survivor exited with $RC, expected 3 and" \
             "\"peer failed: $status\""
    fi
    show_log "$log"
    return 1
}

# $1: which side to kill (server or client)
kill_case() {
    local victim=$1 port slog clog server_pid client_pid attempt base killed
    local wrap_server="" wrap_client=""
    slog="$LOGDIR/kill-$victim.server"
    clog="$LOGDIR/kill-$victim.client"

    # The victim runs bare, so that SIGKILL reaches it; the survivor runs
    # under timeout
    if [ "$victim" = server ]; then
        wrap_client="timeout -s KILL $LIMIT"
        base=1
    else
        wrap_server="timeout -s KILL $LIMIT"
        base=2
    fi

    # A port below the ephemeral range; another one if it is taken
    for attempt in 1 2 3; do
        port=$(pick_port $((attempt * 10 + base)))
        step "kill $victim: stream on lo (port $port) with -e on both sides"
        $wrap_server "$STREAM_CHECK" -e -p "$port" >"$slog" 2>&1 &
        server_pid=$!
        PIDS="$PIDS $server_pid"
        wait_for_line "$slog" 10 -e "waiting for a client" -e "error" ||
            break
        grep -q "cannot listen" "$slog" || break
        wait $server_pid 2>/dev/null
    done
    $wrap_client "$STREAM_CHECK" -e -p "$port" -k 0 127.0.0.1 >"$clog" 2>&1 &
    client_pid=$!
    PIDS="$PIDS $client_pid"

    if ! wait_for_line "$clog" 30 "streaming"; then
        fail "kill $victim: the stream did not start"
        show_log "$slog"; show_log "$clog"
        return
    fi
    sleep 1
    step "kill $victim: SIGKILL the $victim mid-stream"
    killed=$EPOCHREALTIME
    if [ "$victim" = server ]; then
        kill -KILL $server_pid
        wait $server_pid 2>/dev/null
        check_survivor $client_pid "kill server" "$clog" $KILL_DETECT_SEC \
            "$STATUS_RESET" "$killed"
    else
        kill -KILL $client_pid
        wait $client_pid 2>/dev/null
        check_survivor $server_pid "kill client" "$slog" $KILL_DETECT_SEC \
            "$STATUS_RESET" "$killed"
    fi
}

keepalive_case() {
    local reason slog clog server_pid client_pid cut left

    if reason=$(netns_unavailable); then
        echo "SKIP keepalive: $reason"
        return
    fi
    if ! "$UCT_INFO" -c 2>/dev/null | grep -q '^UCX_TCP_KEEPIDLE='; then
        echo "NOTE keepalive: uct_info -c lists no UCX_TCP_KEEPIDLE;" \
             "the transport has no keepalive settings yet"
    fi
    netns_setup || { fail "keepalive: could not set up the namespaces"; \
                     return; }

    slog="$LOGDIR/keepalive.server"
    clog="$LOGDIR/keepalive.client"
    export UCX_TCP_KEEPIDLE=1s UCX_TCP_KEEPINTVL=1s UCX_TCP_KEEPCNT=2
    step "keepalive: server in $NS_A on vA, client in $NS_B streams AMs" \
         "(KEEPIDLE=1s KEEPINTVL=1s KEEPCNT=2)"
    timeout -s KILL $LIMIT ip netns exec "$NS_A" "$STREAM_CHECK" -e -d vA \
        >"$slog" 2>&1 &
    server_pid=$!
    timeout -s KILL $LIMIT ip netns exec "$NS_B" "$STREAM_CHECK" -e -d vB \
        -m am -k 0 $ADDR_A >"$clog" 2>&1 &
    client_pid=$!
    PIDS="$PIDS $server_pid $client_pid"
    unset UCX_TCP_KEEPIDLE UCX_TCP_KEEPINTVL UCX_TCP_KEEPCNT

    if ! wait_for_line "$clog" 30 "streaming"; then
        fail "keepalive: the stream did not start"
        show_log "$slog"; show_log "$clog"
        return
    fi
    sleep 1
    step "keepalive: cut the link (vB down in $NS_B)"
    cut=$EPOCHREALTIME
    ip -n "$NS_B" link set vB down
    check_survivor $server_pid "keepalive" "$slog" $KEEPALIVE_DETECT_SEC \
        "$STATUS_TIMEOUT" "$cut"

    # The client had data in flight, which keepalive probes do not cover
    # (TCP_USER_TIMEOUT does); its own link is the one down, so the
    # status it gets may differ: any peer failure will do
    left=$((${cut%.*} + KEEPALIVE_DETECT_SEC - $(date +%s)))
    check_survivor $client_pid "keepalive, sender side" "$clog" \
        $((left > 1 ? left : 1)) "" "$cut"
}

kill_case server
kill_case client
keepalive_case

exit $FAILED
