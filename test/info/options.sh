#!/bin/sh
# Every uct_info option prints the fields it documents; bad options, and
# ucx_info's UCP options, give one line on stderr and a non-zero status.
set -u

. "${INFO_SRCDIR:-$(dirname "$0")}/lib.sh"

# expect_out NAME PATTERN...: every PATTERN matches a line of stdout
expect_out() {
    name=$1
    shift
    for pattern in "$@"; do
        grep -q -- "$pattern" "$work/$name.out" ||
            fail "$name: no line of stdout matches '$pattern'"
    done
}

# expect_no_out NAME PATTERN: no line of stdout matches PATTERN
expect_no_out() {
    if grep -q -- "$2" "$work/$1.out"; then
        fail "$1: stdout has '$2'"
    fi
}

# expect_clean NAME: status 0, nothing on stderr
expect_clean() {
    expect_rc "$1" 0
    if [ -s "$work/$1.err" ]; then
        fail "$1: unexpected stderr:"
        sed 's/^/    /' "$work/$1.err" >&2
    fi
}

# expect_refused NAME PATTERN: status 2, no stdout, one stderr line that
# matches PATTERN
expect_refused() {
    expect_rc "$1" 2
    lines=$(wc -l <"$work/$1.err")
    [ "$lines" = 1 ] || fail "$1: $lines stderr lines, expected 1"
    grep -q -- "$2" "$work/$1.err" ||
        fail "$1: stderr does not match '$2': $(cat "$work/$1.err")"
    [ -s "$work/$1.out" ] && fail "$1: prints on stdout when refused"
}

num='[0-9][0-9]*'

# -h: every option of the tool is listed
run help "$UCT_INFO" -h
expect_clean help
for opt in -v -b -c -f -a -C -d "-t TL" "-D TYPE" -y -s -T -M -h; do
    expect_out help "^  $opt "
done

# no option: the usage, status 0
run none "$UCT_INFO"
expect_clean none
expect_out none "^Usage: "

# -v: versions and the loaded modules
run version "$UCT_INFO" -v
expect_clean version
expect_out version "^# openuct version $num\.$num\.$num, UCT API " \
    "^# configured with: " "^# installed module directory: " \
    "^# loaded modules:" "^#   self  *[^ ]*libuct_self\.so"

# -b: the build configuration as config.h lines
run build "$UCT_INFO" -b
expect_clean build
for define in OPENUCT_VERSION_STRING UCT_VERNO_STRING UCT_API \
    UCT_MODULE_API_MAJOR ENABLE_DEBUG ENABLE_ASSERT ENABLE_ASAN \
    ENABLE_STATS HAVE_HWLOC HAVE_VERBS HAVE_FUSE3; do
    expect_out build "^\(#define $define \|/\* #undef $define \*/$\)"
done
expect_out build '^#define UCT_BUILD_CONFIGURE_ARGS  *"' \
    '^#define UCT_BUILD_CC  *"..*"$' '^#define UCT_BUILD_COMPILER  *"..*"$' \
    '^#define UCT_BUILD_CFLAGS  *"' \
    '^#define UCT_BUILD_MODULES  *"self tcp' \
    '^#define UCT_BUILD_TOOLS  *"uct_info uct_perftest' \
    '^#define UCT_MODULE_DIR  *"/'

# -y: structure sizes and the heap of live objects
run types "$UCT_INFO" -y
expect_clean types
expect_out types "^UCS:$" "^UCT API:$" "^UCT transport base:$" \
    "^    sizeof(ucs_mpool_t) = \.* $num$" \
    "^    sizeof(uct_iface_attr_t) = \.* $num$" \
    "^    sizeof(uct_md_attr_t) = \.* $num$" \
    "^    sizeof(uct_base_iface_t) = \.* $num$" \
    "^Heap of live objects"
# the figures, unless the heap cannot be measured here (a sanitizer's
# allocator, which mallinfo2() does not see: ucs_sys_heap_in_use() is 0)
if grep -q "^    not measurable" "$work/types.out"; then
    echo "types: the heap is not measurable in this build"
else
    expect_out types "^    worker \.* $num$" \
        "^    self/memory \.* iface $num, ep $num$" \
        "^    posix/memory \.* iface $num, ep $num, shared memory $num$" \
        "^    sysv/memory \.* iface $num, ep $num, shared memory $num$"
fi

# -s: the machine
run system "$UCT_INFO" -s
expect_clean system
for field in "Host name" "Kernel" "CPU vendor" "CPU model" "CPUs" \
    "Physical cores" "NUMA nodes" "Memory" "Page size" "Huge pages" \
    "Transparent hugepages" "Clock source" "Clock frequency" \
    "Clock accuracy" "Kernel clock source" "Open files limit" \
    "Locked memory limit"; do
    expect_out system "^# $field: *[^ ]"
done
expect_out system "^# CPUs: *$num configured, $num online$" \
    "^# NUMA nodes: *$num (topology read with \(hwloc\|sysfs\))$" \
    "^# Page size: *$num$" \
    "^# Clock source: *\(tsc\|clock_gettime\)$" \
    "^# Clock frequency: *$num\.$num MHz$"

# -T: NUMA nodes and devices
run topo "$UCT_INFO" -T
expect_clean topo
expect_out topo "^# Topology (\(hwloc\|sysfs\)): $num CPUs, $num NUMA node" \
    "^#   numa node $num: cpus "

# -M: memcpy bandwidth from 4 KiB to 64 MiB
run memcpy "$UCT_INFO" -M
expect_clean memcpy
expect_out memcpy "^# *4096 bytes: *$num\.$num MB/s$" \
    "^# *67108864 bytes: *$num\.$num MB/s$"

# -c, -f, -a, -C: the configuration
run config "$UCT_INFO" -c
expect_clean config
expect_out config "^UCX_LOG_LEVEL=warn$" "^UCX_MODULES=all$" \
    "^UCX_TCP_SNDBUF=auto$"
run doc "$UCT_INFO" -f
expect_clean doc
expect_out doc "^# syntax: " "^UCX_LOG_LEVEL=warn$"
run hidden "$UCT_INFO" -c -a
expect_clean hidden
[ "$(wc -l <"$work/hidden.out")" -ge "$(wc -l <"$work/config.out")" ] ||
    fail "uct_info -c -a prints fewer variables than -c"
UCX_LOG_LEVEL=info UCX_TCP_SNDBUF=64k run comment "$UCT_INFO" -c -C
expect_clean comment
expect_out comment "^UCX_LOG_LEVEL=info$" "^UCX_TCP_SNDBUF=64k$" \
    "^# UCX_MODULES=all$"
expect_no_out comment "^UCX_MODULES="
# -C keeps the values: the environment is restored after the defaults
sed 's/^# //' "$work/comment.out" | grep -v "^Variables" >"$work/uncommented"
UCX_LOG_LEVEL=info UCX_TCP_SNDBUF=64k "$UCT_INFO" -c >"$work/plain" 2>&1
cmp -s "$work/uncommented" "$work/plain" ||
    fail "uct_info -c -C differs from -c by more than the comments"
run comment_alone "$UCT_INFO" -C
expect_clean comment_alone
expect_out comment_alone "^# UCX_LOG_LEVEL=warn$"
run comment_doc "$UCT_INFO" -f -C
expect_clean comment_doc
expect_out comment_doc "^# syntax: " "^# UCX_LOG_LEVEL=warn$"

# -d with -t and -D filters
run self_only "$UCT_INFO" -d -D self
expect_clean self_only
expect_out self_only "Transport: self"
expect_no_out self_only "Transport: tcp"
run all_types "$UCT_INFO" -D all
expect_clean all_types
expect_out all_types "Transport: self"
if grep -q "Transport: tcp" "$work/all_types.out"; then
    run net_only "$UCT_INFO" -D net
    expect_clean net_only
    expect_out net_only "Transport: tcp"
    expect_no_out net_only "Transport: self"
fi
run self_tl "$UCT_INFO" -t self
expect_clean self_tl
expect_out self_tl "Transport: self" "Memory domain: self"
run self_as_net "$UCT_INFO" -t self -D net
expect_rc self_as_net 1
grep -q "transport 'self' not found among the devices of the -D types" \
    "$work/self_as_net.err" || fail "-t self -D net does not say why"

# bad options: one line, status 2, nothing on stdout
run unknown "$UCT_INFO" -x
expect_refused unknown "^uct_info: unknown option -x; "
run no_arg_t "$UCT_INFO" -t
expect_refused no_arg_t "^uct_info: option -t needs an argument"
run no_arg_d "$UCT_INFO" -d -D
expect_refused no_arg_d "^uct_info: option -D needs an argument"
run bad_type "$UCT_INFO" -D gpu
expect_refused bad_type "^uct_info: unknown device type 'gpu' for -D"
run stray "$UCT_INFO" -d extra
expect_refused stray "^uct_info: unexpected argument 'extra'"

# ucx_info's UCP options: refused, saying why
for args in "-p" "-w" "-e" "-6" "-u a" "-m 4096" "-n 2" "-N 2" \
    "-P self" "-A 127.0.0.1" "-d -u am"; do
    name="ucp$(echo "$args" | tr -d ' .')"
    # shellcheck disable=SC2086
    run "$name" "$UCT_INFO" $args
    opt=$(echo "$args" | sed 's/^-d //; s/^-\(.\).*/\1/')
    expect_refused "$name" "^uct_info: -$opt is a UCP option of ucx_info; \
openuct implements UCT only"
done

finish "every uct_info option prints its fields; bad and UCP options" \
    "are refused in one line"
