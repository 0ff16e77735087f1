# What the check scripts of this folder share (sourced, not run): step
# and verdict lines, a log folder, starting a process that prints its
# port, waiting for a process with a bound, and the cleanup of every
# process they
# started (each script adds its processes' ids to PIDS).
#
#   . "$(dirname "$0")/lib.sh"
#   stress_init NAME      # LOGDIR=$TMPDIR/openuct-NAME.XXXXXX, traps

PIDS=""
FAILED=0

step() { echo "-- $*"; }
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; FAILED=1; }
show_log() { sed 's/^/    | /' "$1"; }

# Stops (and resumes, if stopped) every process in PIDS, then removes
# LOGDIR
stress_cleanup() {
    local pid
    for pid in $PIDS; do
        kill -CONT "$pid" 2>/dev/null
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in $PIDS; do
        wait "$pid" 2>/dev/null
    done
    rm -rf "$LOGDIR"
}

# Waits up to $2 seconds for process $1 to exit; sets RC (124: it was
# still running, then resumed if stopped and killed). A process waited
# for leaves PIDS: its id may be reused.
wait_exit() {
    local i pid keep=""
    for i in $(seq $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -CONT "$1" 2>/dev/null
        kill -KILL "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        RC=124
    else
        wait "$1"
        RC=$?
    fi
    for pid in $PIDS; do
        [ "$pid" = "$1" ] || keep="$keep $pid"
    done
    PIDS=$keep
}

# start_listener LOG PATTERN COMMAND...: starts COMMAND in the background
# with its output in LOG, bare so that signals reach it, and waits up to
# 10 s for a line of LOG to match the sed pattern PATTERN, whose group 1 is
# the port it listens on. Sets LISTENER_PID and PORT (empty on failure:
# returns 1 when the process ended or no port came).
start_listener() {
    local log=$1 pattern=$2 i
    shift 2
    "$@" >"$log" 2>&1 &
    LISTENER_PID=$!
    PIDS="$PIDS $LISTENER_PID"
    PORT=""
    for i in $(seq 100); do
        PORT=$(sed -n "s/$pattern/\1/p" "$log")
        [ -n "$PORT" ] && return 0
        kill -0 $LISTENER_PID 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

stress_init() {
    LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/openuct-$1.XXXXXX")
    trap stress_cleanup EXIT
}
