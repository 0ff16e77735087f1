#!/bin/bash
# What the per-interface counters cost on the fast path: uct_perftest
# am_bw, short, 8 bytes over self (loopback) with a default build against a
# --disable-stats build, alternating the two, and the ratio of the rates.
#
#   contrib/bench/stats_cost.sh [-s DIR] [-n DIR] [-w DIR] [-r ROUNDS] ...
#
# Without -s/-n it builds both, optimized, under the work directory. See
# contrib/bench/README.md for what is measured and how to read it.
set -u -o pipefail

prog=stats_cost
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    cat <<EOF
Usage: contrib/bench/stats_cost.sh [options]

Runs uct_perftest -t am_bw -D short -s 8 over self in loopback with a
build that keeps the counters and one configured with --disable-stats,
alternating them, and prints the median message rates and their ratio.

  -s DIR     optimized build with the counters (plain configure); built in
             WORKDIR/stats when not given
  -n DIR     optimized build configured with --disable-stats; built in
             WORKDIR/nostats when not given
  -w WORKDIR where to build what -s/-n do not give (default:
             \$OPENUCT_BUILD_DIR/stats-cost when set, else build/stats-cost
             in the source tree); an existing build there is only updated
  -r ROUNDS  rounds, each running both builds (default 31, at least 5)
  -i ITERS   measured iterations per run (default 10000000)
  -c CPU     CPU every run is pinned to (default: the last one)
  -x TL/DEV  transport and device (default self/memory)
  -j JOBS    parallel make jobs when building (default 2)
  -o DIR     keep the raw output of every run in DIR
  -h         this help

Exit code 0 when the table was printed, whether or not the target is met;
1 when a build or a run failed.
EOF
}

# ---------------------------------------------------------------- options

stats_dir=""
nostats_dir=""
work_dir=${OPENUCT_BUILD_DIR:-$top/build}/stats-cost
rounds=31
iters=10000000
cpu=""
tl_dev="self/memory"
jobs=2
keep_dir=""

while getopts "s:n:w:r:i:c:x:j:o:h" opt; do
    case $opt in
    s) stats_dir=$OPTARG ;;
    n) nostats_dir=$OPTARG ;;
    w) work_dir=$OPTARG ;;
    r) rounds=$OPTARG ;;
    i) iters=$OPTARG ;;
    c) cpu=$OPTARG ;;
    x) tl_dev=$OPTARG ;;
    j) jobs=$OPTARG ;;
    o) keep_dir=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 1 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || die "unexpected argument '$1' (see -h)"

if ! [[ $rounds =~ ^[0-9]+$ ]] || [ "$rounds" -lt 5 ]; then
    die "-r wants 5 rounds or more, not '$rounds'"
fi
[[ $iters =~ ^[1-9][0-9]*$ ]] || die "-i wants a positive number, not '$iters'"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "-j wants a positive number, not '$jobs'"
[[ $tl_dev =~ ^[^/]+/[^/]+$ ]] || die "-x wants TL/DEV like self/memory, not '$tl_dev'"
tl=${tl_dev%/*}
dev=${tl_dev#*/}

require_tools taskset setsid stdbuf timeout awk nproc
if [ -z "$cpu" ]; then
    cpu=$(($(nproc) - 1))
fi
taskset -c "$cpu" true 2>/dev/null || die "cannot run on CPU $cpu; pick one with -c"
client_cpu=$cpu
client_timeout=300

# ------------------------------------------------------------------ builds

# The value of ENABLE_STATS in a build's config.h: 1 or 0
build_has_stats() {
    grep -q '^#define ENABLE_STATS 1' "$1/config.h"
}

# build DIR CONFIGURE_ARGS...: configures (once) and builds an optimized
# tree in DIR from this source tree
build() {
    local dir=$1
    shift
    [ -x "$top/configure" ] ||
        die "no configure script in $top; run ./autogen.sh there first"
    mkdir -p "$dir" || die "cannot create $dir"
    if [ ! -f "$dir/Makefile" ]; then
        note "configuring $dir ($* )"
        (cd "$dir" && "$top/configure" -q "$@") >"$dir/configure.out" 2>&1 ||
            die "configure failed in $dir; see $dir/configure.out"
    fi
    note "building $dir"
    make -C "$dir" -j"$jobs" >"$dir/make.out" 2>&1 ||
        die "make failed in $dir; see $dir/make.out"
}

if [ -z "$stats_dir" ]; then
    stats_dir=$work_dir/stats
    build "$stats_dir"
fi
if [ -z "$nostats_dir" ]; then
    nostats_dir=$work_dir/nostats
    build "$nostats_dir" --disable-stats
fi

for d in "$stats_dir" "$nostats_dir"; do
    [ -x "$d/src/tools/perf/uct_perftest" ] ||
        die "no uct_perftest in $d/src/tools/perf; build it first"
    [ -f "$d/config.h" ] || die "$d is not a build tree (no config.h)"
    # config.log starts with the configure command line
    if head -n 20 "$d/config.log" 2>/dev/null | grep -q -- '--enable-debug'; then
        note "$d was configured with --enable-debug: the figures measure the debug checks"
    fi
done
build_has_stats "$stats_dir" ||
    die "$stats_dir was configured with --disable-stats; -s wants a build with the counters"
! build_has_stats "$nostats_dir" ||
    die "$nostats_dir keeps the counters; -n wants a build configured with --disable-stats"

# ---------------------------------------------------------------- running

bench_work

declare -A vals     # build -> the message rate of each round

# run ROUND NAME DIR VFS: one uct_perftest run, pinned, in its own session
# (its own scheduler autogroup), with UCX_VFS_ENABLE=VFS; records the
# message rate
run() {
    local r=$1 name=$2 dir=$3 vfs=$4 log rc v
    log=$work/r$r-$name.csv
    # each build finds its own modules: nothing from the environment
    run_client "$log" env -u UCX_MODULE_DIR -u UCX_MODULES UCX_VFS_ENABLE="$vfs" \
        "$dir/src/tools/perf/uct_perftest" -x "$tl" -d "$dev" -l \
        -t am_bw -D short -s 8 -n "$iters" -w $((iters / 10)) -f csv
    rc=$?
    v=$(awk -F, '$1 == "am_bw" && NF >= 8 { print $8; exit }' "$log")
    if [ $rc -ne 0 ] || [ -z "$v" ]; then
        sed 's/^/    /' "$log.err" >&2
        die "round $r: uct_perftest of the $name build failed (exit $rc)"
    fi
    record "$name" "$v"
}

load=$(load_average)
start=$SECONDS
# stats: the counting build with the object tree on, so that it counts;
# default: the same build as a process runs by default (tree off: the
# self iface takes its uncounted am_short at open); nostats: no counters
for ((r = 1; r <= rounds; r++)); do
    # rotate which run goes first, so none always runs warm
    case $((r % 3)) in
    1)  run "$r" stats "$stats_dir" y
        run "$r" default "$stats_dir" n
        run "$r" nostats "$nostats_dir" n ;;
    2)  run "$r" default "$stats_dir" n
        run "$r" nostats "$nostats_dir" n
        run "$r" stats "$stats_dir" y ;;
    0)  run "$r" nostats "$nostats_dir" n
        run "$r" stats "$stats_dir" y
        run "$r" default "$stats_dir" n ;;
    esac
    note "round $r of $rounds done"
done

# ------------------------------------------------------------------ table

read -r -a s_vals <<<"${vals[stats]}"
read -r -a d_vals <<<"${vals[default]}"
read -r -a n_vals <<<"${vals[nostats]}"
s_med=$(fmt "$(median "${s_vals[@]}")" 0)
d_med=$(fmt "$(median "${d_vals[@]}")" 0)
n_med=$(fmt "$(median "${n_vals[@]}")" 0)

# pair_ratios A B: the ratios A/B of each round, to four places. The runs
# of a round ran back to back: their ratio is less exposed to the
# machine's slow changes (frequency, neighbours) than the medians
pair_ratios() {
    local -n a=$1 b=$2
    local i
    for ((i = 0; i < ${#a[@]}; i++)); do
        ratio "${a[$i]}" "${b[$i]}" 4
        echo
    done
}
mapfile -t s_ratios < <(pair_ratios s_vals n_vals)
mapfile -t d_ratios < <(pair_ratios d_vals n_vals)
mapfile -t c_ratios < <(pair_ratios s_vals d_vals)
s_pair=$(fmt "$(median "${s_ratios[@]}")" 4)
d_pair=$(fmt "$(median "${d_ratios[@]}")" 4)
c_pair=$(fmt "$(median "${c_ratios[@]}")" 4)

echo "# counters cost: uct_perftest -x $tl -d $dev -l -t am_bw -D short -s 8 -n $iters"
echo "# $(uname -sr), $(nproc) CPUs; every run on CPU $cpu under setsid; $rounds rounds, order rotating; $((SECONDS - start)) s"
echo "# load average before the run: ${load:-?} (other work on the machine skews every number)"
echo "# stats:   $stats_dir (UCX_VFS_ENABLE=y: counting)"
echo "# default: $stats_dir (UCX_VFS_ENABLE=n: the tree is off)"
echo "# nostats: $nostats_dir (--disable-stats)"
echo "#"
printf "%-9s %16s %9s   %s\n" run "median[msg/s]" spread "per round [msg/s]"
printf "%-9s %16s %8s%%   %s\n" stats "$s_med" "$(spread "${s_vals[@]}")" "${s_vals[*]}"
printf "%-9s %16s %8s%%   %s\n" default "$d_med" "$(spread "${d_vals[@]}")" "${d_vals[*]}"
printf "%-9s %16s %8s%%   %s\n" nostats "$n_med" "$(spread "${n_vals[@]}")" "${n_vals[*]}"
echo "#"
echo "# per-round ratios stats/nostats:   ${s_ratios[*]}"
echo "# per-round ratios default/nostats: ${d_ratios[*]}"
echo "# per-round ratios stats/default:   ${c_ratios[*]}"
awk -v s="$s_med" -v d="$d_med" -v n="$n_med" -v sp="$s_pair" \
    -v dp="$d_pair" -v cp="$c_pair" 'BEGIN {
    printf "ratio of the medians, counting       %.4f: cost %5.2f %%\n",
           s / n, (1 - s / n) * 100
    printf "ratio of the medians, tree off       %.4f: cost %5.2f %%\n",
           d / n, (1 - d / n) * 100
    cost = (1 - dp) * 100
    printf "median of per-round ratios, tree off %.4f: cost %5.2f %%\n",
           dp, cost
    cost = (1 - cp) * 100
    printf "counting alone (stats/default, one build) %.4f: cost %5.2f %%\n",
           cp, cost
    cost = (1 - sp) * 100
    printf "median of per-round ratios, counting %.4f: cost %5.2f %% (target < 2 %%): %s\n",
           sp, cost, (cost < 2) ? "PASS" : "MISS"
}'
