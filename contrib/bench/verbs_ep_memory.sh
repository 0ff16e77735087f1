#!/bin/bash
# Memory and connection time per connected verbs endpoint, rc_verbs next
# to ud_verbs: runs test/bench/verbs_ep_memory in the Soft-RoCE test VM
# (test/rxe) for several transports, connection modes, endpoint counts
# and send queue lengths, one process each, in one boot, and prints a
# table.
#
#   contrib/bench/verbs_ep_memory.sh [-b BUILDDIR] [-d DEV:PORT] [-c CONFIGS]
#                                    [-B BATCH] [-k]
#
#   -b BUILDDIR  build tree with test/bench/verbs_ep_memory (default
#                build/release, $OPENUCT_BUILD_DIR/release when set)
#   -d DEV:PORT  device in the VM (default rxe_lo:1)
#   -c CONFIGS   space-separated runs, TL:MODE:EPS:TX_QUEUE_LEN (TL rc or
#                ud, MODE ep or iface) or EPS:TX_QUEUE_LEN for rc:ep
#                (default: rc:ep at 255 and 31, ud:ep and ud:iface at 255,
#                each at 1000 and 10000 endpoints; rc:ep:10000:255 last);
#                rc words may add :INLINE:SGES, the UCX_RC_VERBS_TX_MIN_INLINE
#                and _TX_MIN_SGE of the run (rc:ep:1000:255:64:4 asks for
#                the send slot of before the 256-byte default)
#   -B BATCH     connections created before sending on them (default 64)
#   -k           also print each run's full output
#
# Exit code 0 with the table; 1 when a run failed (its row says so); 77
# when the VM could not start. See contrib/bench/README.md.
set -u -o pipefail

prog=verbs_ep_memory
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
top=$(cd "$(dirname "$self")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ "${1:-}" = --guest ]; then
    # ---- in the VM: $2 program, $3 device, $4 configs, $5 full output,
    # $6 batch
    bin=$2 dev=$3 configs=$4 full=$5 batch=$6 status=0 first=1 out=""
    echo "@info@ kernel $(uname -r), $(grep -m1 MemTotal /proc/meminfo | xargs)"
    for c in $configs; do
        IFS=: read -r tl mode eps txq inl sges <<<"$c"
        args=(-t "${tl}_verbs" -m "$mode" -n "$eps" -d "$dev" -B "$batch")
        tx_env=(UCX_IB_TX_QUEUE_LEN="$txq")
        [ -n "$inl" ] && tx_env+=(UCX_RC_VERBS_TX_MIN_INLINE="$inl")
        [ -n "$sges" ] && tx_env+=(UCX_RC_VERBS_TX_MIN_SGE="$sges")
        # the first rc run also measures bare libibverbs QPs
        if [ $first -eq 1 ] && [ "$tl" = rc ]; then
            args+=(-v)
            first=0
        fi
        note "${tl}_verbs $mode, $eps endpoints, ${tx_env[*]}"
        sync
        echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
        out=$(env "${tx_env[@]}" timeout 900 "$bin" "${args[@]}" 2>&1)
        rc=$?
        if [ "$full" -eq 1 ] || [ $rc -ne 0 ]; then
            echo "---- $bin ${args[*]} (${tx_env[*]}), exit $rc" >&2
            echo "$out" | tail -n 40 >&2
        fi
        if [ $rc -ne 0 ] || ! grep -q '^result ' <<<"$out"; then
            why="exit $rc"
            [ $rc -eq 137 ] && why="killed (exit 137: out of memory?)"
            [ $rc -eq 124 ] && why="timed out"
            echo "@fail@ $tl $mode $eps $txq $why:" \
                "$(grep -v '^result ' <<<"$out" | tail -n1 | cut -c1-100)"
            status=1
            continue
        fi
        grep '^result ' <<<"$out" | sed 's/^result /@res@ /'
        grep '^breakdown: ' <<<"$out" |
            sed "s/^breakdown: /@info@ ${tl}_verbs $mode $eps: /"
    done
    exit $status
fi

usage() { header_help "$self"; }

builddir="" dev=rxe_lo:1 full=0 batch=64
configs="rc:ep:1000:255 rc:ep:1000:31 ud:ep:1000:255 ud:iface:1000:255"
configs+=" rc:ep:10000:31 ud:ep:10000:255 ud:iface:10000:255"
configs+=" rc:ep:10000:255"
while getopts "b:d:c:B:kh" opt; do
    case $opt in
    b) builddir=$OPTARG ;;
    d) dev=$OPTARG ;;
    c) configs=$OPTARG ;;
    B) batch=$OPTARG ;;
    k) full=1 ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
[[ $batch =~ ^[1-9][0-9]*$ ]] || die "-B wants a positive number, not '$batch'"
words=""
for c in $configs; do
    [[ $c =~ ^[0-9]+:[0-9]+$ ]] && c=rc:ep:$c
    [[ $c =~ ^(rc:ep|ud:ep|ud:iface):[0-9]+:[0-9]+$ ||
        $c =~ ^rc:ep:[0-9]+:[0-9]+:[0-9]+:[0-9]+$ ]] ||
        die "-c wants TL:MODE:EPS:TX_QUEUE_LEN words (rc:ep, ud:ep," \
            "ud:iface), rc:ep:EPS:TX_QUEUE_LEN:INLINE:SGES or" \
            "EPS:TX_QUEUE_LEN, not '$c'"
    words+=" $c"
done
configs=$words
[ -n "$builddir" ] || builddir=${OPENUCT_BUILD_DIR:-$top/build}/release
builddir=$(cd "$builddir" 2>/dev/null && pwd) || die "no build tree at $builddir"
bin=$builddir/test/bench/verbs_ep_memory
[ -x "$bin" ] || die "no $bin: build it (make in $builddir; needs libibverbs-dev at configure time)"

work=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") || die "no temporary directory"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
load=$(load_average)
env=()
[ -z "${UCX_MODULE_DIR:-}" ] && [ -d "$builddir/modules" ] &&
    env=(env "UCX_MODULE_DIR=$builddir/modules")
bash "$top/test/rxe/run.sh" -t 2400 -- "${env[@]}" bash "$self" --guest \
    "$bin" "$dev" "$configs" "$full" "$batch" 2>&1 |
    tee "$work/out" | grep --line-buffered -v '^@\(res\|info\|fail\)@' >&2
rc=${PIPESTATUS[0]}
[ "$rc" -eq 77 ] && exit 77

echo
echo "# rc_verbs and ud_verbs: memory and connection time per endpoint on $dev"
echo "# (test VM of test/rxe, 2 emulated CPUs)"
sed -n 's/^@info@ /# /p' "$work/out"
echo "# $(($(date +%s) - start)) s, load average before the run ${load:-?};" \
    "one process per line; endpoints connected"
echo "# between two interfaces of one process, both sides counted (a" \
    "connection is two"
echo "# endpoints); bytes per endpoint from the second of two rounds"
fmt='%-4s %-5s %6s %4s %3s %4s %5s %5s %5s %6s %5s %4s %6s %7s %7s %6s %7s %7s %7s %6s %6s %6s\n'
# shellcheck disable=SC2059
printf "$fmt" tl mode eps txq sge inl heap ep kept raw_qp qps ahs slab \
    vmalloc kernel pgtbl memfree p50_ms p99_ms us/con am_us rate
awk -v fmt="$fmt" '$1 == "@res@" {
        delete v
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        t = v["tl"]; sub(/_verbs$/, "", t)
        printf fmt, t, v["mode"], v["eps"], v["txq"], v["sges"], v["inline"],
            v["heap"], v["heap_ep"],
            v["kept"], (v["raw_qp_heap"] < 0) ? "-" : v["raw_qp_heap"],
            (v["qps"] < 0) ? "-" : v["qps"], v["ahs"], v["slab"],
            v["vmalloc"], (v["kernel_qp"] < 0) ? "-" : v["kernel_qp"],
            v["pagetables"], v["memfree"], v["conn_p50_ms"],
            v["conn_p99_ms"], v["conn_us"], v["am_us"], v["am_rate"]
     }
     $1 == "@fail@" {
        line = $0; sub(/^@fail@ [^ ]+ [^ ]+ [^ ]+ [^ ]+ /, "", line)
        printf "%-4s %-5s %6s %4s   FAILED: %s\n", $2, $3, $4, $5, line
     }' "$work/out"
echo "# heap: ucs_sys_heap_in_use() delta per endpoint: mallinfo2() uordblks+hblkhd"
echo "#   (all arenas and threads, libibverbs and provider included);"
echo "#   ep: freed by destroying the user's endpoints; kept: still in use"
echo "#   after that (ud: once no endpoint is left on either side, B's"
echo "#   private ones freed by A's disconnects); raw_qp: one bare"
echo "#   ibv_create_qp(), first rc run"
echo "# qps: kernel QPs added (rdma resource show, per endpoint count in"
echo "#   all); ahs: address handles of both interfaces"
echo "# slab, vmalloc, pgtbl, memfree: /proc/meminfo deltas per endpoint"
echo "# kernel: kernel memory per QP, (Slab + VmallocUsed) growth divided"
echo "#   by the kernel QPs added (rc: one per endpoint; rxe's send queue"
echo "#   is vmalloc_user pages, its QP objects slab); sge, inl: the SGEs"
echo "#   and inline bytes the QPs got (rxe send slot: 208 + max(16 * sge,"
echo "#   inl) bytes rounded up to a power of two)"
echo "# p50_ms, p99_ms: one connection, creation to its first AM received;"
echo "#   us/con: connecting them all, per connection; batches of $batch"
echo "# am_us: one AM, send to handler, on endpoints spread over all;"
echo "#   rate: AMs per second round-robin over all of them (one thread"
echo "#   polls both sides: compare rows, not with uct_perftest)"
[ "$rc" -eq 0 ] || die "a run failed (exit $rc); -k prints every run's output"
exit 0
