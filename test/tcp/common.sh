# Shared by the tcp multi-process checks (sourced, not run).
#
# STREAM_CHECK and UCT_INFO point at the programs (make check sets them);
# by default they are looked up relative to the current directory, which
# is test/tcp of the build tree.

: "${STREAM_CHECK:=../stress/uct_stream_check}"
: "${UCT_INFO:=../../src/tools/info/uct_info}"

# Peer failure status strings (src/ucs/type/status.c)
STATUS_RESET="Connection reset by remote peer"
STATUS_TIMEOUT="Endpoint timeout"

NS_A="openuct-a-$$"
NS_B="openuct-b-$$"
ADDR_A=10.79.0.1
ADDR_B=10.79.0.2
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/openuct-tcp.XXXXXX")
PIDS=""
FAILED=0

step() { echo "-- $*"; }
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; FAILED=1; }

# A port for the control connection on loopback, below the ephemeral
# range (32768 and up) so that no outgoing connection holds it
pick_port() {
    echo $((20000 + ($$ * 7 + ${1:-0}) % 12000))
}

show_log() {
    sed 's/^/    | /' "$1"
}

# Whether we can build network namespaces; prints why not
netns_unavailable() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "needs root to create network namespaces"
    elif ! command -v ip >/dev/null 2>&1; then
        echo "needs the ip tool (Debian package iproute2)"
    elif ! ip netns add "$NS_A" 2>/dev/null; then
        echo "ip netns add failed (no namespace support here?)"
    else
        ip netns del "$NS_A"
        return 1
    fi
    return 0
}

# Namespaces A and B joined by veth vA (10.79.0.1) <-> vB (10.79.0.2)
netns_setup() {
    step "create namespaces $NS_A/$NS_B joined by veth" \
         "vA $ADDR_A <-> vB $ADDR_B"
    ip netns add "$NS_A" &&
        ip netns add "$NS_B" &&
        ip -n "$NS_A" link add vA type veth peer name vB netns "$NS_B" &&
        ip -n "$NS_A" addr add "$ADDR_A/24" dev vA &&
        ip -n "$NS_B" addr add "$ADDR_B/24" dev vB &&
        ip -n "$NS_A" link set lo up &&
        ip -n "$NS_B" link set lo up &&
        ip -n "$NS_A" link set vA up &&
        ip -n "$NS_B" link set vB up &&
        wait_link_up "$NS_A" vA && wait_link_up "$NS_B" vB
}

# The transport lists a device once it is running (carrier up), which
# the kernel reports a moment after "link set up"
wait_link_up() {
    local i
    for i in $(seq 50); do
        ip -n "$1" -o link show "$2" | grep -q 'state UP' && return 0
        sleep 0.1
    done
    echo "link $2 in $1 did not come up"
    return 1
}

# Processes inside our namespaces are ours; end them before deleting
netns_cleanup() {
    local ns pid
    for ns in "$NS_A" "$NS_B"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null
        done
    done
    ip netns del "$NS_A" 2>/dev/null
    ip netns del "$NS_B" 2>/dev/null
    true
}

# "timeout" passes TERM on to the program it runs (it cannot pass KILL)
stop_pid() {
    local i
    kill -TERM "$1" 2>/dev/null || return 0
    for i in $(seq 20); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$1" 2>/dev/null
}

cleanup() {
    local pid
    for pid in $PIDS; do
        stop_pid "$pid"
    done
    for pid in $PIDS; do
        wait "$pid" 2>/dev/null
    done
    netns_cleanup
    rm -rf "$LOGDIR"
}

# Waits up to $2 seconds for a line in log $1 matching the grep
# arguments that follow
wait_for_line() {
    local log=$1 deadline=$(($(date +%s) + $2))
    shift 2
    while [ "$(date +%s)" -lt "$deadline" ]; do
        grep -q "$@" "$log" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# Waits up to $2 seconds for process $1 to exit; sets RC (124: still
# running, then killed)
wait_exit() {
    local i
    for i in $(seq $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then
        stop_pid "$1"
        wait "$1" 2>/dev/null
        RC=124
    else
        wait "$1"
        RC=$?
    fi
}
