# Sourced by the installcheck scripts that compare openuct with UCX 1.13
# (check-ucx-hello.sh, check-ucx-headers.sh), after they set prog and
# fail_count=0.
#
# die MSG / fail MSG: one line on stderr; die exits 1, fail counts.
#
# ucx_args PREFIX WORKDIR: checks the arguments; sets prefix and work
# (absolute) and libdir (where PREFIX's libuct.so is).
#
# ucx_deb_unpack WORKDIR: makes WORKDIR/ucx-dev hold Debian 12's libucx-dev
# package (UCX 1.13's headers and examples), fetched with apt-get download
# and unpacked with dpkg-deb -x; it is never installed, so its headers
# cannot shadow ours. A tree already unpacked there is reused.
# OPENUCT_UCX_DEB=FILE uses a .deb already downloaded. Sets ucx_unpacked
# (the tree) and ucx_version (the package's version, or the tree's path).
# Calls die (defined by the caller) on failure.

die() {
    echo "$prog: FAIL: $*" >&2
    exit 1
}

fail() {
    echo "$prog: FAIL: $*" >&2
    fail_count=$((fail_count + 1))
}

ucx_args() {
    local d
    [ $# -eq 2 ] || {
        echo "usage: $prog PREFIX WORKDIR" >&2
        exit 2
    }
    prefix=$(cd "$1" 2>/dev/null && pwd) ||
        die "install prefix '$1' does not exist; run make install first"
    mkdir -p "$2" || die "cannot create $2"
    work=$(cd "$2" && pwd)
    libdir=
    for d in "$prefix/lib" "$prefix/lib64" "$prefix"/lib/*-linux-gnu; do
        if [ -e "$d/libuct.so" ]; then
            libdir=$d
            break
        fi
    done
    [ -n "$libdir" ] ||
        die "no libuct.so under $prefix/lib*; run make install"
}

ucx_deb_unpack() {
    local work=$1 deb dl
    ucx_unpacked=$work/ucx-dev
    ucx_version=$ucx_unpacked
    [ -f "$ucx_unpacked/usr/include/uct/api/uct.h" ] && return 0

    deb=${OPENUCT_UCX_DEB:-}
    if [ -z "$deb" ]; then
        command -v apt-get >/dev/null 2>&1 ||
            die "apt-get is needed to fetch libucx-dev (Debian 12), or set" \
                "OPENUCT_UCX_DEB to its .deb"
        dl=$work/deb
        rm -rf "$dl"
        mkdir -p "$dl" && chmod 0777 "$dl"
        (cd "$dl" && apt-get download -q libucx-dev >"$dl/log" 2>&1) || {
            cat "$dl/log" >&2
            die "apt-get download libucx-dev failed: run 'apt-get update'" \
                "as root, or set OPENUCT_UCX_DEB to a libucx-dev .deb"
        }
        deb=$(ls "$dl"/libucx-dev_*.deb 2>/dev/null | head -n 1)
        [ -n "$deb" ] || die "apt-get download left no libucx-dev .deb in $dl"
    fi
    rm -rf "$ucx_unpacked"
    dpkg-deb -x "$deb" "$ucx_unpacked" || die "dpkg-deb -x $deb failed"
    [ -f "$ucx_unpacked/usr/include/uct/api/uct.h" ] ||
        die "$deb holds no usr/include/uct/api/uct.h; is it libucx-dev?"
    ucx_version=$(dpkg-deb -f "$deb" Version 2>/dev/null || echo "$deb")
}
