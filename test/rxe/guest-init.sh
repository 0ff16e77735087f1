#!/bin/bash
#
# Init of the Soft-RoCE test guest, run as process 1 on the host's root
# file system (read-only 9p under a tmpfs overlay). Mounts the job
# directory, loads the RDMA modules, creates the rxe devices and runs the
# job's command; its output goes to <job>/output, its exit status to
# <job>/rc, then the guest powers off.
#
# Devices: rxe_lo on lo; rxe_v0 on veth0 (10.78.0.1) and rxe_v1 on veth1
# (10.78.0.2), two "hosts" whose traffic crosses the veth pair.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

poweroff_now() {
    sync
    echo o >/proc/sysrq-trigger
    sleep 30
}

log() { echo "openuct-guest: $*" >/dev/console; }

mount -t proc proc /proc
job="" modules="" setup=1
for arg in $(</proc/cmdline); do
    case "$arg" in
    openuct.job=*)     job=${arg#openuct.job=} ;;
    openuct.modules=*) modules=${arg#openuct.modules=} ;;
    openuct.setup=*)   setup=${arg#openuct.setup=} ;;
    esac
done
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/lock
[ -d /sys/kernel/debug ] && mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
[ -d /sys/fs/cgroup ] && mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

if [ -z "$job" ]; then
    log "no openuct.job= on the kernel command line"
    poweroff_now
fi
mkdir -p "$job"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 job "$job"; then
    log "cannot mount the job directory (9p tag job)"
    poweroff_now
fi
out=$job/output
date +%s.%N >"$job/started"
log "up $(cut -d' ' -f1 /proc/uptime) s after boot; job $job"

fail_setup() {
    echo "guest setup failed: $*" >>"$out"
    log "setup failed: $*"
    echo 77 >"$job/rc"
    poweroff_now
}

# The kernel's own modules, for modprobe and for autoloading
kver=$(uname -r)
if [ -n "$modules" ] && [ -d "$modules/$kver" ]; then
    mkdir -p /usr/lib/modules
    mount --bind "$modules" /usr/lib/modules || fail_setup "bind $modules"
fi
hostname openuct-rxe

# Every step must work; the trace goes to the output when one fails.
# Batches, because each program started costs 0.1-0.4 s under emulation.
setup_rdma() (
    set -x
    modprobe -a crc32_generic rdma_rxe ib_uverbs rdma_ucm veth sch_netem ||
        exit 1
    ip -batch - <<EOF_IP || exit 1
link set lo up
link add veth0 type veth peer name veth1
addr add 10.78.0.1/24 dev veth0
addr add 10.78.0.2/24 dev veth1
EOF_IP
    # Two "hosts" on one kernel: traffic between the two addresses must
    # leave through the veth pair instead of being delivered locally.
    # A veth drops what does not fit its peer's backlog (1000 packets by
    # default): rxe answers a 4 MB RDMA read with a 4096-packet burst, and
    # every drop costs the requester a QP timeout (about 1 s) to retry.
    sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.all.rp_filter=0 \
        net.ipv4.conf.veth0.accept_local=1 net.ipv4.conf.veth0.rp_filter=0 \
        net.ipv4.conf.veth1.accept_local=1 net.ipv4.conf.veth1.rp_filter=0 \
        net.core.netdev_max_backlog=16384 ||
        exit 1
    ip -batch - <<EOF_IP || exit 1
link set veth0 up
link set veth1 up
rule add pref 100 iif lo from 10.78.0.2 to 10.78.0.1 lookup 100
rule add pref 101 iif lo from 10.78.0.1 to 10.78.0.2 lookup 101
route add 10.78.0.1/32 dev veth1 src 10.78.0.2 table 100
route add 10.78.0.2/32 dev veth0 src 10.78.0.1 table 101
rule add pref 1000 lookup local
rule del pref 0 lookup local
EOF_IP
    rdma -b - <<EOF_RDMA || exit 1
link add rxe_lo type rxe netdev lo
link add rxe_v0 type rxe netdev veth0
link add rxe_v1 type rxe netdev veth1
EOF_RDMA
)
if [ "$setup" = 1 ]; then
    setup_rdma >"$job/setup.log" 2>&1 || {
        cat "$job/setup.log" >>"$out"
        fail_setup "could not configure the RDMA devices (trace above)"
    }
fi
date +%s.%N >"$job/ready"
log "running the command in $(<"$job/cwd"): $(<"$job/cmd")"

# The command, as the host gave it: environment, directory, arguments
ulimit -l unlimited
ulimit -c 0
(
    . "$job/env"
    cd "$(<"$job/cwd")" || exit 1
    . "$job/cmd"
) </dev/null >>"$out" 2>&1 &
child=$!
wait $child
rc=$?
echo $rc >"$job/rc"
log "command exit status $rc"
poweroff_now
