#!/bin/bash
#
# uct_cm_client_server run the way the README shows it: a server and a
# client, two processes, connected by the tcp connection manager, with
# the tcp transport on lo carrying the data.
#   1. the client's message reaches the server, the server's answer the
#      client; the client disconnects and both see it; both exit 0 with
#      nothing on stderr
#   2. a client with no server on the port exits 1 saying the
#      destination is unreachable, at once
#   3. a server given a transport that does not exist exits 1 naming it
#   4. a client killed after the handshake: the server exits 1 saying the
#      peer went away, well before its own timeout
# The server takes a free port (-p 0) and prints it. Every process runs
# under timeout.
#
# CM points at the program (make check sets it); by default
# ./uct_cm_client_server.

: "${CM:=./uct_cm_client_server}"

LIMIT=30
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/openuct-cm.XXXXXX")
SERVER_PID=""
FAILED=0

# shellcheck source-path=SCRIPTDIR source=check-lib.sh
. "$(dirname "$0")/check-lib.sh"

# start_server NAME ARGS...: a server on a free port; sets PORT
start_server() {
    local name=$1 i
    shift
    timeout "$LIMIT" "$CM" -p 0 "$@" >"$LOGDIR/$name.out" \
        2>"$LOGDIR/$name.err" &
    SERVER_PID=$!
    PORT=""
    for i in $(seq 200); do
        PORT=$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' \
            "$LOGDIR/$name.out")
        [ -n "$PORT" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    fail "$name: the server did not print its port"
    show_logs "$LOGDIR/$name.out" "$LOGDIR/$name.err"
    return 1
}

# 1. the whole exchange
if start_server ok; then
    timeout "$LIMIT" "$CM" -p "$PORT" -a 127.0.0.1 -m "hello cm" \
        >"$LOGDIR/client.out" 2>"$LOGDIR/client.err"
    crc=$?
    wait "$SERVER_PID"
    src=$?
    SERVER_PID=""
    if [ "$crc" -eq 0 ] && [ "$src" -eq 0 ] &&
       [ ! -s "$LOGDIR/client.err" ] && [ ! -s "$LOGDIR/ok.err" ] &&
       grep -qx "received 'hello cm'" "$LOGDIR/ok.out" &&
       grep -qx "the client disconnected" "$LOGDIR/ok.out" &&
       grep -qx "received 'server got: hello cm'" "$LOGDIR/client.out" &&
       grep -qx "disconnected" "$LOGDIR/client.out"; then
        pass "a message each way over the tcp cm and tcp/lo, then a" \
            "disconnect both sides saw"
    else
        fail "the exchange: client exit $crc, server exit $src"
        show_logs "$LOGDIR"/ok.* "$LOGDIR"/client.*
    fi
    CLOSED_PORT=$PORT
fi

# 2. nobody listens on the port the server used
start=$(date +%s)
timeout "$LIMIT" "$CM" -p "${CLOSED_PORT:-1}" -a 127.0.0.1 \
    >"$LOGDIR/none.out" 2>"$LOGDIR/none.err"
rc=$?
if [ "$rc" -eq 1 ] && [ $(($(date +%s) - start)) -lt 5 ] &&
   grep -q "connecting to the server: Destination is unreachable" \
       "$LOGDIR/none.err"; then
    pass "no server: the client says the destination is unreachable"
else
    fail "no server: exit $rc"
    show_logs "$LOGDIR"/none.*
fi

# 3. a transport that does not exist
timeout "$LIMIT" "$CM" -p 0 -t nosuchtl >"$LOGDIR/badtl.out" \
    2>"$LOGDIR/badtl.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "no transport nosuchtl on device lo" \
       "$LOGDIR/badtl.err"; then
    pass "an unknown transport is named, exit 1"
else
    fail "an unknown transport: exit $rc"
    show_logs "$LOGDIR"/badtl.*
fi

# 4. the client dies after the handshake: it pauses before its message
#    (-W) and is killed as soon as it says it is connected
if start_server killed -T 20; then
    # not under timeout: the kill must reach the program itself
    "$CM" -p "$PORT" -a 127.0.0.1 -W 20 \
        >"$LOGDIR/victim.out" 2>"$LOGDIR/victim.err" &
    victim=$!
    for i in $(seq 400); do
        grep -q "connected to the server" "$LOGDIR/victim.out" && break
        sleep 0.01
    done
    kill -KILL "$victim" 2>/dev/null
    wait "$victim" 2>/dev/null
    start=$(date +%s)
    wait "$SERVER_PID"
    src=$?
    SERVER_PID=""
    if [ "$src" -eq 1 ] && [ $(($(date +%s) - start)) -lt 10 ] &&
       grep -q "the peer went away before its message" "$LOGDIR/killed.err"
    then
        pass "a client killed after the handshake: the server says the" \
            "peer went away, at once"
    else
        fail "a killed client: server exit $src"
        show_logs "$LOGDIR"/killed.* "$LOGDIR"/victim.*
    fi
fi

exit $FAILED
