#!/bin/sh
# uct_info with bad settings: one error (or warning) line that says what is
# wrong, and a non-zero exit status with a line saying why.
set -u

. "${INFO_SRCDIR:-$(dirname "$0")}/lib.sh"

# expect_lines NAME COUNT PATTERN: COUNT lines of stderr match PATTERN
expect_lines() {
    count=$(grep -c -- "$3" "$work/$1.err")
    if [ "$count" != "$2" ]; then
        fail "$1: $count stderr lines match '$3', expected $2"
        sed 's/^/    /' "$work/$1.err" >&2
    fi
}

# log lines of a level: "[time] [host:pid:tid] file.c:123  error ..."
log_level() {
    echo "\\.c:[0-9]* *$1 "
}

run probe "$UCT_INFO" -d -t tcp
if [ "$(cat "$work/probe.rc")" != 0 ]; then
    echo "SKIP: no tcp transport (uct_info -d -t tcp failed)"
    exit 77
fi
expect_lines probe 0 "$(log_level error)"

bad="invalid value for UCX_TCP_SNDBUF: 'abc' (expected: memory units"
why="uct_info: the configuration is invalid"

# one transport, every transport, the configuration listing
for args in "-d -t tcp" "-d" "-c"; do
    name="sndbuf$(echo "$args" | tr -d ' ')"
    # shellcheck disable=SC2086
    UCX_TCP_SNDBUF=abc run "$name" "$UCT_INFO" $args
    expect_rc "$name" 1
    expect_lines "$name" 1 "$bad"
    expect_lines "$name" 1 "$(log_level error)"
    expect_lines "$name" 1 "$why"
done
grep -q "^UCX_TCP_SNDBUF=auto$" "$work/sndbuf-c.out" ||
    fail "uct_info -c does not print the default of UCX_TCP_SNDBUF"
grep -q "tcp/lo: not opened: cannot read the configuration of tcp" \
    "$work/sndbuf-d-ttcp.out" ||
    fail "uct_info -d -t tcp does not say why tcp/lo is not opened"

# the tcp connection manager: listed with its limit; a value over its
# range is one error line naming the variable, and exit 1
run cm "$UCT_INFO" -d -t tcp
grep -q "^# Connection manager: tcp$" "$work/cm.out" ||
    fail "uct_info -d -t tcp does not list the tcp connection manager"
grep -q "^#      max_conn_priv: 2048 bytes$" "$work/cm.out" ||
    fail "uct_info -d -t tcp does not print the cm's max_conn_priv"
UCX_TCP_CM_PRIV_DATA_LEN=100k run cmbig "$UCT_INFO" -d -t tcp
expect_rc cmbig 1
expect_lines cmbig 1 "UCX_TCP_CM_PRIV_DATA_LEN=102400 is over the limit"
expect_lines cmbig 1 "$(log_level error)"
expect_lines cmbig 1 "$why"
UCX_TCP_CM_PRIV_DATA_LEN=4k run cm4k "$UCT_INFO" -d -t tcp
expect_rc cm4k 0
grep -q "^#      max_conn_priv: 4096 bytes$" "$work/cm4k.out" ||
    fail "UCX_TCP_CM_PRIV_DATA_LEN=4k does not give max_conn_priv 4096"

# a good value changes nothing
UCX_TCP_SNDBUF=64k run good "$UCT_INFO" -d -t tcp
expect_rc good 0
expect_lines good 0 "$(log_level error)"

# empty UCX_NET_DEVICES: one warning for all memory domains
UCX_NET_DEVICES= run netdev "$UCT_INFO" -d
expect_rc netdev 0
expect_lines netdev 1 "UCX_NET_DEVICES is empty: no network device is selected"
expect_lines netdev 1 "$(log_level warn)"
if grep -q "Transport: tcp" "$work/netdev.out"; then
    fail "UCX_NET_DEVICES= still lists tcp"
fi

# unknown module name: one warning with the available modules
UCX_MODULES=nonexistent run modules "$UCT_INFO" -d
expect_lines modules 1 "UCX_MODULES=nonexistent: no uct module named \
'nonexistent'; available uct modules: .*tcp"
expect_lines modules 1 "$(log_level warn)"

finish "uct_info reports bad settings once and exits non-zero"
