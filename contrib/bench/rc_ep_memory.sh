#!/bin/bash
# Memory per connected rc_verbs endpoint: runs test/bench/rc_ep_memory in
# the Soft-RoCE test VM (test/rxe) for several endpoint counts and send
# queue lengths, one process each, in one boot, and prints a table.
#
#   contrib/bench/rc_ep_memory.sh [-b BUILDDIR] [-d DEV:PORT] [-c CONFIGS]
#
#   -b BUILDDIR  build tree with test/bench/rc_ep_memory (default
#                build/release, $OPENUCT_BUILD_DIR/release when set)
#   -d DEV:PORT  rc_verbs device in the VM (default rxe_lo:1)
#   -c CONFIGS   space-separated EPS:TX_QUEUE_LEN runs (default
#                "1000:255 1000:256 1000:31 1000:15 4000:255 4000:256 4000:31")
#   -k           also print each run's full output
#
# Exit code 0 with the table; 1 when a run failed; 77 when the VM could
# not start. See contrib/bench/README.md.
set -u -o pipefail

prog=rc_ep_memory
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
top=$(cd "$(dirname "$self")/../.." && pwd)

if [ "${1:-}" = --guest ]; then
    # ---- in the VM: $2 program, $3 device, $4 configs, $5 full output
    bin=$2 dev=$3 configs=$4 full=$5 status=0 first=1 out=""
    echo "@info@ kernel $(uname -r), $(grep -m1 MemTotal /proc/meminfo | xargs)"
    for c in $configs; do
        eps=${c%:*} txq=${c#*:}
        args=(-n "$eps" -d "$dev")
        # the first run also measures bare libibverbs QPs
        [ $first -eq 1 ] && args+=(-v)
        first=0
        echo "$prog: $eps endpoints, UCX_IB_TX_QUEUE_LEN=$txq" >&2
        sync
        echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
        out=$(UCX_IB_TX_QUEUE_LEN=$txq timeout 600 "$bin" "${args[@]}" 2>&1)
        rc=$?
        if [ "$full" -eq 1 ] || [ $rc -ne 0 ]; then
            echo "---- $bin ${args[*]} (UCX_IB_TX_QUEUE_LEN=$txq), exit $rc" >&2
            echo "$out" >&2
        fi
        if [ $rc -ne 0 ] || ! grep -q '^result ' <<<"$out"; then
            echo "@fail@ $eps $txq exit $rc"
            status=1
            continue
        fi
        grep '^result ' <<<"$out" | sed 's/^result /@res@ /'
        grep '^breakdown: ' <<<"$out" | sed 's/^/@info@ /'
    done
    exit $status
fi

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$self"; }
die() { echo "$prog: $*" >&2; exit 1; }

builddir="" dev=rxe_lo:1 full=0
configs="1000:255 1000:256 1000:31 1000:15 4000:255 4000:256 4000:31"
while getopts "b:d:c:kh" opt; do
    case $opt in
    b) builddir=$OPTARG ;;
    d) dev=$OPTARG ;;
    c) configs=$OPTARG ;;
    k) full=1 ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
for c in $configs; do
    [[ $c =~ ^[0-9]+:[0-9]+$ ]] || die "-c wants EPS:TX_QUEUE_LEN words, not '$c'"
done
[ -n "$builddir" ] || builddir=${OPENUCT_BUILD_DIR:-$top/build}/release
builddir=$(cd "$builddir" 2>/dev/null && pwd) || die "no build tree at $builddir"
bin=$builddir/test/bench/rc_ep_memory
[ -x "$bin" ] || die "no $bin: build it (make in $builddir; needs libibverbs-dev at configure time)"

work=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") || die "no temporary directory"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
env=()
[ -z "${UCX_MODULE_DIR:-}" ] && [ -d "$builddir/modules" ] &&
    env=(env "UCX_MODULE_DIR=$builddir/modules")
bash "$top/test/rxe/run.sh" -t 900 -- "${env[@]}" bash "$self" --guest \
    "$bin" "$dev" "$configs" "$full" 2>&1 |
    tee "$work/out" | grep --line-buffered -v '^@\(res\|info\|fail\)@' >&2
rc=${PIPESTATUS[0]}
[ "$rc" -eq 77 ] && exit 77

echo
echo "# rc_verbs memory per connected endpoint on $dev (test VM of test/rxe)"
sed -n 's/^@info@ /# /p' "$work/out" | sort -u
echo "# $(($(date +%s) - start)) s; one process per line; endpoints connected pairwise between"
echo "# two interfaces of one process; figures per endpoint (= per QP), in bytes, from"
echo "# the second of two rounds: heap = mallinfo2 delta (libibverbs and provider"
echo "# included), ep = heap freed by destroying the endpoints, kernel = /proc/meminfo"
echo "# deltas (Slab, VmallocUsed, PageTables; MemFree drop holds everything)"
printf '%6s %5s %7s %7s %9s %9s %9s %9s %9s %9s %8s\n' eps txq heap ep raw_qp \
    slab slab1 vmalloc pagetbl memfree connect_s
awk '$1 == "@res@" {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "%6s %5s %7s %7s %9s %9s %9s %9s %9s %9s %8s\n", v["eps"], v["txq"],
            v["heap"], v["heap_ep"], (v["raw_qp_heap"] < 0) ? "-" : v["raw_qp_heap"],
            v["slab"], v["slab1"], v["vmalloc"], v["pagetables"], v["memfree"],
            v["connect_s"]
     }
     $1 == "@fail@" { printf "%6s %5s   failed (%s %s)\n", $2, $3, $4, $5 }' "$work/out"
echo "# raw_qp: heap of one bare ibv_create_qp() with the same capabilities (first run"
echo "# only); slab1: Slab of the first round, to show the repeatability"
[ "$rc" -eq 0 ] || { echo "$prog: a run failed (exit $rc); -k prints every run's output" >&2; exit 1; }
exit 0
