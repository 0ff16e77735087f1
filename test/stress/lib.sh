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

# nap SECONDS: a pause that starts no process, a read with a timeout on a
# FIFO that nobody writes. The waits below poll ten times a second; in the
# emulated VM of test/rxe, starting sleep (and a test command) that often
# took a fifth of the guest's two CPUs from the processes under test.
NAP_FD=""
nap() {
    local fifo
    if [ -z "$NAP_FD" ]; then
        fifo=$(mktemp -u "${TMPDIR:-/tmp}/openuct-nap.XXXXXX")
        if ! mkfifo -m 600 "$fifo" || ! exec {NAP_FD}<>"$fifo"; then
            NAP_FD=""
            sleep "$1"
            return 0
        fi
        rm -f "$fifo"
    fi
    read -r -t "$1" -u "$NAP_FD" _ || :
}

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
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$1" 2>/dev/null || break
        nap 0.1
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
    for ((i = 0; i < 100; i++)); do
        PORT=$(sed -n "s/$pattern/\1/p" "$log")
        [ -n "$PORT" ] && return 0
        kill -0 $LISTENER_PID 2>/dev/null || return 1
        nap 0.1
    done
    return 1
}

stress_init() {
    LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/openuct-$1.XXXXXX")
    trap stress_cleanup EXIT
}
