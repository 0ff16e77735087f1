#!/bin/bash
#
# check-ucx-hello.sh PREFIX WORKDIR: builds UCX's own uct_hello_world.c,
# unmodified, against the openuct installed in PREFIX and runs it as a
# server and a client over tcp on lo and over posix on device memory, with
# -i, -b and -z, checking that the server received the text. A mode that
# PREFIX/bin/uct_info -d does not list for the transport (am_zcopy of
# posix) is not skipped: the server and the client given it must each end
# at once saying they found no transport for it (UCX's example exits 0
# then, so its message is what is checked).
#
# The example comes from Debian 12's libucx-dev package (UCX 1.13), which
# is fetched with apt-get download and unpacked with dpkg-deb -x into
# WORKDIR/ucx-dev; it is never installed, so its headers cannot shadow
# ours. Only the two example files are used: the compiler sees openuct's
# headers and links openuct's libraries (-luct -lucs).
#
# Used by "make installcheck". OPENUCT_UCX_DEB=FILE uses a libucx-dev .deb
# already downloaded (see ucx-lib.sh). Exits non-zero with a message on failure.
set -u -o pipefail

prog=check-ucx-hello
fail_count=0

# shellcheck source-path=SCRIPTDIR source=ucx-lib.sh
. "$(dirname "$0")/ucx-lib.sh"
ucx_args "$@"

unpacked=$work/ucx-dev
examples=$unpacked/usr/share/doc/libucx-dev/examples

# ------------------------------------------------ fetch the UCX example
ucx_deb_unpack "$work"
for f in uct_hello_world.c hello_world_util.h; do
    [ -f "$examples/$f" ] || die "libucx-dev has no examples/$f"
done
echo "$prog: UCX example from $ucx_version"

# ------------------------------------------ build it against openuct

# Only the example's own directory and openuct's install are on the
# include path: never the unpacked package's usr/include.
hello=$work/uct_hello_world.ucx-example
${CC:-cc} -std=gnu11 -O2 -Wall -I"$examples" -I"$prefix/include" \
    "$examples/uct_hello_world.c" -o "$hello" -L"$libdir" \
    -Wl,-rpath,"$libdir" -luct -lucs 2>"$work/cc.log" || {
    cat "$work/cc.log" >&2
    die "UCX's uct_hello_world.c does not build against $prefix/include"
}
if grep -q "$unpacked/usr/include" "$work/cc.log"; then
    die "the build read a header of the unpacked UCX package"
fi

# --------------------------------------- run it: server, client, on lo
# The example takes its port on the command line, so the script picks one.
# A port inside the kernel's ephemeral range can be taken by any outgoing
# connection between the check and the server's bind() (other checks run
# beside this one), so ports come from below that range, and one in use in
# any state is skipped.
eph_lo=32768
read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null ||
    eph_lo=32768
[ "$eph_lo" -gt 12000 ] 2>/dev/null || eph_lo=32768
free_port() {
    local p
    for _ in $(seq 50); do
        p=$((10000 + RANDOM % (eph_lo - 10000)))
        if ! ss -Htan "sport = :$p" 2>/dev/null | grep -q .; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

listening() {
    ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# start_server MODE: starts the example as a server over $tl/$dev on a free
# port and waits until it listens; sets port and spid. A server that could
# not bind (the port was taken after the check) is retried on another port.
start_server() {
    local try
    for try in 1 2 3; do
        port=$(free_port) || die "no free tcp port found"
        timeout 60 "$hello" -t "$tl" -d "$dev" -p "$port" "$1" >"$out" 2>&1 &
        spid=$!
        for _ in $(seq 200); do
            listening "$port" && return 0
            kill -0 "$spid" 2>/dev/null || break
            sleep 0.05
        done
        listening "$port" && return 0
        kill "$spid" 2>/dev/null
        wait "$spid"
        grep -q "Failed to open server socket" "$out" || return 1
        echo "$prog: $1: port $port was taken before the server bound it;" \
            "trying another (attempt $try)" >&2
    done
    return 1
}

# The capability lines the installed uct_info -d prints for transport $1
# on device $2; nothing when it does not list them
uct_info=$prefix/bin/uct_info
[ -x "$uct_info" ] || die "no $uct_info; run make install"
tl_caps() {
    "$uct_info" -d -t "$1" 2>/dev/null |
        awk -v dev="$2" '$2 == "Transport:" { on = 0 }
                         $2 == "Device:" { on = ($3 == dev) }
                         on'
}

# A mode $tl/$dev does not offer: the server and the client each end
# within the timeout, saying no transport fits, and send nothing
check_declined() {
    local mode=$1 role log rc
    for role in server client; do
        log=$work/$tl-$role$mode.log
        if [ $role = server ]; then
            timeout 60 "$hello" -t "$tl" -d "$dev" -p 1 "$mode" >"$log" 2>&1
        else
            timeout 60 "$hello" -t "$tl" -d "$dev" -p 1 -n 127.0.0.1 \
                "$mode" >"$log" 2>&1
        fi
        rc=$?
        if [ "$rc" -eq 124 ] ||
           ! grep -q "^No supported (dev/tl) found ($dev/$tl)" "$log" ||
           grep -q "TEST SUCCESS" "$log"; then
            fail "$tl/$dev $mode ($role): exit $rc, expected 'No supported" \
                "(dev/tl) found ($dev/$tl)' (uct_info lists no ${func[$mode]#uct_ep_})"
            tail -n 5 "$log" >&2
        else
            echo "PASS UCX uct_hello_world $mode ($role) on openuct" \
                "$tl/$dev: not offered, declined:" \
                "$(grep -v '^INFO' "$log" | tr '\n' ' ')"
        fi
    done
}

# the text the example sends: -s 16 gives 15 letters and a NUL
text=ABCDEFGHIJKLMNO
declare -A func=([-i]=uct_ep_am_short [-b]=uct_ep_am_bcopy [-z]=uct_ep_am_zcopy)
runs=0
for tl_dev in tcp/lo posix/memory; do
    tl=${tl_dev%/*}
    dev=${tl_dev#*/}
    caps=$(tl_caps "$tl" "$dev")
    if [ -z "$caps" ]; then
        fail "$tl/$dev: '$uct_info -d -t $tl' does not list it"
        continue
    fi
    for mode in -i -b -z; do
        runs=$((runs + 1))
        if ! printf '%s\n' "$caps" | grep -q "^# *${func[$mode]#uct_ep_}: "
        then
            check_declined "$mode"
            continue
        fi
        out=$work/$tl-server$mode.log
        if ! start_server "$mode"; then
            fail "$tl/$dev $mode: the server did not listen on port $port:"
            tail -n 5 "$out" >&2
            continue
        fi
        timeout 60 "$hello" -t "$tl" -d "$dev" -p "$port" -n 127.0.0.1 \
            $mode >"$work/$tl-client$mode.log" 2>&1
        crc=$?
        wait "$spid"
        src=$?
        if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
            fail "$tl/$dev $mode: server exit $src, client exit $crc"
            tail -n 5 "$out" "$work/$tl-client$mode.log" >&2
        elif ! grep -q \
                "^\[callback\] ${func[$mode]} sent $text (16 bytes)" \
                "$out"; then
            fail "$tl/$dev $mode: the server did not print the text it" \
                "received"
            tail -n 8 "$out" >&2
        else
            echo "PASS UCX uct_hello_world $mode on openuct $tl/$dev:" \
                "$(grep '^\[callback\]' "$out")"
        fi
    done
done

[ "$fail_count" -eq 0 ] || die "$fail_count of $runs runs failed"
echo "$prog: UCX's uct_hello_world.c builds unmodified and runs on openuct"
