#!/bin/bash
#
# check-deb.sh: builds the Debian packages from this source tree and checks
# them the way a user gets them (run as root on Debian 12, after
# contrib/install-deps.sh):
#   1. copies the sources, without build trees or generated files, to a
#      temporary directory and runs dpkg-buildpackage -us -uc -b there
#   2. lintian on the result: any error fails
#   3. installs libopenuct0, libopenuct-dev and openuct-utils with apt-get
#   4. builds the installed hello world source against /usr with
#      pkg-config --cflags --libs openuct and runs it client/server over
#      tcp on lo, posix and sysv (examples/check-hello.sh), then uct_info
#      -v and -d from /usr/bin (the modules found in their installed directory), and the
#      example transport module built against /usr
#   5. purges the packages again, also when a check failed
# Refuses to install over installed openuct or UCX packages: they would be
# replaced and not come back. KEEP=1 keeps the build directory.
#
# Exits non-zero with a message on the first failure.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
packages=(libopenuct0 libopenuct-dev openuct-utils)
# Ship the same files as ours (libucs.so.0, uct/api/uct.h, ucx-ucs.pc)
conflicting=(libucx0 libucx-dev)
installed_by_us=no

work=$(mktemp -d "${TMPDIR:-/tmp}/openuct-deb.XXXXXX")

fail() {
    echo "check-deb: FAIL: $*" >&2
    exit 1
}

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null |
        grep -q "install ok installed"
}

cleanup() {
    local rc=$?
    if [ "$installed_by_us" = yes ]; then
        echo "check-deb: purging ${packages[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq \
            "${packages[@]}" >/dev/null || rc=1
    fi
    if [ "${KEEP:-0}" = 1 ]; then
        echo "check-deb: build directory kept: $work"
    else
        rm -rf "$work"
    fi
    exit $rc
}
trap cleanup EXIT

version=$(cd "$top" && dpkg-parsechangelog -S Version)
# debian/changelog follows the version configure.ac gives the libraries
ac_version=$(sed -n 's/^AC_INIT(\[openuct\], \[\([^]]*\)\].*/\1/p' \
             "$top/configure.ac")
[ "${version%%-*}" = "$ac_version" ] ||
    fail "debian/changelog is at $version, configure.ac at $ac_version:" \
         "add a debian/changelog entry for $ac_version"
src="$work/openuct-$version"

# 1. The sources without what builds leave behind: build trees (build/ of
# contrib/quickstart.sh), objects, in-tree configure results, a previous
# package build. A clean clone and a tree that was built in are the same.
mkdir -p "$src"
tar -C "$top" -cf - \
    --exclude=./.git --exclude='./build' --exclude='./build-*' \
    --exclude=./autom4te.cache --exclude=./config.status \
    --exclude=./config.log --exclude=./config.h --exclude=./libtool \
    --exclude=./stamp-h1 --exclude=./modules \
    --exclude='*.o' --exclude='*.lo' --exclude='*.la' --exclude=.libs \
    --exclude=.deps --exclude='./debian/tmp' --exclude='./debian/.debhelper' \
    --exclude='./debian/libopenuct0' --exclude='./debian/libopenuct-dev' \
    --exclude='./debian/openuct-utils' --exclude='./debian/files' \
    --exclude='./debian/*.substvars' --exclude='./debian/*.log' \
    --exclude='./debian/debhelper-build-stamp' \
    . | tar -C "$src" -xf -

echo "check-deb: dpkg-buildpackage -us -uc -b in $src"
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs" \
        dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
    tail -n 100 "$work/build.log" >&2
    fail "dpkg-buildpackage failed (the end of its log above)"
fi
debs=()
for p in "${packages[@]}"; do
    deb=$(ls "$work/${p}_${version}"_*.deb 2>/dev/null | head -n 1)
    [ -n "$deb" ] || fail "dpkg-buildpackage did not build $p"
    debs+=("$deb")
    echo "check-deb: built $(basename "$deb")"
done
echo "check-deb: packages built in ${SECONDS}s"

# 2. lintian: errors fail, warnings are shown
changes=$(ls "$work"/openuct_"$version"_*.changes)
echo "check-deb: lintian $(basename "$changes")"
lintian --fail-on error "$changes" ||
    fail "lintian reports errors (above)"

# 3. install
[ "$(id -u)" -eq 0 ] || fail "installing the packages needs root"
for p in "${packages[@]}" "${conflicting[@]}"; do
    ! is_installed "$p" ||
        fail "$p is installed; installing ours would replace it for good"
done
installed_by_us=yes
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}" \
    >"$work/install.log" 2>&1 || {
    cat "$work/install.log" >&2
    fail "apt-get install of the packages failed"
}
echo "check-deb: installed ${packages[*]} (${SECONDS}s)"

# 4. use them from /usr, nothing of the source or build tree in the way
unset UCX_MODULE_DIR LD_LIBRARY_PATH
examples=/usr/share/doc/libopenuct-dev/examples
[ -f "$examples/uct_hello_world.c" ] ||
    fail "$examples/uct_hello_world.c is missing"

hello="$work/uct_hello_world"
cc -o "$hello" "$examples/uct_hello_world.c" \
    $(pkg-config --cflags --libs openuct) ||
    fail "the hello world does not build with pkg-config openuct"
# /lib is /usr/lib on Debian 12 (merged /usr): compare the real paths
for lib in libuct libucs; do
    path=$(ldd "$hello" | awk -v so="$lib.so.0" '$1 == so { print $3 }')
    case "$(readlink -f "$path")" in
    /usr/lib/*) ;;
    *) fail "the hello world does not use /usr's $lib: $(ldd "$hello")" ;;
    esac
done
echo "check-deb: built the hello world with" \
     "$(pkg-config --cflags --libs openuct)"

HELLO="$hello" UCT_INFO=/usr/bin/uct_info bash "$top/examples/check-hello.sh" ||
    fail "the hello world built against /usr failed (above)"

/usr/bin/uct_info -v || fail "uct_info -v failed"
moddir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/openuct
/usr/bin/uct_info -v | grep -q "module directory: $moddir" ||
    fail "uct_info -v does not name $moddir as the module directory"
/usr/bin/uct_info -d >"$work/info.out" || fail "uct_info -d failed"
for tl in self posix sysv tcp; do
    grep -q "Transport: $tl$" "$work/info.out" ||
        fail "uct_info -d does not list $tl: its module was not found"
done
echo "check-deb: uct_info finds the self, sm (posix, sysv) and tcp modules in $moddir"

sh "$examples/plugin/check.sh" /usr ||
    fail "the example transport module does not work against /usr"

echo "check-deb: PASS (${SECONDS}s, the purge follows)"
