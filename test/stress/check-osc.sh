#!/bin/bash
#
# uct_osc_check: the one-sided pattern of an MPI library (a lock taken
# with compare-and-swap and released with fetch-and-add, guarding PUTs and
# GETs of 64 B - 4 MiB, each followed at once by an ep or iface flush), a
# target and several origin processes at once:
#   1. connected to the interface, 2 origins
#   2. connected to the endpoint, 3 origins (when the transport can)
#   3. an origin killed mid-run: the target exits 1 within 5 s with one
#      line naming it, and nothing hangs
# A transport that cannot run a step (uct_osc_check exits 2: no GET zcopy,
# or not that connection mode) skips it, with the reason.
#
# OSC_CHECK and UCT_INFO point at the programs (make check sets them).
# OSC_TL (tcp), OSC_TARGET_DEV and OSC_ORIGIN_DEV (lo), OSC_HOST
# (127.0.0.1: where the origins find the target) and OSC_ITERS (300) let
# the same checks run over another transport (test/rxe/check-rxe.sh).
# Prints one line per step and PASS/FAIL/SKIP lines; exits 0 or 1.

: "${OSC_CHECK:=./uct_osc_check}"
: "${OSC_TL:=tcp}"
: "${OSC_TARGET_DEV:=lo}"
: "${OSC_ORIGIN_DEV:=$OSC_TARGET_DEV}"
: "${OSC_HOST:=127.0.0.1}"
: "${OSC_ITERS:=300}"

. "$(dirname "$0")/lib.sh"
stress_init osc

[ -x "$OSC_CHECK" ] || { echo "FAIL: $OSC_CHECK not built"; exit 1; }

# Starts a target (arguments: its log, its options); sets TARGET_PID and
# PORT (empty if it did not come up within 10 s)
start_target() {
    local log=$1 rc
    shift
    start_listener "$log" '^target: waiting for .* on port \([0-9]*\)$' \
        "$OSC_CHECK" -x "$OSC_TL" -d "$OSC_TARGET_DEV" -p 0 "$@"
    rc=$?
    TARGET_PID=$LISTENER_PID
    return $rc
}

# Starts origin number $1 (arguments after: its options); appends its pid
# to ORIGIN_PIDS
start_origin() {
    local n=$1
    shift
    "$OSC_CHECK" -x "$OSC_TL" -d "$OSC_ORIGIN_DEV" -p "$PORT" "$@" \
        "$OSC_HOST" >"$LOGDIR/$NAME.origin$n" 2>&1 &
    ORIGIN_PIDS="$ORIGIN_PIDS $!"
    PIDS="$PIDS $!"
}

# run NAME ORIGINS OPTIONS...: a whole run, every process must exit 0
run() {
    local origins=$2 tlog rc_t pid n bad=0 moved
    NAME=$1
    shift 2
    tlog="$LOGDIR/$NAME.target"
    step "$NAME: $origins origins, uct_osc_check -x $OSC_TL -o $origins $*"
    if ! start_target "$tlog" -o "$origins" "$@"; then
        wait_exit "$TARGET_PID" 5
        if [ "$RC" = 2 ]; then
            echo "SKIP $NAME: $(sed 's/^uct_osc_check: //' "$tlog")"
            return
        fi
        fail "$NAME: the target did not start"
        show_log "$tlog"
        return
    fi
    ORIGIN_PIDS=""
    for n in $(seq "$origins"); do
        start_origin "$n" -o "$origins" -T 60 "$@"
    done
    n=0
    for pid in $ORIGIN_PIDS; do
        n=$((n + 1))
        wait_exit "$pid" 600
        [ "$RC" -eq 0 ] || { bad=1; echo "    origin $n: exit $RC"; }
    done
    wait_exit "$TARGET_PID" 10
    rc_t=$RC
    # over tcp with CONNECT_TO_IFACE each origin and the target share one
    # connection: one endpoint of each pair moved to the other's
    moved=$(cat "$tlog" "$LOGDIR/$NAME".origin* 2>/dev/null |
        sed -n 's/.*endpoints moved to their peer.s connection: //p' |
        awk '{ s += $1 } END { print s + 0 }')
    if [ "$OSC_TL" = tcp ] && [ "$NAME" = iface ] &&
        [ "$moved" -ne "$origins" ]; then
        echo "    $moved endpoints moved to their peer's connection," \
            "expected $origins (one per origin-target pair)"
        bad=1
    fi
    if [ $bad -eq 0 ] && [ "$rc_t" -eq 0 ] && grep -q '^OK ' "$tlog"; then
        pass "$NAME: $(grep '^OK ' "$tlog"); $moved endpoints moved to" \
            "their peer's connection"
        RAN="$RAN $NAME"
    else
        fail "$NAME: target exit $rc_t"
        show_log "$tlog"
        for n in $(seq "$origins"); do
            echo "    origin $n:"
            show_log "$LOGDIR/$NAME.origin$n"
        done
    fi
}

# An origin killed mid-run: the target names it and exits 1 in 5 s; the
# other origin, stuck or not, is ended by the script
killed() {
    local tlog="$LOGDIR/killed.target" victim t0 t1 pid i
    NAME=killed
    RAN=${RAN# }
    step "killed: SIGKILL an origin of 2 mid-run (-C ${RAN%% *})"
    if [ -z "$RAN" ]; then
        echo "SKIP killed: no connection mode ran"
        return
    fi
    if ! start_target "$tlog" -o 2 -C ${RAN%% *}; then
        fail "killed: the target did not start"
        show_log "$tlog"
        return
    fi
    ORIGIN_PIDS=""
    start_origin 1 -o 2 -C ${RAN%% *} -n 1000000 -T 5
    start_origin 2 -o 2 -C ${RAN%% *} -n 1000000 -T 5
    # both must be running their iterations, not still setting up
    for i in $(seq 300); do
        [ "$(cat "$LOGDIR"/killed.origin* 2>/dev/null | grep -c ' of 2: ')" \
            -eq 2 ] && break
        sleep 0.1
    done
    sleep 0.5
    victim=$(echo $ORIGIN_PIDS | cut -d' ' -f1)
    kill -KILL "$victim"
    t0=$(date +%s%N)
    wait_exit "$TARGET_PID" 5
    t1=$(date +%s%N)
    [ "$RC" = 1 ] || echo "    target: exit $RC, expected 1"
    for pid in $ORIGIN_PIDS; do
        wait_exit "$pid" 10
    done
    if ! grep -q "origin [0-9]* went away" "$tlog"; then
        fail "killed: the target did not report the dead origin in 5 s"
        show_log "$tlog"
    else
        pass "killed: target exit 1 after $(((t1 - t0) / 1000000)) ms:" \
             "$(grep 'went away' "$tlog")"
    fi
}

RAN=""
run iface 2 -C iface -n "$OSC_ITERS"
run ep 3 -C ep -n $((OSC_ITERS / 2))
killed

[ $FAILED -eq 0 ] && echo "check-osc: all passed" || echo "check-osc: FAILED"
exit $FAILED
