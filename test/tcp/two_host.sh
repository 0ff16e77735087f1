#!/bin/bash
#
# Streams 200 MB of verified AMs and PUTs between two network namespaces
# joined by a veth pair, as between two hosts, through one endpoint and
# through 64; then again over a link with 1 ms delay and 1% loss (netem),
# where the kernel has sch_netem.
#
# Needs root and iproute2; exits 77 (skip) without them.

. "$(dirname "$0")/common.sh"

BYTES=${TWO_HOST_BYTES:-200m}
PORT=13373

reason=$(netns_unavailable) && {
    echo "SKIP two_host: $reason"
    exit 77
}
trap cleanup EXIT
[ -x "$STREAM_CHECK" ] || { echo "FAIL: $STREAM_CHECK not built"; exit 1; }

# Server in A on vA, client in B on vB; $1 names the run, $2 limits its
# time, $3 is the number of endpoints
stream() {
    local name=$1 limit=$2 eps=$3 server_pid client_rc
    local slog="$LOGDIR/$name.server" clog="$LOGDIR/$name.client"

    step "$name: server in $NS_A on vA, client in $NS_B streams $BYTES" \
         "over $eps endpoint(s)"
    timeout -s KILL "$limit" ip netns exec "$NS_A" "$STREAM_CHECK" -d vA \
        -p $PORT >"$slog" 2>&1 &
    server_pid=$!
    PIDS="$PIDS $server_pid"
    timeout -s KILL "$limit" ip netns exec "$NS_B" "$STREAM_CHECK" -d vB \
        -p $PORT -b "$BYTES" -c "$eps" $ADDR_A >"$clog" 2>&1
    client_rc=$?
    wait_exit $server_pid 10

    if [ $RC -eq 0 ] && [ $client_rc -eq 0 ] && grep -q '^OK ' "$slog"; then
        pass "$name: $(grep '^OK ' "$slog"); $(grep 'MB/s' "$clog" |
                                                sed 's/.*, //')"
    else
        fail "$name: server exit $RC, client exit $client_rc"
        echo "    server:"; show_log "$slog"
        echo "    client:"; show_log "$clog"
    fi
}

netns_setup || { echo "FAIL: could not set up the namespaces"; exit 1; }
stream veth 120 1
stream veth-64 120 64

step "add netem (delay 1ms, loss 1%) on vA"
if ! command -v tc >/dev/null 2>&1; then
    echo "SKIP netem: needs the tc tool (Debian package iproute2)"
elif out=$(ip netns exec "$NS_A" tc qdisc add dev vA root netem delay 1ms \
           loss 1% 2>&1); then
    stream veth-netem 300 1
    stream veth-netem-64 300 64
elif echo "$out" | grep -qi -e unknown -e "no such file" -e "not supp"; then
    echo "SKIP netem: the host kernel has no sch_netem; make check-rxe" \
         "runs it in the Soft-RoCE VM"
else
    fail "tc qdisc add netem: $out"
fi

exit $FAILED
