#!/bin/bash
# One-command set-up for a fresh Debian 12 machine (as root).
#
#   contrib/quickstart.sh demo   install, build, run the hello world
#   contrib/quickstart.sh test   install, then build and run every test:
#                                debug build (-Werror), format-check,
#                                cppcheck, make html + unit tests +
#                                verbs tests in a Soft-RoCE VM +
#                                valgrind, ASan/UBSan build + unit tests,
#                                libFuzzer build (clang) + fuzzing,
#                                optimized build + install + installcheck +
#                                distcheck, Debian packages (built,
#                                checked, installed, used, purged),
#                                and the dispatch benchmark
#
# FUZZ_TIME sets the seconds of fuzzing per harness (default 60).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-demo}
jobs=${JOBS:-$(nproc)}
builds=${OPENUCT_BUILD_DIR:-$top/build}

step() {
    echo
    echo "=== $* ($(date +%H:%M:%S))"
}

configure_in() {
    local dir=$1
    shift
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && "$top/configure" "$@")
}

best_transport() {
    # tcp when the module exists, else self (in one process)
    if "$1/src/tools/info/uct_info" -d 2>/dev/null | grep -q "Transport: tcp"; then
        echo "-t tcp -d lo -l"
    else
        echo "-t self -d memory -l"
    fi
}

step "installing Debian packages"
"$top/contrib/install-deps.sh"

step "generating the build system"
(cd "$top" && ./autogen.sh >/dev/null 2>&1)

case "$mode" in
demo)
    step "building (optimized)"
    configure_in "$builds/release" --enable-werror --prefix="$builds/install" -q
    make -C "$builds/release" -j"$jobs" >/dev/null
    tl=$(best_transport "$builds/release")
    step "running the demo: uct_hello_world $tl"
    timeout 60 "$builds/release/examples/uct_hello_world" $tl
    ;;
test)
    step "debug build with -Werror"
    configure_in "$builds/debug" --enable-debug --enable-werror -q
    make -C "$builds/debug" -j"$jobs" >/dev/null

    step "format-check, cppcheck, API reference (make html, warnings fail)"
    make -C "$builds/debug" -s format-check
    JOBS=$jobs make -C "$builds/debug" -s cppcheck
    make -C "$builds/debug" -s html >/dev/null

    # -j builds the test programs in parallel; the tests themselves run
    # one at a time (see LOG_COMPILER in test/*/Makefile.am)
    step "unit tests (debug build)"
    make -C "$builds/debug" -j"$jobs" check

    # the packages the VM needs were installed above: it must start here
    step "verbs tests in the Soft-RoCE VM (debug build)"
    RXE_REQUIRED=${RXE_REQUIRED:-yes} make -C "$builds/debug" check-rxe

    step "unit tests under valgrind (ucs and self suites)"
    make -C "$builds/debug" check-valgrind

    step "AddressSanitizer + UBSan build and unit tests"
    configure_in "$builds/asan" --enable-asan --enable-debug --enable-werror -q
    make -C "$builds/asan" -j"$jobs" >/dev/null
    ASAN_OPTIONS=detect_leaks=1 make -C "$builds/asan" -j"$jobs" check

    step "libFuzzer build (clang) and fuzzing, ${FUZZ_TIME:-60}s per harness"
    configure_in "$builds/fuzz" CC=clang CXX=clang++ --enable-fuzz \
        --enable-assertions -q
    # builds the libraries, the modules and the harnesses, then fuzzes
    make -C "$builds/fuzz" -j"$jobs" fuzz FUZZ_TIME="${FUZZ_TIME:-60}"

    step "optimized build, install, installcheck, distcheck"
    configure_in "$builds/release" --enable-werror \
        --prefix="$builds/install" -q
    make -C "$builds/release" -j"$jobs" >/dev/null
    make -C "$builds/release" install >/dev/null
    make -C "$builds/release" installcheck
    if ! make -C "$builds/release" -j"$jobs" distcheck \
            DISTCHECK_CONFIGURE_FLAGS="--enable-werror" \
            GTEST_EXTRA_ARGS="--gtest_brief=1" >"$builds/distcheck.log" 2>&1
    then
        echo "distcheck failed; the end of $builds/distcheck.log:" >&2
        tail -n 150 "$builds/distcheck.log" >&2
        exit 1
    fi

    step "Debian packages: build, lintian, install, use from /usr, purge"
    "$top/contrib/check-deb.sh"

    step "demo"
    tl=$(best_transport "$builds/release")
    timeout 60 "$builds/release/examples/uct_hello_world" $tl

    step "uct_perftest and uct_hello_world built against UCX 1.13 too"
    "$top/contrib/bench/check-ucx.sh" "$builds/release"

    step "benchmark: active message dispatch cost (self)"
    taskset -c 1 "$builds/release/test/bench/am_dispatch_bench" -n 5000000

    step "all tests passed"
    ;;
*)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
