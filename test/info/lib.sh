# Shared by the uct_info checks (sourced): a scratch directory, the
# caller's UCX_* settings kept out, and the helpers that run uct_info and
# count failures. finish MESSAGE ends a script.

: "${UCT_INFO:?set UCT_INFO to the uct_info program}"

work=$(mktemp -d /tmp/openuct-info-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0

# Keep the caller's settings out of the checks
unset UCX_LOG_LEVEL UCX_NET_DEVICES UCX_MODULES UCX_TCP_SNDBUF
export UCX_CONFIG_FILE=

# run NAME CMD...: stdout, stderr and exit status in $work/NAME.*
run() {
    name=$1
    shift
    "$@" >"$work/$name.out" 2>"$work/$name.err"
    echo $? >"$work/$name.rc"
}

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

expect_rc() {
    rc=$(cat "$work/$1.rc")
    [ "$rc" = "$2" ] || fail "$1: exit status $rc, expected $2"
}

# finish MESSAGE: exit 1 keeping the outputs if a check failed, else print
# PASS: MESSAGE
finish() {
    if [ $failures -ne 0 ]; then
        echo "$failures check(s) failed; outputs in $work" >&2
        trap - EXIT
        exit 1
    fi
    echo "PASS: $*"
}
