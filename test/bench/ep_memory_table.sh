#!/bin/bash
# Heap per idle connected endpoint of every transport, in one table:
# tcp, self, posix and sysv measured here by tcp_ep_memory (the shared
# memory of a posix or sysv interface is in uct_info -y), rc and ud from the
# output of verbs_ep_memory (which needs an RDMA device: run it in the
# Soft-RoCE VM, e.g. contrib/bench/verbs_ep_memory.sh -k > FILE, and pass
# FILE here).
#
#   test/bench/ep_memory_table.sh [-b BUILDDIR] [-n EPS] [VERBS_OUTPUT...]
#
#   -b BUILDDIR  build tree with test/bench/tcp_ep_memory (default
#                build/release)
#   -n EPS       endpoints per measurement (default 1000)
#
# Columns, bytes per endpoint (second round of each program):
#   ep heap   what one idle connected endpoint holds on the heap (tcp,
#             self: the user's ep; verbs: both sides averaged)
#   peer heap what the other side keeps per connection (tcp: the accepted
#             connection; self: none; verbs: counted in "ep heap")
#   kernel    MemFree lost per endpoint (verbs: queues, QP objects); "-"
#             where not measured (tcp socket buffers are not counted)
#   kept      heap still in use after the idle deadline once all
#             endpoints are gone, in bytes (tcp, self)
set -u -o pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$top/build/release
eps=1000

while getopts "b:n:h" opt; do
    case $opt in
    b) build=$OPTARG ;;
    n) eps=$OPTARG ;;
    *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    esac
done
shift $((OPTIND - 1))

prog=$build/test/bench/tcp_ep_memory
if [ ! -x "$prog" ]; then
    echo "ep_memory_table: $prog not built (make -C $build)" >&2
    exit 1
fi

printf "%-14s %7s %9s %9s %9s %10s\n" transport eps "ep heap" "peer heap" \
       kernel kept
status=0
for tl in tcp self posix sysv; do
    line=$("$prog" -t "$tl" -n "$eps" | grep '^ep-memory:')
    if [ -z "$line" ]; then
        printf "%-14s %7s %s\n" "$tl" "$eps" "(run failed)"
        status=1
        continue
    fi
    # ep-memory: tl=T eps=N client=C server=S kept_first=K1 kept_second=K2
    awk '{ for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
           printf "%-14s %7s %9s %9s %9s %10s\n", v["tl"], v["eps"],
                  v["client"], v["server"], "-", v["kept_second"] }' \
        <<<"$line"
done

# verbs_ep_memory: a header line "TL/DEV: N connected endpoints ...", a
# column header "round heap heap-ep MemFree ...", then the rounds; or the
# table contrib/bench/verbs_ep_memory.sh prints
for f in "$@"; do
    awk '
        / connected endpoints / { split($1, t, "/"); tl = t[1]; n = $2 }
        $1 == "round" && $2 == "heap" {
            for (i = 1; i <= NF; ++i) { col[$i] = i }
        }
        $1 == "second" && tl != "" && ("heap-ep" in col) {
            printf "%-14s %7s %9s %9s %9s %10s\n", tl, n,
                   $(col["heap-ep"]), "(in ep)", $(col["MemFree"]), "-"
            tl = ""
        }
        # or the table of contrib/bench/verbs_ep_memory.sh: a header
        # "tl mode eps txq heap ep kept ... memfree ...", rows "rc ep ..."
        $1 == "tl" && $2 == "mode" {
            for (i = 1; i <= NF; ++i) { tcol[$i] = i }
        }
        ($1 == "rc" || $1 == "ud") && ("memfree" in tcol) {
            printf "%-14s %7s %9s %9s %9s %10s\n", $1 "_verbs/" $2,
                   $(tcol["eps"]), $(tcol["ep"]), "(in ep)",
                   $(tcol["memfree"]), $(tcol["kept"])
        }' "$f"
done
exit $status
