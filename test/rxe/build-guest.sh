#!/bin/bash
#
# Builds the Soft-RoCE test guest into a cache directory keyed by the
# kernel version, unless it is there already:
#
#   <cache>/<kver>/vmlinux          uncompressed kernel (boots via PVH),
#                                   or vmlinuz when it cannot be unpacked
#   <cache>/<kver>/initramfs.cpio   busybox + the modules that mount 9p
#   <cache>/<kver>/modules/<kver>/  rdma_rxe, ib_uverbs, rdma_ucm, crc32
#                                   (rxe's ICRC), veth, sch_netem,
#                                   9p/virtio/overlay and their
#                                   dependencies, with depmod's indexes
#   <cache>/<kver>/init             the initramfs init (also in the cpio)
#
# The kernel is Debian's linux-image-6.1.0-<N>-amd64, fetched with
# "apt-get download" and unpacked with dpkg-deb; nothing is installed.
#
# usage: build-guest.sh [--cache DIR] [--kernel-pkg PKG] [--deb FILE] [--force]
# Prints the guest directory on stdout; progress and errors on stderr.
# Exit status 0, or 1 with the reason on stderr.

set -u -o pipefail

cache=${OPENUCT_RXE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/openuct-rxe}
pkg=${OPENUCT_RXE_KERNEL_PKG:-}
deb=""
force=0

# Modules the guest loads after boot (their dependencies come along)
RUN_MODULES="rdma_rxe ib_uverbs rdma_ucm crc32_generic crc32_pclmul veth sch_netem"
# Modules the initramfs loads, in this order, to mount the host's files
BOOT_MODULES="virtio_pci 9pnet_virtio 9p overlay"

say() { echo "build-guest: $*" >&2; }
die() { say "$*"; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
    --cache)      cache=$2; shift 2 ;;
    --kernel-pkg) pkg=$2; shift 2 ;;
    --deb)        deb=$2; shift 2 ;;
    --force)      force=1; shift ;;
    -h|--help)    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *)            die "unknown option $1 (see --help)" ;;
    esac
done

for tool in dpkg-deb depmod modprobe cpio xz; do
    command -v $tool >/dev/null 2>&1 ||
        die "needs $tool (Debian packages dpkg, kmod, cpio, xz-utils)"
done
busybox=""
for b in /bin/busybox /usr/bin/busybox; do
    # a static one: ldd refuses it
    if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then
        busybox=$b
        break
    fi
done
[ -n "$busybox" ] || die "needs a static busybox (Debian package busybox-static)"

# The kernel package: the one the linux-image-amd64 metapackage points to
# when that is a 6.1 kernel, else the newest linux-image-6.1.0-N-amd64
pick_package() {
    local p
    p=$(apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-amd64\)$/\1/p' |
        head -n1)
    if [ -z "$p" ]; then
        p=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' \
                2>/dev/null | cut -d' ' -f1 | sort -t- -k5,5n | tail -n1)
    fi
    echo "$p"
}

if [ -n "$deb" ]; then
    [ -f "$deb" ] || die "no such file: $deb"
    pkg=$(dpkg-deb -f "$deb" Package) || die "$deb is not a Debian package"
fi
if [ -z "$pkg" ]; then
    pkg=$(pick_package)
fi
if [ -z "$pkg" ]; then
    # No package lists: fall back to a guest built earlier
    kver=$(ls -1 "$cache" 2>/dev/null | sort -V | while read -r k; do
               [ -f "$cache/$k/complete" ] && echo "$k"; done | tail -n1)
    [ -n "$kver" ] || die "no linux-image-6.1.0-*-amd64 package known to" \
        "apt (run apt-get update) and no guest in $cache"
    say "apt knows no kernel package; using the cached $kver"
    echo "$cache/$kver"
    exit 0
fi
case "$pkg" in
linux-image-*) kver=${pkg#linux-image-}; kver=${kver%-unsigned} ;;
*) die "$pkg is not a linux-image package" ;;
esac

# A guest built by other versions of these scripts is built again
here=$(cd "$(dirname "$0")" && pwd)
recipe=$(cat "$here/build-guest.sh" "$here/initramfs-init" | md5sum | cut -c1-12)
out=$cache/$kver
if [ $force -eq 0 ] && [ -f "$out/complete" ] &&
        [ "$(cat "$out/recipe" 2>/dev/null)" = "$recipe" ]; then
    echo "$out"
    exit 0
fi

start=$(date +%s%N)
mkdir -p "$cache" || die "cannot create $cache"
# One build per kernel at a time; whoever waited may find it done
if command -v flock >/dev/null 2>&1; then
    exec 9>"$cache/.lock-$kver"
    flock 9
    if [ $force -eq 0 ] && [ -f "$out/complete" ] &&
            [ "$(cat "$out/recipe" 2>/dev/null)" = "$recipe" ]; then
        echo "$out"
        exit 0
    fi
fi
work=$(mktemp -d "$cache/.build-$kver.XXXXXX") || die "cannot write to $cache"
trap 'rm -rf "$work"' EXIT

if [ -z "$deb" ]; then
    say "fetching $pkg (apt-get download)"
    (cd "$work" && apt-get download "$pkg" >/dev/null 2>"$work/apt.log") ||
        die "apt-get download $pkg failed: $(tail -n3 "$work/apt.log")"
    deb=$(ls "$work"/*.deb 2>/dev/null | head -n1)
    [ -n "$deb" ] || die "apt-get download $pkg produced no package"
fi

say "unpacking $(basename "$deb")"
mkdir -p "$work/x"
dpkg-deb --fsys-tarfile "$deb" |
    tar -x -C "$work/x" --wildcards "./boot/vmlinuz-$kver" "./lib/modules/$kver/*" ||
    die "cannot unpack $deb"
rm -f "$work"/*.deb
src=$work/x/lib/modules/$kver
[ -f "$work/x/boot/vmlinuz-$kver" ] && [ -d "$src" ] ||
    die "$pkg holds no vmlinuz-$kver and modules"
depmod -b "$work/x" "$kver" || die "depmod failed on $pkg"

# Every module of $@ with its dependencies, in load order, as paths
# relative to the modules directory
closure() {
    local m
    for m in "$@"; do
        modprobe -d "$work/x" -S "$kver" --show-depends "$m" ||
            die "$pkg has no module $m"
    done | sed -n "s|^insmod $work/x/*\.*/*lib/modules/$kver/||p" |
        sed 's/ *$//' | awk '!seen[$0]++'
}

mkdir -p "$work/g/modules/$kver" "$work/g/initramfs"
for f in $(closure $RUN_MODULES $BOOT_MODULES); do
    mkdir -p "$work/g/modules/$kver/$(dirname "$f")"
    cp "$src/$f" "$work/g/modules/$kver/$f"
done
cp "$src/modules.order" "$src/modules.builtin" "$src/modules.builtin.modinfo" \
    "$work/g/modules/$kver/"
mkdir -p "$work/mb/lib/modules"
ln -s "$work/g/modules/$kver" "$work/mb/lib/modules/$kver"
depmod -b "$work/mb" "$kver" || die "depmod failed on the module subset"

# The initramfs: busybox, the boot modules and the list to load in order
ir=$work/g/initramfs
mkdir -p "$ir/bin" "$ir/lib/modules" "$ir/proc" "$ir/sys" "$ir/dev" \
    "$ir/lower" "$ir/rw" "$ir/newroot"
cp "$busybox" "$ir/bin/busybox"
for f in $(closure $BOOT_MODULES); do
    cp "$src/$f" "$ir/lib/modules/"
    basename "$f" >>"$ir/modules.load"
done
cp "$here/initramfs-init" "$ir/init"
chmod 755 "$ir/init"
cp "$ir/init" "$work/g/init"
(cd "$ir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) \
    >"$work/g/initramfs.cpio" || die "cpio failed"
rm -rf "$ir"

# The bzImage carries an xz (or zstd/gzip) compressed ELF vmlinux; booting
# that directly (PVH entry) skips the decompressor, about 5 s under TCG
unpack_vmlinux() {
    local img=$1 dst=$2 off
    for magic in '\xfd7zXZ\x00' '\x28\xb5\x2f\xfd' '\x1f\x8b\x08\x00'; do
        for off in $(LC_ALL=C grep -obUaP "$magic" "$img" | cut -d: -f1 | head -n5); do
            case "$magic" in
            '\xfd'*) tail -c +$((off + 1)) "$img" | xz -dc --single-stream ;;
            '\x28'*) tail -c +$((off + 1)) "$img" | zstd -dcq ;;
            *)       tail -c +$((off + 1)) "$img" | gzip -dcq ;;
            esac >"$dst" 2>/dev/null
            if [ "$(head -c 4 "$dst" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; then
                return 0
            fi
        done
    done
    rm -f "$dst"
    return 1
}
if unpack_vmlinux "$work/x/boot/vmlinuz-$kver" "$work/g/vmlinux"; then
    say "unpacked the uncompressed kernel"
else
    say "cannot unpack the kernel image; booting the bzImage (slower)"
    cp "$work/x/boot/vmlinuz-$kver" "$work/g/vmlinuz"
fi
rm -rf "$work/x" "$work/mb"

echo "$pkg" >"$work/g/package"
echo "$recipe" >"$work/g/recipe"
date -u +%FT%TZ >"$work/g/complete"
# A VM booted from the old guest keeps working: the new one has the
# same files at the same paths
if [ -e "$out" ]; then
    mv "$out" "$work/old" || die "cannot replace $out"
fi
mv "$work/g" "$out" || die "cannot move the guest to $out"
say "guest $kver built in $(awk -v a="$start" -v b="$(date +%s%N)" \
    'BEGIN { printf "%.1f", (b - a) / 1e9 }') s: $out"
echo "$out"
