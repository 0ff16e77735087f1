#!/bin/sh
#
# check.sh PREFIX: builds the example plugin against the openuct installed
# in PREFIX and checks, with the modules in a directory of their own given
# through UCX_MODULE_DIR, that
#   - uct_info -d lists the loop transport and still lists self,
#   - the loader warns about libuct_badver.so and libuct_noinit.so and runs
#     neither,
#   - loop_test passes, and uct_hello_world runs over loop.
# Used by "make installcheck". Exits non-zero with a message on failure.

set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX (the --prefix openuct was installed to)" >&2
    exit 2
fi

prefix=$(cd "$1" 2>/dev/null && pwd) || {
    echo "check.sh: FAIL: install prefix '$1' does not exist; run make" \
         "install first" >&2
    exit 1
}
srcdir=$(cd "$(dirname "$0")" && pwd)

fail() {
    echo "check.sh: FAIL: $*" >&2
    exit 1
}

# Where pkg-config files and libraries were installed
pcdir=
for dir in "$prefix/lib/pkgconfig" "$prefix/lib64/pkgconfig" \
           "$prefix"/lib/*/pkgconfig; do
    if [ -f "$dir/openuct.pc" ]; then
        pcdir=$dir
        break
    fi
done
[ -n "$pcdir" ] || fail "no openuct.pc under $prefix/lib*; is openuct" \
                        "installed in $prefix?"
libdir=$(dirname "$pcdir")

for prog in uct_info uct_hello_world; do
    [ -x "$prefix/bin/$prog" ] || fail "$prefix/bin/$prog is missing"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/openuct-plugin.XXXXXX") ||
    fail "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT INT TERM

# Build a copy of the sources, so the source tree stays clean. The prefix
# is redefined because files installed with DESTDIR keep the final one.
mkdir "$tmp/build" "$tmp/modules" || fail "cannot populate $tmp"
cp "$srcdir"/Makefile "$srcdir"/*.c "$tmp/build/" ||
    fail "cannot copy the plugin sources from $srcdir"
make -s -C "$tmp/build" \
     PKG_CONFIG="pkg-config --define-variable=prefix=$prefix" \
     PKG_CONFIG_PATH="$pcdir" > "$tmp/build.log" 2>&1 || {
    cat "$tmp/build.log" >&2
    fail "building the plugin against $prefix failed (log above)"
}
cp "$tmp/build"/libuct_loop.so "$tmp/build"/libuct_badver.so \
   "$tmp/build"/libuct_noinit.so "$tmp/modules/" ||
    fail "the build did not produce the three modules"

# Run the installed programs with the installed libraries, also when they
# were installed with DESTDIR
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
UCX_MODULE_DIR="$tmp/modules"
export LD_LIBRARY_PATH UCX_MODULE_DIR

"$prefix/bin/uct_info" -d > "$tmp/info.out" 2> "$tmp/info.err" || {
    cat "$tmp/info.err" >&2
    fail "uct_info -d exited with an error"
}

grep -q "Transport: loop$" "$tmp/info.out" ||
    fail "uct_info -d does not list the loop transport"
grep -q "Transport: self$" "$tmp/info.out" ||
    fail "uct_info -d no longer lists self with the plugin directory set"
grep -q "libuct_badver.so" "$tmp/info.err" ||
    fail "no warning names libuct_badver.so (wrong API version)"
grep -q "libuct_noinit.so" "$tmp/info.err" ||
    fail "no warning names libuct_noinit.so (no init function)"
if grep -q "badver: init ran" "$tmp/info.err"; then
    fail "the loader ran the init function of libuct_badver.so"
fi
echo "check.sh: uct_info lists loop and self, and refuses badver and noinit"

# The rest needs only the loop module (and no warnings about the others)
mkdir "$tmp/loop-only" && cp "$tmp/modules/libuct_loop.so" "$tmp/loop-only/" ||
    fail "cannot populate $tmp/loop-only"
UCX_MODULE_DIR="$tmp/loop-only"

"$tmp/build/loop_test" || fail "loop_test failed"

for mode in -i -b; do
    out=$("$prefix/bin/uct_hello_world" -t loop -d loop0 -l $mode) ||
        fail "uct_hello_world -t loop -d loop0 -l $mode failed"
    case "$out" in
        "received 11 bytes: hello world") ;;
        *) fail "uct_hello_world -l $mode printed '$out'" ;;
    esac
done
echo "check.sh: uct_hello_world runs over loop (am_short, am_bcopy)"

echo "check.sh: PASS"
