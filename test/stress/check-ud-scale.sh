#!/bin/bash
#
# uct_ud_scale's driver: ud_verbs at N endpoints from several client
# processes to one server interface, in the Soft-RoCE VM (test/rxe). Per
# size: the server on $UD_SCALE_SERVER_DEV, the clients alternately on
# the devices of $UD_SCALE_CLIENT_DEVS (by default across the veth pair,
# rxe_v1, and on the server's own device, rxe_v0); the driver starts them,
# says "go" once every client is ready, SIGKILLs every fifth client
# (ids 4, 9, ...) once round 1 is verified, tells the server, and waits
# for everyone (with fewer than 5 clients the last one is killed). The
# server prints the table; this prints the command that reproduces it.
#
# usage: check-ud-scale.sh BUILDDIR [EPS...]      (in the VM; default
#                                                  1000 10000)
#   test/rxe/run.sh -t 600 -- test/stress/check-ud-scale.sh build/debug 50000
#
# Environment: UD_SCALE_CLIENTS (client processes: 5, or 10 from 50,000
# endpoints), UD_SCALE_WINDOW (-w, 64 endpoints connecting at once per
# client; the transport paces the requests), UD_SCALE_TIMEOUT
# (UD_TIMEOUT of the server, 10s: an idle peer gets 3/4 of it to answer
# the idle sweep's probes, and in the emulated VM a loaded client stalls
# for over a second at 2s),
# UD_SCALE_SERVER_DEV (rxe_v0:1), UD_SCALE_CLIENT_DEVS ("rxe_v1:1
# rxe_v0:1"), UD_SCALE_LIMIT (-T, 240).
# rxe_lo cannot take part: a ud QP on rxe_lo and one on rxe_v0 do not
# reach each other in the VM (the packets go through lo and arrive at the
# device of lo, not at the one whose GID they name).
# Exit status: 0 when every size passed (correctness only: every AM and
# PUT verified, no error handler call on a surviving ep, the killed
# clients' peer eps reclaimed within 2 x UD_TIMEOUT, every process as
# expected), 1 otherwise.

set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
builddir=$(cd "${1:?usage: check-ud-scale.sh BUILDDIR [EPS...]}" && pwd) ||
    exit 1
shift
[ $# -gt 0 ] || set -- 1000 10000

: "${UD_SCALE_WINDOW:=64}"
: "${UD_SCALE_SERVER_DEV:=rxe_v0:1}"
: "${UD_SCALE_CLIENT_DEVS:=rxe_v1:1 rxe_v0:1}"
: "${UD_SCALE_LIMIT:=240}"

. "$here/lib.sh"
stress_init ud-scale

# The program itself rather than its libtool wrapper (2 s a start in the
# emulated guest), with the build's libraries
prog=$builddir/test/stress/uct_ud_scale
[ -x "$(dirname "$prog")/.libs/uct_ud_scale" ] &&
    prog=$(dirname "$prog")/.libs/uct_ud_scale
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
export LD_LIBRARY_PATH=$builddir/src/uct/.libs:$builddir/src/ucs/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# wait_for SECONDS WHAT TEST...: polls TEST every 0.1 s; 1 on timeout.
# TEST and the wait are shell builtins: a process started ten times a
# second takes CPU from the clients and the server in the emulated guest.
wait_for() {
    local limit=$1 what=$2 i
    shift 2
    for ((i = 0; i < limit * 10; i++)); do
        "$@" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null ||
            { echo "    the server exited while waiting for $what"; return 1; }
        nap 0.1
    done
    echo "    no $what in $limit s"
    return 1
}

all_files() {
    local dir=$1 prefix=$2 count=$3 i
    for ((i = 0; i < count; i++)); do
        [ -e "$dir/$prefix.$i" ] || return 1
    done
}

# kernel_counters: the rxe devices' nonzero counters and the packets the
# kernel dropped (softnet backlog, UDP), one line each: where packets that
# the transport saw lost went
kernel_counters() {
    local dev f v line=""
    for dev in /sys/class/infiniband/*; do
        [ -d "$dev" ] || continue
        line=""
        for f in "$dev"/ports/1/hw_counters/*; do
            [ -r "$f" ] && read -r v <"$f" && [ "$v" != 0 ] &&
                line="$line ${f##*/}=$v"
        done
        dev=${dev##*/}
        echo "$dev:${line:- (none)}"
    done
    local d=0 x
    while read -r _ x _; do
        d=$((d + 0x$x))
    done </proc/net/softnet_stat
    echo "softnet backlog drops: $d"
    awk '/^Udp:/ { if (!n++) { split($0, h) } else {
             for (i = 2; i <= NF; i++) if ($i != 0) printf " %s=%s", h[i], $i
             print "" } }' /proc/net/snmp | sed 's/^/udp:/'
}

# run EPS: one whole run; sets FAILED on failure
run() {
    local eps=$1 clients dir log i pid dev killed="" victims="" rc timeout
    local -a devs pids
    local start=$SECONDS
    clients=${UD_SCALE_CLIENTS:-$( [ "$eps" -ge 50000 ] && echo 10 || echo 5 )}
    timeout=${UD_SCALE_TIMEOUT:-10s}
    read -r -a devs <<<"$UD_SCALE_CLIENT_DEVS"
    dir=$LOGDIR/run-$eps
    mkdir -p "$dir"
    log=$dir/server.log
    step "$eps endpoints: 1 server on $UD_SCALE_SERVER_DEV, $clients" \
         "clients on ${devs[*]}"
    echo "    UCX_UD_TIMEOUT=$timeout uct_ud_scale" \
         "-d $UD_SCALE_SERVER_DEV -D DIR -n $eps -P $clients" \
         "-w $UD_SCALE_WINDOW -T $UD_SCALE_LIMIT"
    UCX_UD_TIMEOUT=$timeout "$prog" -d "$UD_SCALE_SERVER_DEV" \
        -D "$dir" -n "$eps" -P "$clients" -w "$UD_SCALE_WINDOW" \
        -T "$UD_SCALE_LIMIT" >"$log" 2>&1 &
    SERVER_PID=$!
    PIDS="$PIDS $SERVER_PID"
    if ! wait_for 30 "server address" test -e "$dir/server.addr"; then
        fail "$eps: the server did not start"; show_log "$log"; return
    fi
    for i in $(seq 0 $((clients - 1))); do
        dev=${devs[$((i % ${#devs[@]}))]}
        [ "$i" -eq 0 ] &&
            echo "    uct_ud_scale -d DEV -D DIR -n $eps -P $clients -i ID" \
                 "-w $UD_SCALE_WINDOW -T $UD_SCALE_LIMIT  (DEV: ${devs[*]}" \
                 "in turn)"
        "$prog" -d "$dev" -D "$dir" -n "$eps" -P "$clients" -i "$i" \
            -w "$UD_SCALE_WINDOW" -T "$UD_SCALE_LIMIT" \
            >"$dir/client$i.log" 2>&1 &
        pids[$i]=$!
        PIDS="$PIDS $!"
        [ $((i % 5)) -eq 4 ] && victims="$victims $i"
    done
    # a fifth of them, at least one
    [ -n "$victims" ] || victims=" $((clients - 1))"
    if ! wait_for 60 "ready clients" all_files "$dir" ready "$clients"; then
        fail "$eps: the clients did not start"
        show_log "$log"; cat "$dir"/client*.log; return
    fi
    echo "    $(grep -E '^(MemTotal|MemAvailable)' /proc/meminfo | tr -s ' ' |
          tr '\n' ' ')before go"
    touch "$dir/go"
    if ! wait_for "$UD_SCALE_LIMIT" "round 1" test -e "$dir/round1" ||
       ! wait_for 30 "client results" all_files "$dir" client "$clients"; then
        fail "$eps: round 1 did not complete"
        show_log "$log"; tail -n 5 "$dir"/client*.log; return
    fi
    echo "    $(grep -E '^MemAvailable' /proc/meminfo | tr -s ' ')" \
         "with every ep connected; RSS of the server" \
         "$(awk '/^VmRSS/ { print $2, $3 }' /proc/$SERVER_PID/status)"
    killed=$(date +%s.%N)
    for i in $victims; do
        kill -KILL "${pids[$i]}"
    done
    for i in $victims; do
        wait_exit "${pids[$i]}" 10
        [ "$RC" -eq 137 ] ||
            { fail "$eps: client $i: exit $RC after SIGKILL"; }
    done
    echo "$killed$victims" >"$dir/killed.tmp"
    mv "$dir/killed.tmp" "$dir/killed"
    echo "    SIGKILL to clients$victims"
    wait_exit "$SERVER_PID" "$UD_SCALE_LIMIT"
    rc=$RC
    for i in $(seq 0 $((clients - 1))); do
        [[ " $victims " == *" $i "* ]] && continue
        wait_exit "${pids[$i]}" 30
        if [ "$RC" -ne 0 ]; then
            fail "$eps: client $i exit $RC"
            show_log "$dir/client$i.log"
        fi
    done
    # the clients' status lines (every 10 s) only when something failed
    cat "$dir"/client*.log | grep -v -e ': OK$' -e ': at [0-9.]* s: round' |
        sed 's/^/    /'
    sed -n '/^uct_ud_scale: [0-9]* endpoints/,$p' "$log"
    grep -v '^uct_ud_scale: [0-9]* endpoints' "$log" |
        grep -E 'error|warn' | head -n 20 | sed 's/^/    | /'
    kernel_counters | sed 's/^/    kernel: /'
    echo "    reproduce: test/rxe/run.sh -t 600 --" \
         "test/stress/check-ud-scale.sh BUILDDIR $eps" \
         "(UD_SCALE_CLIENTS=$clients UD_SCALE_WINDOW=$UD_SCALE_WINDOW" \
         "UD_SCALE_TIMEOUT=$timeout)"
    if [ "$rc" -eq 0 ] && grep -q '^uct_ud_scale: OK' "$log"; then
        pass "$eps endpoints in $((SECONDS - start)) s"
    else
        fail "$eps endpoints: server exit $rc"
        show_log "$log" | head -n 60
        for i in $(seq 0 $((clients - 1))); do
            grep ': at [0-9.]* s: round' "$dir/client$i.log" | tail -n 8 |
                sed 's/^/    | /'
        done
    fi
}

for eps in "$@"; do
    run "$eps"
done
[ $FAILED -eq 0 ] && echo "check-ud-scale: all passed" ||
    echo "check-ud-scale: FAILED"
exit $FAILED
