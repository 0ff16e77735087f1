#!/bin/sh
#
# uct_perftest client and server, two processes of this host, over the
# shared-memory transports on device memory, as the man page runs them:
#   check-sm.sh BUILDDIR
#  1. posix and sysv: am_lat short (8 B and 104 B, the am_short limit),
#     am_bw bcopy (8 B, 8 KiB), put_lat short (8 B, 4 KiB) and get_bw
#     bcopy (8 B, 64 KiB) into the buffers the md allocated, and
#     atomic_add_lat (4 and 8 bytes);
#  2. cma: put_bw and get_bw zcopy of 8 B, 64 KiB and 1 MiB;
#  3. a mode a transport lacks is refused (exit 2), in loopback: am_bw
#     zcopy over posix, put_bw short over cma.
# Each run: both exit 0, nothing on stderr but progress reports, one row
# per size with positive figures. Counts are small (a run takes a
# fraction of a second on idle CPUs, a few seconds on busy ones); figures
# are printed, never judged. posix and
# sysv missing from uct_info -d fail the check; cma missing is reported
# as a SKIP line with the reason uct_info gives (it needs ptrace access
# between processes of one user, which a Yama policy or a non-dumpable
# process takes away). Every process runs under -T and a bounded wait.

. "$(dirname "$0")/check-lib.sh"

builddir=${1:?usage: check-sm.sh BUILDDIR}
run_limit=30      # seconds a client may take
exit_limit=5      # seconds for the server to exit after its client
check_begin check-sm "$builddir"

# pair TEST MODE SIZES ITERS WARMUP: a server and a client over $tl; both
# exit 0, quiet, one row per size of TEST MODE with p50 and the message
# rate positive (latency tests: min <= p50 <= p99). Not the bandwidth:
# with the CPUs shared by more busy processes than there are CPUs, a
# ping-pong of 4 bytes can take milliseconds, which prints as 0.00 MiB/s
pair() {
    test=$1 mode=$2 sizes=$3 iters=$4 warmup=$5
    what="$tl $test -D $mode -s $sizes"
    tl_args="-x $tl -d memory"
    if ! start_server -T 10; then
        fail "$what: no server could listen (last try port $port)"
        return
    fi
    t0=$(now_ms)
    start_client -T 10 -t "$test" -D "$mode" -s "$sizes" -n "$iters" \
        -w "$warmup"
    wait_pair "$run_limit" "$exit_limit"
    elapsed=$(($(now_ms) - t0))

    want=$(echo "$sizes" | tr ',' '\n' | grep -c .)
    rows=$(awk -v t="$test" -v m="$mode" '$1 == t && $2 == m &&
        $6 > 0 && $10 > 0 &&
        (($5 == "-" && $7 == "-") || ($5 > 0 && $5 <= $6 && $6 <= $7))' \
        "$work/client.out" | wc -l)
    if [ "$client_rc" != 0 ] || [ "$server_rc" != 0 ]; then
        fail "$what: client exit $client_rc, server exit $server_rc"
    elif [ "$(error_lines "$work/client.err" | grep -c .)" -ne 0 ] ||
         [ "$(error_lines "$work/server.err" | grep -c .)" -ne 0 ]; then
        fail "$what: the client or the server wrote to stderr"
    elif [ "$rows" -ne "$want" ]; then
        fail "$what: $rows result rows with positive figures, expected $want"
    else
        printf 'PASS: %s: %s, p50 %s\n' "$what" "$(seconds "$elapsed")" \
            "$(awk -v t="$test" '$1 == t { printf "%s B %s us; ", $3, $6 }' \
                "$work/client.out")"
    fi
}

# refused ARGS...: a loopback run over $tl the transport cannot do exits
# 2 with the reason
refused() {
    "$perftest" -x "$tl" -d memory -l "$@" >"$work/client.out" \
        2>"$work/client.err"
    rc=$?
    rm -f "$work/server.out" "$work/server.err"
    if [ "$rc" -ne 2 ] || ! grep -q "not supported" "$work/client.err"; then
        fail "$tl $*: exit $rc, expected 2 and 'not supported'"
    else
        echo "PASS: $tl $*: refused: $(cat "$work/client.err")"
    fi
}

listed() {
    "$uct_info" -d -t "$1" 2>/dev/null | grep -q "Device: memory$"
}

for tl in posix sysv; do
    if ! listed "$tl"; then
        fail "$tl/memory: '$uct_info -d -t $tl' does not list it"
        continue
    fi
    pair am_lat short 8,104 300 30
    pair am_bw bcopy 8,8k 1000 100
    pair put_lat short 8,4k 300 30
    pair get_bw bcopy 8,64k 1000 100
    pair atomic_add_lat short 4,8 300 30
done
tl=posix
refused -t am_bw -D zcopy

tl=cma
if listed cma; then
    pair put_bw zcopy 8,64k,1m 100 10
    pair get_bw zcopy 8,64k,1m 100 10
    refused -t put_bw -D short
else
    echo "SKIP: cma/memory is not offered here:"
    "$uct_info" -d 2>&1 | sed -n 's/^# \(cma: .*\)/    \1/p'
fi

check_end
