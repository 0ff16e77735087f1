#!/bin/bash
# Installs the Debian 12 packages openuct needs to build, test and run its
# tools. Run as root. Safe to run again.
set -euo pipefail

packages=(
    build-essential autoconf automake libtool pkg-config make
    libhwloc-dev hwloc
    googletest
    valgrind
    iproute2
    groff-base man-db
    sockperf gnuplot-nox
    libfuse3-dev fuse3
    libibverbs-dev rdma-core ibverbs-providers ibverbs-utils perftest
    libnuma1 librdmacm1
    qemu-system-x86 busybox-static cpio kmod xz-utils
    clang libclang-rt-14-dev llvm
    debhelper dpkg-dev fakeroot lintian
    doxygen clang-format cppcheck
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "install-deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
