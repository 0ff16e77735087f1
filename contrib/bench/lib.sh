# shellcheck shell=bash
# The helpers the benchmark scripts of contrib/bench share. Each script
# sets prog (the name its messages start with) and sources this file from
# its own folder:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Nothing here runs when sourced but the setting of a few variables (the
# target counters, the process ids of the runners).
#
# The scripts set the variables read here (prog, the CPUs and timeouts)
# and read those set here (verdict, server_port):
# shellcheck disable=SC2034,SC2154

# ---------------------------------------------------------------- messages

die() {
    echo "$prog: $*" >&2
    exit 1
}

note() {
    echo "$prog: $*" >&2
}

# header_help FILE: the comment block at the top of FILE (after the #!
# line), without the leading "# "; the usage text of the scripts that keep
# it there
header_help() {
    awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$1"
}

# require_tools TOOL...: dies naming the first one missing
require_tools() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 || die "'$t' is missing (util-linux/coreutils)"
    done
}

# require_installed TOOL: dies when TOOL, which contrib/install-deps.sh
# installs, is missing
require_installed() {
    command -v "$1" >/dev/null 2>&1 ||
        die "$1 is not installed; run contrib/install-deps.sh as root"
}

# load_average: the 1-minute load average, nothing when unknown
load_average() {
    cut -d' ' -f1 /proc/loadavg 2>/dev/null
}

# -------------------------------------------------------------- statistics
#
# A figure is a number, "n/a" (that implementation cannot run the test)
# or "fail" (the run failed); in a list of rounds it may be tagged with
# its round as ROUND:FIGURE.

# vals[KEY]: the figures of KEY, one word a round; the script declares it
# (declare -A vals)

# record KEY FIGURE: appends FIGURE to vals[KEY]
record() {
    vals[$1]="${vals[$1]:-} $2"
}

is_number() {
    [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]
}

# fmt VALUE DECIMALS: a number with DECIMALS decimals, anything else as it
# is
fmt() {
    if is_number "$1"; then
        awk -v x="$1" -v d="$2" 'BEGIN { printf "%.*f", d, x }'
    else
        printf '%s' "$1"
    fi
}

# median FIGURES...: the median of the numbers (a figure ROUND:X counts as
# X): the middle one as it is, or the mean of the two middle ones in plain
# decimals; without numbers, "fail" when a figure is "fail", "n/a" when
# one is "n/a", "-" when there are no figures at all
median() {
    local v nums=() bad=-
    for v in "$@"; do
        v=${v#*:}
        case $v in
        fail) bad=fail ;;
        n/a) [ "$bad" = fail ] || bad=n/a ;;
        *) nums+=("$v") ;;
        esac
    done
    if [ ${#nums[@]} -eq 0 ]; then
        echo "$bad"
        return
    fi
    printf '%s\n' "${nums[@]}" | sort -g |
        awk '{ v[NR] = $1 }
             END {
                 if (NR % 2) { print v[(NR + 1) / 2]; exit }
                 # not print: awk prints a fraction with six digits
                 # ("%.6g"), a large one as 1.23457e+07
                 m = sprintf("%.6f", (v[NR / 2] + v[NR / 2 + 1]) / 2)
                 sub(/0+$/, "", m)
                 sub(/\.$/, "", m)
                 print m
             }'
}

# spread FIGURES...: (max - min) / median of the numbers, in percent with
# one decimal; nothing for fewer than two numbers
spread() {
    local med v
    med=$(median "$@")
    is_number "$med" || return 0
    for v in "$@"; do
        v=${v#*:}
        is_number "$v" && echo "$v"
    done |
        awk -v m="$med" 'NR == 1 { lo = hi = $1 }
                         { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
                         END { if (NR > 1 && m > 0)
                                   printf "%.1f\n", 100 * (hi - lo) / m }'
}

# ratio A B [DECIMALS]: A / B with DECIMALS decimals (default 3); "-" when
# either is no number or B is not positive
ratio() {
    if is_number "$1" && is_number "$2" &&
            awk -v b="$2" 'BEGIN { exit !(b > 0) }'; then
        awk -v a="$1" -v b="$2" -v d="${3:-3}" 'BEGIN { printf "%.*f", d, a / b }'
    else
        printf -- -
    fi
}

n_passed=0
n_missed=0

# judge VALUE OP LIMIT: sets verdict to PASS or MISS (VALUE OP LIMIT, OP
# being <= or >=) and counts it in n_passed or n_missed; to n/a, not
# counted, when VALUE is no number
judge() {
    if ! is_number "$1"; then
        verdict=n/a
    elif awk -v x="$1" -v l="$3" -v op="$2" \
            'BEGIN { exit !((op == "<=") ? (x <= l) : (x >= l)) }'; then
        n_passed=$((n_passed + 1))
        verdict=PASS
    else
        n_missed=$((n_missed + 1))
        verdict=MISS
    fi
}

# --------------------------------------------------------------- processes
#
# The script sets server_cpu and client_cpu (the CPUs the two sides are
# pinned to) and server_timeout and client_timeout (seconds a server may
# live, a client run may take); every process runs in its own session
# (setsid: its own process group and scheduler autogroup).

server_pid=""
server_port=""
client_pid=""

# True while PID runs (a zombie counts as ended)
alive() {
    local state
    state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# stop_group PID: ends the process group that PID leads (started under
# setsid), reaps PID and returns its exit code
stop_group() {
    local pid=$1 i
    [ -n "$pid" ] || return 0
    if alive "$pid"; then
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
        for ((i = 0; i < 40; i++)); do
            alive "$pid" || break
            sleep 0.05
        done
        if alive "$pid"; then
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
        fi
    fi
    wait "$pid" 2>/dev/null
}

# True when something listens on TCP port $1 (any address)
port_listening() {
    local hex files=()
    hex=$(printf '%04X' "$1")
    [ -r /proc/net/tcp ] && files+=(/proc/net/tcp)
    [ -r /proc/net/tcp6 ] && files+=(/proc/net/tcp6)
    [ ${#files[@]} -gt 0 ] || return 1
    awk -v p="$hex" '$4 == "0A" { n = split($2, a, ":"); if (a[n] == p) f = 1 }
                     END { exit !f }' "${files[@]}"
}

# A random port outside the ephemeral range that nothing listens on
pick_port() {
    local lo=32768 hi=60999 base span port i
    read -r lo hi 2>/dev/null </proc/sys/net/ipv4/ip_local_port_range
    if [ "$lo" -gt 12000 ]; then
        base=10000 span=$((lo - 10000))
    elif [ "$hi" -lt 64000 ]; then
        base=$((hi + 1)) span=$((65535 - hi))
    else
        base=1024 span=64000
    fi
    for ((i = 0; i < 50; i++)); do
        port=$((base + (RANDOM * 32768 + RANDOM) % span))
        if ! port_listening "$port"; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# start_server LOG CMD...: starts CMD on the server CPU in its own session,
# with every @PORT@ in its words replaced by a free port, and waits until
# the port listens. Sets server_pid and server_port. Retries other ports
# when the server cannot bind.
start_server() {
    local log=$1 attempt port pid i w cmd
    shift
    for ((attempt = 1; attempt <= 8; attempt++)); do
        port=$(pick_port) || continue
        cmd=()
        for w in "$@"; do
            cmd+=("${w//@PORT@/$port}")
        done
        setsid timeout -k 5 "$server_timeout" \
            taskset -c "$server_cpu" stdbuf -oL "${cmd[@]}" >"$log" 2>&1 &
        pid=$!
        for ((i = 0; i < 200; i++)); do
            if port_listening "$port"; then
                server_pid=$pid
                server_port=$port
                return 0
            fi
            alive "$pid" || break
            sleep 0.05
        done
        stop_group "$pid"
    done
    return 1
}

# finish_server SECS: waits up to SECS seconds for the server to end by
# itself, then ends it; returns its exit code
finish_server() {
    local secs=$1 i rc
    for ((i = 0; i < secs * 20; i++)); do
        alive "$server_pid" || break
        sleep 0.05
    done
    stop_group "$server_pid"
    rc=$?
    server_pid=""
    return $rc
}

# run_client LOG CMD...: runs CMD on the client CPU in its own session,
# bounded by client_timeout, its output in LOG and LOG.err; returns its
# exit code (124: timed out)
run_client() {
    local log=$1 rc
    shift
    setsid -w timeout -k 5 "$client_timeout" \
        taskset -c "$client_cpu" stdbuf -oL "$@" >"$log" 2>"$log.err" &
    client_pid=$!
    wait "$client_pid"
    rc=$?
    client_pid=""
    return $rc
}

# bench_work: creates the temporary directory work for the runs' output
# and sets the traps: on exit the runners' processes are ended, work is
# copied to keep_dir when that is set, and removed
bench_work() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") ||
        die "cannot create a temporary directory"
    trap bench_cleanup EXIT
    trap 'note "interrupted"; exit 130' INT
    trap 'exit 143' TERM
}

# shellcheck disable=SC2317  # runs from the traps
bench_cleanup() {
    trap - EXIT INT TERM
    stop_group "$client_pid" || :
    stop_group "$server_pid" || :
    if [ -n "${keep_dir:-}" ]; then
        mkdir -p "$keep_dir" && cp -r "$work"/. "$keep_dir"/ &&
            note "raw output kept in $keep_dir"
    fi
    rm -rf "$work"
}
