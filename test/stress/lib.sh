# What the check scripts of this folder share (sourced, not run): step
# and verdict lines, a log folder, and the cleanup of every process they
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

stress_init() {
    LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/openuct-$1.XXXXXX")
    trap stress_cleanup EXIT
}
