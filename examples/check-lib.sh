# Sourced by the example checks (check-hello.sh, check-cm.sh) after they
# set LOGDIR (a scratch directory) and SERVER_PID="" and FAILED=0.
#
# pass MSG / fail MSG: one line on stdout; fail sets FAILED=1.
# show_logs FILE...: the files, indented, control bytes made visible.
# On exit, a server still running (SERVER_PID) is stopped and LOGDIR
# removed.

pass() { echo "PASS $*"; }
fail() {
    echo "FAIL $*"
    FAILED=1
}

show_logs() {
    local f
    for f in "$@"; do
        echo "    $(basename "$f"):"
        sed 's/^/    | /' "$f" | cat -v
    done
}

check_cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill -TERM "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    rm -rf "$LOGDIR"
}
trap check_cleanup EXIT
