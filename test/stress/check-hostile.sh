#!/bin/bash
#
# tcp_hostile against real processes over tcp on loopback (issue 22: one
# peer must never reach another peer's endpoint or starve it):
#   1. hijack: a third process given endpoint A's address tries the ids
#      and cookies around it: all refused, nothing delivered, the target's
#      legitimate peers still get every message, few (rate-limited) lines
#   2. flood: 4,100 connections from 5 other loopback addresses hold
#      partial messages while uct_stream_check streams and flushes (it
#      must see no error, every message must arrive once); then 4,100
#      from 127.0.0.1, the legitimate client's own host (one peer to the
#      server, far over its share: the client's connections, read most
#      recently, are not the ones it loses); then UCX_TCP_MAX_BUFS=16 and
#      64 connections from the other addresses
#   3. stall: PUTs announcing 4 GiB and 1 MiB whose bytes stop coming are
#      closed after UCX_TCP_PEER_TIMEOUT (2 s), not before; one whose
#      bytes keep coming stays open
#   4. reserved: handshakes with a reserved field set are refused
#      (BAD_REQUEST), headers with reserved bits close the connection and
#      deliver nothing
#
# TCP_HOSTILE, STREAM_CHECK and UCT_INFO point at the programs (make check
# sets them); HOSTILE_PROTO=3 or 4 makes the attacker speak that older
# protocol (a build before version 4 or 5). Every program runs in its own session (setsid), the
# server on one CPU and its peers on another where there are two. Prints
# one line per step and PASS/FAIL/SKIP lines; exits 0, 1, or 77 when tcp
# on lo is missing.

: "${TCP_HOSTILE:=./tcp_hostile}"
: "${STREAM_CHECK:=./uct_stream_check}"
: "${UCT_INFO:=../../src/tools/info/uct_info}"
: "${HOSTILE_PROTO:=5}"

PEER_TIMEOUT=2
FLOOD_CONNS=4100

. "$(dirname "$0")/lib.sh"
stress_init hostile
trap 'exit 1' INT TERM

for prog in "$TCP_HOSTILE" "$STREAM_CHECK"; do
    [ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
done
if ! "$UCT_INFO" -d 2>/dev/null | awk '
        /Transport:/ { tl = $3 }
        /Device:/ && tl == "tcp" && $3 == "lo" { found = 1 }
        END { exit !found }'; then
    echo "SKIP: no tcp transport on lo"
    exit 77
fi

# The server on CPU 0, its peers on CPU 1
SERVER_CPU=""
PEER_CPU=""
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    SERVER_CPU="taskset -c 0"
    PEER_CPU="taskset -c 1"
fi

# The flood needs a file descriptor per connection on both sides
ulimit -n "$(ulimit -Hn)" 2>/dev/null

# Starts a program in its own session: start LOG [env...] [taskset...]
# PROGRAM ...; sets PID
start() {
    local log=$1
    shift
    setsid "$@" >"$log" 2>&1 &
    PID=$!
    PIDS="$PIDS $PID"
}

# Waits up to 10 s for file $1, written by process $2
wait_file() {
    local i
    for i in $(seq 100); do
        [ -s "$1" ] && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# The attacker: attack LOG COMMAND OPTIONS... ADDRESS-FILE; sets RC
attack() {
    local log=$1 cmd=$2
    shift 2
    timeout -s KILL 120 setsid $PEER_CPU "$TCP_HOSTILE" "$cmd" \
        -V "$HOSTILE_PROTO" "$@" >"$log" 2>&1
    RC=$?
}

warn_lines() { grep -c ' warn ' "$1"; }

# A check against "tcp_hostile target": target_check NAME TARGET-ENV
# TARGET-OPTIONS -- ATTACK [OPTIONS]. The target must have got its peers'
# messages, and the attack must pass; sets TLINE (the target's verdict),
# ALINE (the attacker's) and WARNS, and returns 0 if both passed.
target_check() {
    local name=$1 tenv=$2 tlog="$LOGDIR/$1.target" alog="$LOGDIR/$1.attack"
    local addr="$LOGDIR/$1.addr" topts=() tpid arc
    shift 2
    while [ "$1" != "--" ]; do
        topts+=("$1")
        shift
    done
    shift
    start "$tlog" env $tenv $SERVER_CPU "$TCP_HOSTILE" target -o "$addr" \
        "${topts[@]}"
    tpid=$PID
    if ! wait_file "$addr" $tpid; then
        fail "$name: the target did not start"
        show_log "$tlog"
        return 1
    fi
    attack "$alog" "$@" "$addr"
    arc=$RC
    kill -USR1 $tpid 2>/dev/null
    wait_exit $tpid 30
    ALINE=$(grep "^$1: " "$alog" | tail -1)
    TLINE=$(grep '^target: [0-9]' "$tlog")
    WARNS=$(warn_lines "$tlog")
    if [ $arc -ne 0 ] || [ $RC -ne 0 ]; then
        fail "$name: attacker exit $arc, target exit $RC"
        echo "    attacker:"; show_log "$alog"
        echo "    target:"; show_log "$tlog"
        return 1
    fi
    return 0
}

hijack() {
    local secs limit
    step "hijack: tcp_hostile hijack with endpoint A's address"
    target_check hijack "" -c 8 -a 2 -- hijack || return
    # the limiter lets one line a second through, and a summary at close
    secs=$(echo "$ALINE" | sed -n 's/.* in \([0-9]*\)\.[0-9]* s:.*/\1/p')
    limit=$((${secs:-0} + 3))
    if ! echo "$TLINE" | grep -q 'AMs from elsewhere: 0$'; then
        fail "hijack: something got through: $TLINE"
    elif [ "$WARNS" -gt $limit ]; then
        fail "hijack: $WARNS warning lines for the attempts, more than $limit"
        show_log "$LOGDIR/hijack.target"
    else
        pass "hijack: $(echo "$ALINE" | sed 's/^hijack: //');" \
             "${TLINE#target: }; $WARNS warning lines"
    fi
}

stall() {
    step "stall: silent PUTs, UCX_TCP_PEER_TIMEOUT=${PEER_TIMEOUT}s"
    target_check stall "UCX_TCP_PEER_TIMEOUT=${PEER_TIMEOUT}s" -c 1 -a 0 -- \
        stall -t $PEER_TIMEOUT || return
    pass "stall: ${ALINE#stall: }; ${TLINE#target: }"
}

reserved() {
    step "reserved: reserved handshake fields and header bits set"
    target_check reserved "" -c 1 -a 0 -- reserved || return
    # the well-formed message once, the malformed ones never
    if ! echo "$TLINE" | grep -q 'AMs from elsewhere: 1 (id 8: 1)$'; then
        fail "reserved: the target delivered other than the one" \
             "well-formed AM: $TLINE"
    else
        pass "reserved: ${ALINE#reserved: }; ${TLINE#target: }"
    fi
}

# flood NAME CONNS SOURCES SERVER-ENV CLIENT-OPTIONS...: uct_stream_check's
# server attacked by tcp_hostile flood (SOURCES: its -f/-s options) while
# its client streams
flood() {
    local name=$1 conns=$2 sources=$3 env=$4 slog="$LOGDIR/$1.server"
    local clog="$LOGDIR/$1.client" flog="$LOGDIR/$1.flood"
    local addr="$LOGDIR/$1.addr" spid fpid port i crc src frc
    local start secs warns
    shift 4
    step "$name: $conns connections ($sources) holding partial messages" \
         "($env), client uct_stream_check $*"
    start=$SECONDS
    start "$slog" env $env $SERVER_CPU "$STREAM_CHECK" -p 0 -e -T 30 -L \
        -a "$addr"
    spid=$PID
    if ! wait_file "$addr" $spid; then
        fail "$name: the server did not start"
        show_log "$slog"
        return
    fi
    for i in $(seq 100); do
        port=$(sed -n 's/.*waiting for a client on port \([0-9]*\)$/\1/p' \
               "$slog")
        [ -n "$port" ] && break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        fail "$name: the server did not listen for its client"
        show_log "$slog"
        return
    fi
    start "$flog" $PEER_CPU "$TCP_HOSTILE" flood -V "$HOSTILE_PROTO" \
        -c "$conns" $sources -t 120 "$addr"
    fpid=$PID
    for i in $(seq 600); do
        grep -qs '^flood: holding' "$flog" && break
        kill -0 $fpid 2>/dev/null || break
        sleep 0.1
    done
    if ! grep -qs '^flood: holding' "$flog"; then
        fail "$name: the flood did not get going"
        show_log "$flog"
        return
    fi

    timeout -s KILL 120 setsid $PEER_CPU "$STREAM_CHECK" -p "$port" -e -T 30 \
        "$@" 127.0.0.1 >"$clog" 2>&1
    crc=$?
    # the server (-L) serves on until told: what the flood counted is
    # all its own doing, not the server's exit
    kill -TERM $fpid 2>/dev/null
    wait_exit $fpid 10
    frc=$RC
    kill -TERM $spid 2>/dev/null
    wait_exit $spid 15
    src=$RC
    # rate-limited: a line per cause (receive buffer shares, malformed
    # input) a second, and a summary per cause at the end
    secs=$((SECONDS - start))
    warns=$(warn_lines "$slog")
    if [ $crc -eq 0 ] && [ $src -eq 0 ] && [ $frc -eq 0 ] &&
       grep -q '^OK ' "$slog" &&
       grep -q 'receive buffers with partial messages' "$slog" &&
       ! grep -q 'out of receive buffers' "$slog" &&
       [ "$warns" -le $((2 * secs + 4)) ]; then
        pass "$name: $(grep '^OK ' "$slog"), client exit 0;" \
             "$(sed -n 's/^flood: //p' "$flog" | paste -sd '|' |
                sed 's/|/; /');" \
             "server: $warns warning lines in $secs s"
    else
        fail "$name: client exit $crc, server exit $src, flood exit" \
             "$frc, $warns server warning lines in $secs s (at most" \
             "$((2 * secs + 4)); one must say who lost a receive buffer)"
        echo "    server:"; show_log "$slog"
        echo "    client:"; show_log "$clog"
        echo "    flood:"; show_log "$flog"
    fi
}

hijack
if [ "$(ulimit -n)" -ge $((FLOOD_CONNS + 512)) ]; then
    flood flood-$FLOOD_CONNS $FLOOD_CONNS "-f 1 -s 5" \
        "UCX_TCP_MAX_BUFS=4096" -c 8 -k 5
    flood flood-$FLOOD_CONNS-one-host $FLOOD_CONNS "-f 0 -s 1" \
        "UCX_TCP_MAX_BUFS=4096" -c 8 -k 5
else
    echo "SKIP flood-$FLOOD_CONNS: $FLOOD_CONNS connections need more" \
         "file descriptors than ulimit -Hn ($(ulimit -Hn))"
fi
flood flood-64 64 "-f 1 -s 5" "UCX_TCP_MAX_BUFS=16" -C ep -c 2 -k 3
stall
reserved

exit $FAILED
