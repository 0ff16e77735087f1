#!/bin/bash
#
# Runs a command inside a small VM whose kernel has the Soft-RoCE driver
# (rdma_rxe), with the host's files, and returns its exit status.
#
# usage: test/rxe/run.sh [options] -- COMMAND [ARG...]
#
#   -t, --timeout SEC     kill the VM after SEC seconds (default 600, or
#                         $OPENUCT_RXE_TIMEOUT); exit status 124
#   --cache DIR           guest cache (default $OPENUCT_RXE_CACHE, else
#                         ${XDG_CACHE_HOME:-$HOME/.cache}/openuct-rxe)
#   --kernel-pkg PKG      Debian kernel package (default: the current
#                         linux-image-6.1.0-<N>-amd64)
#   --smp N, --mem MB     guest CPUs (default 2) and memory (default 2048)
#   --no-setup            no RDMA modules and devices (to debug the set-up)
#   --console             print the guest console after the run
#   --keep                keep the job directory (output, console, rc)
#   -q, --quiet           no timing lines
#
# The guest sees the host's root file system read-only (writes land in
# guest memory), the command runs as root in the current directory with
# the current environment and "ulimit -l unlimited". RDMA devices:
# rxe_lo on lo (GID index 1 is ::ffff:127.0.0.1, RoCE v2), rxe_v0 on
# veth0 (10.78.0.1) and rxe_v1 on veth1 (10.78.0.2); modules veth and
# sch_netem are loaded, "ip netns" works.
#
# Exit status: the command's; 77 when the VM cannot start (the reason is
# printed); 124 on timeout (the guest console is printed).

set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
timeout_s=${OPENUCT_RXE_TIMEOUT:-600}
smp=2 mem=2048 show_console=0 keep=0 quiet=0 setup=1
build_args=()

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; }
say() { echo "rxe-vm: $*" >&2; }
info() { [ $quiet -eq 1 ] || say "$@"; }
skip() { say "SKIP: $*"; exit 77; }
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

while [ $# -gt 0 ]; do
    case "$1" in
    -t|--timeout) timeout_s=$2; shift 2 ;;
    --cache)      build_args+=(--cache "$2"); shift 2 ;;
    --kernel-pkg) build_args+=(--kernel-pkg "$2"); shift 2 ;;
    --smp)        smp=$2; shift 2 ;;
    --mem)        mem=$2; shift 2 ;;
    --no-setup)   setup=0; shift ;;
    --console)    show_console=1; shift ;;
    --keep)       keep=1; shift ;;
    -q|--quiet)   quiet=1; shift ;;
    -h|--help)    usage; exit 0 ;;
    --)           shift; break ;;
    *)            say "unknown option $1"; usage >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { say "no command given"; usage >&2; exit 2; }
case "$timeout_s" in
''|*[!0-9]*) say "bad timeout: $timeout_s"; exit 2 ;;
esac

qemu=$(command -v qemu-system-x86_64) ||
    skip "needs qemu-system-x86_64 (Debian package qemu-system-x86)"
[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 host"
case "$here" in
*[[:space:]]*) skip "the source path contains white space: $here" ;;
esac

t0=$(now)
guest=$(bash "$here/build-guest.sh" "${build_args[@]}") ||
    skip "could not build the guest (see above)"
t1=$(now)
kernel=$guest/vmlinux
[ -f "$kernel" ] || kernel=$guest/vmlinuz
info "guest $(basename "$guest") ready in $(secs "$t0" "$t1") s ($guest)"

job=$(mktemp -d "${TMPDIR:-/tmp}/openuct-rxe-job.XXXXXX") ||
    skip "cannot create a job directory"
chmod 755 "$job"
cleanup() {
    [ -n "${tail_pid:-}" ] && kill "$tail_pid" 2>/dev/null
    if [ $keep -eq 1 ]; then
        say "job directory kept: $job"
    else
        rm -rf "$job"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# What the guest init reads: environment, directory, command
export -p | grep -Ev '^declare -x (BASH_[A-Z_]*|SHLVL|PWD|OLDPWD|_)(=|$)' \
    >"$job/env"
pwd >"$job/cwd"
{ printf 'exec'; printf ' %q' "$@"; echo; } >"$job/cmd"
: >"$job/output"

cmdline="console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init"
cmdline+=" mitigations=off nokaslr 8250.nr_uarts=1"
cmdline+=" openuct.init=$here/guest-init.sh openuct.job=$job"
cmdline+=" openuct.modules=$guest/modules openuct.setup=$setup"

# Stream the command's output while the guest runs
tail -n +1 -f "$job/output" &
tail_pid=$!

t2=$(now)
timeout -k 10 "$timeout_s" "$qemu" \
    -accel tcg,thread=multi -cpu max -machine q35 -smp "$smp" -m "$mem" \
    -nodefaults -display none -monitor none -no-reboot -nic none \
    -serial "file:$job/console" \
    -kernel "$kernel" -initrd "$guest/initramfs.cpio" -append "$cmdline" \
    -fsdev local,id=hostroot,path=/,readonly=on,security_model=passthrough,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
    -fsdev local,id=job,path="$job",security_model=none,multidevs=remap \
    -device virtio-9p-pci,fsdev=job,mount_tag=job \
    </dev/null >"$job/qemu.log" 2>&1
qemu_rc=$?
t3=$(now)

# Let tail print what is left, then stop it
sleep 0.3
kill "$tail_pid" 2>/dev/null
wait "$tail_pid" 2>/dev/null
tail_pid=""

console() {
    echo "---- guest console ----"
    cat "$job/console" 2>/dev/null
    echo "---- end of guest console ----"
} >&2

# Host times of the guest's marks (9p files get the host's clock)
mark() { stat -c %.9Y "$job/$1" 2>/dev/null | tr -d .; }
ts=$(mark started) tr=$(mark ready)
[ -n "$ts" ] && info "VM booted in $(secs "$t2" "$ts") s (qemu TCG, $smp CPUs, $mem MB)"
[ -n "$tr" ] && [ -n "$ts" ] && [ $setup -eq 1 ] &&
    info "RDMA devices set up in $(secs "$ts" "$tr") s"

if [ $qemu_rc -eq 124 ] || [ $qemu_rc -eq 137 ]; then
    say "TIMEOUT: the VM ran over $timeout_s s and was killed"
    console
    exit 124
fi
if [ ! -f "$job/started" ]; then
    reason=$(grep -v '^$' "$job/qemu.log" 2>/dev/null | tail -n 3)
    [ -n "$reason" ] || reason=$(grep -a 'openuct-guest\|Kernel panic\|not syncing' \
                                     "$job/console" 2>/dev/null | tail -n 3)
    console
    skip "the VM did not start (qemu exit $qemu_rc): ${reason:-no reason given}"
fi
[ $show_console -eq 1 ] && console
if [ ! -s "$job/rc" ]; then
    say "FAIL: the guest stopped before the command finished (qemu exit $qemu_rc)"
    [ $show_console -eq 1 ] || console
    exit 1
fi
rc=$(<"$job/rc")
if [ -z "$tr" ] && [ $setup -eq 1 ]; then
    skip "the RDMA set-up failed in the guest (trace above)"
fi
info "command exit status $rc after $(secs "${tr:-$ts}" "$t3") s; VM total $(secs "$t2" "$t3") s"
exit "$rc"
