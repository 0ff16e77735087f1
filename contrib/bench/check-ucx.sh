#!/bin/bash
# The benchmark harness and the hello world use only the public UCT API:
# this builds both against Debian 12's UCX 1.13 and runs them, next to
# openuct's builds, so that a change which ties them to openuct fails.
#
#   contrib/bench/check-ucx.sh BUILDDIR
#
# 1. contrib/bench/perf_compare.sh -q -r 1 (fetches and unpacks UCX 1.13
#    next to BUILDDIR, builds uct_perftest against it): every run of the
#    core rows must give figures for openuct's uct_perftest, the harness
#    on UCX and ucx_perftest, over tcp/lo (client/server) and self.
# 2. examples/uct_hello_world.c compiled against UCX, server and client
#    over UCX's tcp on lo with -i, -b and -z: the server prints the text.
set -u -o pipefail

prog=check-ucx
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
builddir=$(cd "${1:?usage: check-ucx.sh BUILDDIR}" && pwd) ||
    { echo "$prog: no build tree '$1'" >&2; exit 1; }
ucx_root=$(dirname "$builddir")/ucx-1.13
work=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# ------------------------------------------- one harness, both libraries
if ! "$top/contrib/bench/perf_compare.sh" -b "$builddir" -u "$ucx_root" \
        -q -r 1 -o "$work/runs" >"$work/table" 2>"$work/progress"; then
    tail -n 20 "$work/progress"
    fail "perf_compare.sh exited non-zero"
else
    # uct_perftest CSV: p50 (field 5) and message rate (field 8) positive
    for impl in oct ucx; do
        for key in am_lat am_rate self_am_lat self_am_lat1 self_am_rate; do
            log=$work/runs/r1-$impl-$key.log
            if awk -F, '$1 != "test" && NF == 10 && $5 > 0 && $8 > 0 { f = 1 }
                        END { exit !f }' "$log" 2>/dev/null; then
                echo "PASS $impl $key: $(tail -n 1 "$log")"
            else
                fail "$impl $key gave no figures: $(cat "$log" "$log.err" 2>/dev/null | tail -n 3)"
            fi
        done
    done
    # ucx_perftest CSV: iterations,p50,...,overall_mr (it has only the
    # one-message loopback latency, self_am_lat1)
    for key in am_lat am_rate self_am_lat1 self_am_rate; do
        log=$work/runs/r1-uxp-$key.log
        if grep -qE '^ *[0-9]+,[0-9.]+,' "$log" 2>/dev/null; then
            echo "PASS ucx_perftest $key: $(grep -E '^ *[0-9]+,' "$log" | tail -n 1)"
        else
            fail "ucx_perftest $key gave no figures"
        fi
    done
    grep -q '^tcp am_lat short 8 B p50' "$work/table" ||
        fail "no table printed"
fi

# ---------------------------------------------- the hello world on UCX
lib=$(dirname "$(find "$ucx_root" -name 'libuct.so.0' 2>/dev/null | head -n 1)")
hello=$work/uct_hello_world.ucx
if [ ! -d "$lib/ucx" ]; then
    fail "UCX is not unpacked in $ucx_root"
elif ! ${CC:-cc} -O2 -std=gnu11 -Wall -Werror -I"$ucx_root/usr/include" \
        "$top/examples/uct_hello_world.c" -o "$hello" -L"$lib" \
        -Wl,-rpath-link,"$lib" -Wl,-rpath,"$lib" -luct -lucs \
        2>"$work/cc.err"; then
    cat "$work/cc.err"
    fail "uct_hello_world.c does not build against UCX 1.13"
else
    export LD_LIBRARY_PATH=$lib UCX_MODULE_DIR=$lib/ucx
    for flag in -i -b -z; do
        timeout 30 "$hello" -t tcp -d lo -p 0 >"$work/s$flag" 2>&1 &
        spid=$!
        port=""
        for _ in $(seq 100); do
            port=$(sed -n 's/^waiting for a client on port \([0-9]*\)$/\1/p' \
                   "$work/s$flag")
            [ -n "$port" ] && break
            sleep 0.1
        done
        crc=255
        if [ -n "$port" ]; then
            timeout 30 "$hello" -t tcp -d lo -p "$port" -n 127.0.0.1 $flag \
                >"$work/c$flag" 2>&1
            crc=$?
        fi
        wait $spid
        src=$?
        if [ $crc -eq 0 ] && [ $src -eq 0 ] &&
                grep -q '^received [0-9]* bytes: hello world' "$work/s$flag"; then
            echo "PASS uct_hello_world on UCX $flag: $(grep '^received' "$work/s$flag")"
        else
            fail "uct_hello_world on UCX $flag: server exit $src, client exit $crc"
            tail -n 5 "$work/s$flag" "$work/c$flag"
        fi
    done
fi

if [ $failures -ne 0 ]; then
    echo "$prog: $failures failure(s)"
    exit 1
fi
echo "$prog: all passed"
