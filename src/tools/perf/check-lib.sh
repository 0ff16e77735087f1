# Shell functions of the checks that run uct_perftest as a server and a
# client, two background processes of this host (check-peer-failure.sh,
# check-sm.sh); each sources this file from its own directory.
#
# check_begin first. tl_args holds the options that name the transport
# and the device ("-x tcp -d lo"); the caller sets it before it starts a
# process. The server's and the client's output go to server.out,
# server.err, client.out and client.err in $work. Every process started
# is killed on exit if still there, and every wait is bounded.

# check_begin NAME BUILDDIR: the tools of BUILDDIR, an empty work
# directory, no failures yet; NAME heads the last line
check_begin() {
    check_name=$1
    perftest="$2/src/tools/perf/uct_perftest"
    uct_info="$2/src/tools/info/uct_info"
    work=$(mktemp -d "${TMPDIR:-/tmp}/$check_name.XXXXXX") || exit 1
    pids=""
    failures=0
    trap check_cleanup EXIT
    trap 'exit 130' INT TERM
}

check_cleanup() {
    for pid in $pids; do
        kill -CONT "$pid" 2>/dev/null
        kill -KILL "$pid" 2>/dev/null
    done
    rm -rf "$work"
}

# check_end: exits 1 if anything failed
check_end() {
    if [ "$failures" -ne 0 ]; then
        echo "$check_name: $failures failure(s)"
        exit 1
    fi
    echo "$check_name: all passed"
}

# fail MESSAGE: counts a failure and shows what the processes printed
fail() {
    echo "FAIL: $*"
    for f in "$work"/server.out "$work"/server.err "$work"/client.out \
             "$work"/client.err; do
        [ -s "$f" ] && sed "s|^|    $(basename "$f"): |" "$f"
    done
    failures=$((failures + 1))
}

now_ms() {
    date +%s%3N
}

# seconds MS: MS milliseconds as "S.mmm s"
seconds() {
    printf '%d.%03d s' $(($1 / 1000)) $(($1 % 1000))
}

# Lines of file $1 besides the progress reports
error_lines() {
    grep -v ' operations, [0-9.]* s$' "$1"
}

# Whether something listens on TCP port $1
port_listening() {
    hex=$(printf '%04X' "$1")
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
        awk -v p="$hex" '$4 == "0A" { n = split($2, a, ":");
                                      if (a[n] == p) f = 1 }
                         END { exit !f }'
}

# Waits up to $2 seconds for process $1 to end; sets rc to its exit code,
# or to "hung" after killing it
wait_exit() {
    deadline=$(($(now_ms) + $2 * 1000))
    while kill -0 "$1" 2>/dev/null; do
        if [ "$(now_ms)" -ge "$deadline" ]; then
            kill -CONT "$1" 2>/dev/null
            kill -KILL "$1" 2>/dev/null
            wait "$1" 2>/dev/null
            rc=hung
            return
        fi
        sleep 0.05
    done
    wait "$1"
    rc=$?
}

# Starts a server with options $* on a free port below the ephemeral
# range; sets server and port once it listens. Returns 1 if five ports
# in a row failed, with the last try's output in $work.
start_server() {
    for attempt in 1 2 3 4 5; do
        port=$((20000 + ($$ * 13 + attempt * 977 + $(now_ms)) % 12000))
        port_listening "$port" && continue
        rm -f "$work/server.out" "$work/server.err"
        "$perftest" $tl_args -p "$port" "$@" >"$work/server.out" \
            2>"$work/server.err" &
        server=$!
        pids="$pids $server"
        deadline=$(($(now_ms) + 5000))
        while kill -0 "$server" 2>/dev/null &&
              [ "$(now_ms)" -lt "$deadline" ]; do
            port_listening "$port" && return 0
            sleep 0.05
        done
        kill -KILL "$server" 2>/dev/null
        wait "$server" 2>/dev/null
    done
    return 1
}

# Starts the client of the server on $port with options $*; sets client.
# The old output goes first: the background shell truncates it only when it
# gets to run, and a reader must not see the last client's progress lines.
start_client() {
    rm -f "$work/client.out" "$work/client.err"
    "$perftest" $tl_args -p "$port" "$@" 127.0.0.1 >"$work/client.out" \
        2>"$work/client.err" &
    client=$!
    pids="$pids $client"
}

# wait_pair CLIENT_LIMIT SERVER_LIMIT: waits up to CLIENT_LIMIT seconds
# for the client to end, then up to SERVER_LIMIT for the server; sets
# client_rc and server_rc as wait_exit sets rc
wait_pair() {
    wait_exit "$client" "$1"
    client_rc=$rc
    wait_exit "$server" "$2"
    server_rc=$rc
}
