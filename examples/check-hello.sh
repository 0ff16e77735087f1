#!/bin/bash
#
# The hello world run the way the README shows it: a server and a client,
# two processes, over tcp on lo, then over the shared-memory transports
# posix and sysv on device memory.
#   1. -i, -b and -z, each at 8 bytes and at the mode's limit (-s max):
#      both exit 0, nothing on stderr, the server prints "received N
#      bytes: <text>" and the client "sent N bytes with <mode> over
#      TL/DEV"; one byte over the limit is refused naming the limit.
#      A mode uct_info -d does not list for the transport (am_zcopy of
#      posix and sysv) is not skipped: the server and the client given
#      it must each exit 1 at once, saying the transport lacks it
#   2. loopback (-l, one process), as contrib/quickstart.sh runs it
#   3. over tcp only: a client sending control characters and a
#      backslash: the server prints them escaped, bounded, with no raw
#      control byte, and rejects the text; both exit 1
#   4. over tcp only: a client with no server to talk to exits 1 saying so
# A transport uct_info -d does not list fails the check. Every process
# runs under timeout. The server takes a free port (-p 0) for the
# address exchange, a TCP socket whatever the transport, and says which.
#
# HELLO points at the program and UCT_INFO at uct_info (make check sets
# both); by default ./uct_hello_world, the build tree's examples
# directory, and ../src/tools/info/uct_info beside it.

: "${HELLO:=./uct_hello_world}"
: "${UCT_INFO:=$(dirname "$HELLO")/../src/tools/info/uct_info}"

# Without an error handler, a connection failure (such as a peer tearing
# down too early) is reported at level diag: show it, stderr must be empty
export UCX_LOG_LEVEL=diag

LIMIT=20          # seconds any one process may take
TEXT="hello world"
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/openuct-hello.XXXXXX")
SERVER_PID=""
FAILED=0
LAST_PORT=""
TL=tcp
DEV=lo

# shellcheck source-path=SCRIPTDIR source=check-lib.sh
. "$(dirname "$0")/check-lib.sh"

# What the receiver prints of $1 bytes of TEXT padded with dots: the
# first 64 bytes, then "..." if there are more
expected_text() {
    local size=$1 shown text
    shown=$((size > 64 ? 64 : size))
    text=$TEXT
    while [ ${#text} -lt "$shown" ]; do
        text="$text."
    done
    text=${text:0:$shown}
    [ "$size" -gt 64 ] && text="$text..."
    printf '%s' "$text"
}

# Runs a server with arguments "$1" (a word list) and a client with the
# rest; sets SRC and CRC to their exit codes, logs in $LOGDIR/$NAME.*
run_pair() {
    local server_args=$1 port i
    shift

    timeout "$LIMIT" "$HELLO" -t "$TL" -d "$DEV" -p 0 $server_args \
        >"$LOGDIR/$NAME.server" 2>"$LOGDIR/$NAME.server.err" &
    SERVER_PID=$!

    # The server names its port once it listens
    port=""
    for i in $(seq 200); do
        port=$(sed -n 's/^waiting for a client on port \([0-9]*\)$/\1/p' \
               "$LOGDIR/$NAME.server")
        [ -n "$port" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done

    if [ -n "$port" ]; then
        LAST_PORT=$port
        timeout "$LIMIT" "$HELLO" -t "$TL" -d "$DEV" -p "$port" -n localhost \
            "$@" \
            >"$LOGDIR/$NAME.client" 2>"$LOGDIR/$NAME.client.err"
        CRC=$?
    else
        echo "the server did not say its port" >"$LOGDIR/$NAME.client.err"
        : >"$LOGDIR/$NAME.client"
        CRC=255
    fi

    wait "$SERVER_PID"
    SRC=$?
    SERVER_PID=""
}

logs() {
    show_logs "$LOGDIR/$NAME.server" "$LOGDIR/$NAME.server.err" \
              "$LOGDIR/$NAME.client" "$LOGDIR/$NAME.client.err"
}

# $1: -i, -b or -z; $2: mode name; $3: size (a number or max)
check_send() {
    local flag=$1 mode=$2 size=$3 n want_server want_client err
    NAME="$TL-send$flag-$size"

    run_pair "" "$flag" -s "$size"

    n=$(sed -n "s|^sent \([0-9]*\) bytes with $mode over $TL/$DEV$|\1|p" \
        "$LOGDIR/$NAME.client")
    if [ "$size" != max ] && [ "$n" != "$size" ]; then
        n=""
    fi
    want_client="sent $n bytes with $mode over $TL/$DEV"
    want_server="received $n bytes: $(expected_text "${n:-0}")"

    err=""
    [ "$SRC" -eq 0 ] || err="$err; server exit $SRC"
    [ "$CRC" -eq 0 ] || err="$err; client exit $CRC"
    [ -n "$n" ] ||
        err="$err; no line 'sent $size bytes with $mode' from the client"
    if [ -n "$n" ]; then
        [ "$(cat "$LOGDIR/$NAME.client")" = "$want_client" ] ||
            err="$err; client output is not '$want_client'"
        [ "$(grep -v '^waiting for a client' "$LOGDIR/$NAME.server")" = \
          "$want_server" ] || err="$err; server output is not '$want_server'"
    fi
    [ -s "$LOGDIR/$NAME.server.err" ] && err="$err; server wrote to stderr"
    [ -s "$LOGDIR/$NAME.client.err" ] && err="$err; client wrote to stderr"

    if [ -n "$err" ]; then
        fail "$TL/$DEV $mode -s $size: ${err#; }"
        logs
        return
    fi
    pass "$TL/$DEV $mode -s $size: $want_client; $want_server"

    [ "$size" = max ] || return

    # The limit is the limit: one byte more is refused, naming it
    NAME="$TL-over$flag"
    timeout "$LIMIT" "$HELLO" -t "$TL" -d "$DEV" -l "$flag" -s $((n + 1)) \
        >"$LOGDIR/$NAME.out" 2>"$LOGDIR/$NAME.err"
    RC=$?
    if [ $RC -eq 1 ] &&
       grep -q "outside the $mode limits of $TL/$DEV ([0-9]*\.\.$n bytes)" \
            "$LOGDIR/$NAME.err"; then
        pass "$TL/$DEV $mode -s $((n + 1)): refused:" \
             "$(cat "$LOGDIR/$NAME.err")"
    else
        fail "$TL/$DEV $mode -s $((n + 1)): exit $RC, expected 1 and the" \
             "limit $n"
        show_logs "$LOGDIR/$NAME.out" "$LOGDIR/$NAME.err"
    fi
}

# A peer's text with escape sequences (a window title, a colour, a C1
# CSI byte), a bell and a backslash, padded to 200 bytes: the server
# must print it escaped and cut at 64 bytes, and reject it
check_hostile() {
    local hostile want err
    hostile=$'\e]0;owned\a\e[31m\x9b\\'
    want='received 200 bytes: \x1b]0;owned\x07\x1b[31m\x9b\\'
    want="$want$(printf '%.0s.' $(seq 47))..."
    NAME="hostile"

    run_pair "" -b -s 200 -m "$hostile"

    err=""
    [ "$SRC" -eq 1 ] || err="$err; server exit $SRC, expected 1"
    [ "$CRC" -eq 1 ] || err="$err; client exit $CRC, expected 1"
    [ "$(grep -v '^waiting for a client' "$LOGDIR/$NAME.server")" = \
      "$want" ] || err="$err; server output is not '$want'"
    LC_ALL=C grep -q '[^[:print:]]' "$LOGDIR/$NAME.server" &&
        err="$err; a raw control byte reached the server's output"
    grep -q "not the expected text" "$LOGDIR/$NAME.server.err" ||
        err="$err; the server did not reject the text"
    grep -q "did not arrive as expected" "$LOGDIR/$NAME.client.err" ||
        err="$err; the client did not report the rejection"

    if [ -n "$err" ]; then
        fail "hostile text: ${err#; }"
        logs
    else
        pass "hostile text: $want (server and client exit 1)"
    fi
}

# The port of the last server, which has exited: nobody listens there
check_no_server() {
    local msg
    NAME="noserver"
    msg="cannot connect to localhost:$LAST_PORT: Connection refused;"
    msg="$msg is the server running?"

    timeout "$LIMIT" "$HELLO" -t tcp -d lo -p "$LAST_PORT" -n localhost \
        >"$LOGDIR/$NAME.out" 2>"$LOGDIR/$NAME.err"
    RC=$?
    if [ $RC -eq 1 ] && [ "$(cat "$LOGDIR/$NAME.err")" = "$msg" ] &&
       [ ! -s "$LOGDIR/$NAME.out" ]; then
        pass "no server on port $LAST_PORT: exit 1, $msg"
    else
        fail "no server on port $LAST_PORT: exit $RC, expected 1 and '$msg'"
        show_logs "$LOGDIR/$NAME.out" "$LOGDIR/$NAME.err"
    fi
}

check_loopback() {
    local want="received 11 bytes: hello world"
    NAME="$TL-loopback"

    timeout "$LIMIT" "$HELLO" -t "$TL" -d "$DEV" -l \
        >"$LOGDIR/$NAME.out" 2>"$LOGDIR/$NAME.err"
    RC=$?
    if [ $RC -eq 0 ] && [ "$(cat "$LOGDIR/$NAME.out")" = "$want" ] &&
       [ ! -s "$LOGDIR/$NAME.err" ]; then
        pass "loopback -t $TL -d $DEV -l: $want"
    else
        fail "loopback -t $TL -d $DEV -l: exit $RC, expected 0 and '$want'"
        show_logs "$LOGDIR/$NAME.out" "$LOGDIR/$NAME.err"
    fi
}

# A mode the transport lacks: the server, and a client pointed at a port
# nobody listens on, each refuse it before any exchange: exit 1 at once,
# one line naming the transport and the mode, nothing on stdout.
# $1: -i, -b or -z; $2: mode name
check_refused() {
    local flag=$1 mode=$2 msg role
    msg="$TL/$DEV does not support $mode; try another of -i, -b, -z"
    msg="$msg (uct_info -d -t $TL)"

    for role in server client; do
        NAME="$TL-refused$flag-$role"
        if [ $role = server ]; then
            timeout "$LIMIT" "$HELLO" -t "$TL" -d "$DEV" -p 0 "$flag" \
                >"$LOGDIR/$NAME.out" 2>"$LOGDIR/$NAME.err"
        else
            timeout "$LIMIT" "$HELLO" -t "$TL" -d "$DEV" -p 1 -n localhost \
                "$flag" >"$LOGDIR/$NAME.out" 2>"$LOGDIR/$NAME.err"
        fi
        RC=$?
        if [ $RC -eq 1 ] && [ "$(cat "$LOGDIR/$NAME.err")" = "$msg" ] &&
           [ ! -s "$LOGDIR/$NAME.out" ]; then
            pass "$TL/$DEV $mode ($role $flag): not offered, refused: $msg"
        else
            fail "$TL/$DEV $mode ($role $flag): exit $RC, expected 1 and" \
                 "'$msg'"
            show_logs "$LOGDIR/$NAME.out" "$LOGDIR/$NAME.err"
        fi
    done
}

# The capability lines uct_info -d prints for transport $1 on device $2;
# nothing when it does not list them
tl_caps() {
    "$UCT_INFO" -d -t "$1" 2>/dev/null |
        awk -v dev="$2" '$2 == "Transport:" { on = 0 }
                         $2 == "Device:" { on = ($3 == dev) }
                         on'
}

# Every mode at 8 bytes and at its limit, over $TL/$DEV; a mode the
# transport does not list is checked to be refused
check_transport() {
    local caps size mode
    caps=$(tl_caps "$TL" "$DEV")
    if [ -z "$caps" ]; then
        fail "$TL/$DEV: '$UCT_INFO -d -t $TL' does not list it"
        return
    fi
    for size in 8 max; do
        for mode in -i:am_short -b:am_bcopy -z:am_zcopy; do
            if printf '%s\n' "$caps" | grep -q "^# *${mode#*:}: "; then
                check_send "${mode%%:*}" "${mode#*:}" "$size"
            elif [ "$size" = 8 ]; then
                check_refused "${mode%%:*}" "${mode#*:}"
            fi
        done
    done
    check_loopback
}

if [ ! -x "$HELLO" ]; then
    echo "FAIL: $HELLO is not built"
    exit 1
fi
if [ ! -x "$UCT_INFO" ]; then
    echo "FAIL: $UCT_INFO is not built"
    exit 1
fi

for TL_DEV in tcp/lo posix/memory sysv/memory; do
    TL=${TL_DEV%/*}
    DEV=${TL_DEV#*/}
    check_transport
done

TL=tcp
DEV=lo
check_hostile
check_no_server

exit $FAILED
