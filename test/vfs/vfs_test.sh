#!/bin/bash
#
# uct_vfs end to end, with the real library: vfs_test_proc (UCX_VFS_ENABLE=y,
# a self and a tcp interface, an endpoint on each) is started before the
# daemon and must attach when the daemon appears. Then, through the mount:
# the components, memory domains, worker, interfaces and endpoints with
# their files; counters that move after "send 100"; the memory_domain
# link; endpoints that disappear with "destroy-ep"; the process surviving
# a SIGKILLed daemon and attaching again to a new one, which cleans up the
# stale mount; the process's directory going away when it exits; SIGTERM
# unmounting. Negative checks: a socket directory open to others is
# refused; a mount directory that is a symbolic link (at the default path
# or given with -d), a file, another user's, writable by others, or in a
# directory open to all is refused with nothing mounted, while the
# caller's own 0755 one is taken and one the daemon makes is 0700; and (as
# root) a process of another user cannot attach.
#
# Everything runs in a private temporary directory (socket directory and
# mount), so the user's own daemon and processes are not touched.
# Exit codes: 0 pass, 1 fail, 77 skip (no FUSE here, or no uct_vfs).

: "${VFS_TEST_PROC:=./vfs_test_proc}"
: "${UCT_VFS:=../../src/tools/vfs/uct_vfs}"

WAIT_ATTACH=10   # seconds for a process to show up (it retries every 1 s)
WAIT_CHANGE=5    # seconds for a change to show in the tree
AM_ID=7          # the active message id vfs_test_proc sends

FAILED=0
DAEMON_PID=""
PROC_PID=""
PROC_SHELL_PID=""
TMP=""

step() { echo "-- $*"; }
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; FAILED=1; }
skip() { echo "SKIP $*"; cleanup; exit 77; }
indent() { sed 's/^/    | /'; }

is_mounted() {
    grep -q " $1 fuse" /proc/mounts
}

# The mount points at or below $1, one a line
mounts_under() {
    awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' \
        /proc/self/mounts
}

# The mount may be stale (daemon killed): detach it before removing files
unmount_quietly() {
    is_mounted "$1" || return 0
    fusermount3 -u -z "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
}

stop_daemon() {
    local pid=$1 i
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    { wait "$pid"; } 2>/dev/null
}

cleanup() {
    stop_daemon "$DAEMON_PID"
    DAEMON_PID=""
    if [ -n "$PROC_PID" ]; then
        kill -KILL "$PROC_PID" 2>/dev/null
        PROC_PID=""
    fi
    exec 7>&- 2>/dev/null
    if [ -n "$TMP" ]; then
        for m in $(mounts_under "$TMP"); do
            unmount_quietly "$m"
        done
        rm -rf --one-file-system "$TMP"
        TMP=""
    fi
}

# Runs "$@" every 0.1 s until it succeeds or $1 seconds pass
wait_until() {
    local deadline=$(($(date +%s%N) + $1 * 1000000000))
    shift
    while [ "$(date +%s%N)" -lt "$deadline" ]; do
        "$@" && return 0
        sleep 0.1
    done
    "$@"
}

show_daemon_log() {
    echo "    daemon log:"
    indent < "$TMP/daemon.log"
}

show_tree() {
    echo "    ls -lR $MNT/$PID:"
    ls -lR "$MNT/$PID" 2>&1 | indent
}

# ------------------------------------------------------------------------
# Can we run at all?

if [ ! -x "$UCT_VFS" ]; then
    skip "uct_vfs was not built: configure did not find libfuse3" \
         "(apt-get install libfuse3-dev, then run configure again)"
fi
if [ ! -c /dev/fuse ]; then
    skip "/dev/fuse is missing (modprobe fuse; in a container, pass" \
         "--device /dev/fuse)"
fi
if ! command -v fusermount3 >/dev/null 2>&1; then
    skip "fusermount3 is missing (Debian package fuse3)"
fi
if [ ! -x "$VFS_TEST_PROC" ]; then
    echo "FAIL $VFS_TEST_PROC was not built"
    exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/uct-vfs-test.XXXXXX") || exit 1
trap cleanup EXIT
SOCK="$TMP/sock"
MNT="$TMP/mnt"

# The daemon itself is no process to show
daemon_start() {
    env -u UCX_VFS_ENABLE "$UCT_VFS" -f -v "$@" >>"$TMP/daemon.log" 2>&1 &
    DAEMON_PID=$!
}

step "probe: can FUSE be mounted here?"
mkdir -m 700 "$TMP/probe-sock"
env -u UCX_VFS_ENABLE "$UCT_VFS" -f -s "$TMP/probe-sock" \
    -d "$TMP/probe-mnt" >"$TMP/probe.log" 2>&1 &
probe_pid=$!
if ! wait_until 5 is_mounted "$TMP/probe-mnt"; then
    kill -KILL $probe_pid 2>/dev/null
    { wait $probe_pid; } 2>/dev/null
    if grep -q "the mount directory" "$TMP/probe.log"; then
        echo "FAIL the probe's mount directory $TMP/probe-mnt was refused:"
        indent < "$TMP/probe.log"
        exit 1
    fi
    # libfuse's or fusermount3's own line says why
    why=$(grep -v -m 1 'uct_vfs\.c' "$TMP/probe.log")
    skip "FUSE mounting is not permitted here:" \
         "${why:-$(tail -n 1 "$TMP/probe.log")}"
fi
kill -TERM $probe_pid
wait $probe_pid
rc=$?
if [ $rc -eq 0 ] && ! is_mounted "$TMP/probe-mnt" &&
   [ ! -e "$TMP/probe-sock/vfs.sock" ]; then
    pass "mounted, and SIGTERM unmounted, removed the socket, exit 0"
else
    fail "after SIGTERM: exit $rc (expected 0), mounted:" \
         "$(is_mounted "$TMP/probe-mnt" && echo yes || echo no)," \
         "socket left: $([ -e "$TMP/probe-sock/vfs.sock" ] && echo yes ||
                         echo no)"
    indent < "$TMP/probe.log"
fi

# ------------------------------------------------------------------------
step "a socket directory open to other users (0755) is refused"
mkdir -m 755 "$TMP/open-sock"
env -u UCX_VFS_ENABLE "$UCT_VFS" -f -s "$TMP/open-sock" -d "$TMP/open-mnt" \
    >"$TMP/open.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "open to other users" "$TMP/open.log" &&
   ! is_mounted "$TMP/open-mnt"; then
    pass "exit 1: $(grep -o 'vfs: .*open to other users.*' "$TMP/open.log")"
else
    fail "exit $rc (expected 1 and an 'open to other users' message)"
    indent < "$TMP/open.log"
fi

# ------------------------------------------------------------------------
# The mount directory: another user must not be able to choose where root's
# daemon mounts. Each refusal: exit 1, the one error line saying what is
# wrong, and no mount anywhere under $TMP.
RSOCK="$TMP/refuse-sock"
mkdir -m 700 "$RSOCK"

# "$1": the case; "$2": a fixed string the error line must contain; the
# rest: the daemon's options besides -s
expect_mount_dir_refused() {
    local what=$1 why=$2 rc count mounts line
    shift 2
    env -u UCX_VFS_ENABLE "$UCT_VFS" -s "$RSOCK" "$@" \
        >"$TMP/refuse.log" 2>&1
    rc=$?
    count=$(grep -c -F -- "$why" "$TMP/refuse.log")
    mounts=$(mounts_under "$TMP" | tr '\n' ' ')
    line=$(grep -F -- "$why" "$TMP/refuse.log" |
           sed 's/.*uct_vfs: /uct_vfs: /')
    if [ $rc -eq 1 ] && [ "$count" -eq 1 ] && [ -z "$mounts" ]; then
        pass "$what: exit 1, nothing mounted; $line"
    else
        fail "$what: exit $rc (expected 1), '$why' said $count times" \
             "(expected once), mounted: '${mounts}' (expected none)"
        indent < "$TMP/refuse.log"
        # The next cases start from nothing mounted; a daemon that went to
        # the background exits when its mount goes
        for m in $mounts; do
            unmount_quietly "$m"
        done
    fi
}

# A directory of root's with something in it, for links to point at
TARGET="$TMP/root-dir"
mkdir -m 755 "$TARGET"
echo keep >"$TARGET/keep"

target_untouched() {
    local what=$1
    if [ "$(cat "$TARGET/keep" 2>&1)" = keep ] &&
       [ "$(stat -c %a "$TARGET")" = 755 ] &&
       ! mountpoint -q "$TARGET"; then
        pass "$what: $TARGET is not mounted, mode and content unchanged"
    else
        fail "$what: $TARGET changed: mode $(stat -c %a "$TARGET")," \
             "keep: '$(cat "$TARGET/keep" 2>&1)'," \
             "mountpoint: $(mountpoint "$TARGET" 2>&1)"
    fi
}

step "mount directory: a symbolic link at the default path is refused"
# XDG_RUNTIME_DIR puts the default in $TMP: the same code as
# /tmp/openuct-vfs-<uid>, without touching the real one. In the background
# (no -f) too: the parent must pass the refusal on in its exit status.
mkdir -m 700 "$TMP/xdg"
ln -s "$TARGET" "$TMP/xdg/openuct-vfs"
UCX_VFS_MOUNT_DIR= XDG_RUNTIME_DIR="$TMP/xdg" \
    expect_mount_dir_refused "default path" \
    "the mount directory $TMP/xdg/openuct-vfs is a symbolic link; remove" \
    -v
target_untouched "default path"
if [ -L "$TMP/xdg/openuct-vfs" ]; then
    pass "the link is left as it was"
else
    fail "the link $TMP/xdg/openuct-vfs was changed or removed"
fi

step "mount directory: a symbolic link given with -d is refused"
ln -s "$TARGET" "$TMP/link-mnt"
expect_mount_dir_refused "-d LINK" \
    "the mount directory $TMP/link-mnt is a symbolic link; remove" \
    -f -d "$TMP/link-mnt"
expect_mount_dir_refused "-d LINK/" \
    "the mount directory $TMP/link-mnt/ is a symbolic link; remove" \
    -f -d "$TMP/link-mnt/"
target_untouched "-d LINK"

step "mount directory: a regular file is refused"
echo data >"$TMP/file-mnt"
expect_mount_dir_refused "-d FILE" \
    "the mount directory $TMP/file-mnt is not a directory; remove" \
    -f -d "$TMP/file-mnt"
if [ "$(cat "$TMP/file-mnt")" = data ]; then
    pass "the file is unchanged"
else
    fail "the file $TMP/file-mnt changed"
fi

step "mount directory: one that belongs to another user is refused"
mkdir -m 700 "$TMP/nobody-mnt"
if chown 65534:65534 "$TMP/nobody-mnt" 2>/dev/null; then
    expect_mount_dir_refused "-d (uid 65534's)" \
        "the mount directory $TMP/nobody-mnt belongs to uid 65534, not to" \
        -f -d "$TMP/nobody-mnt"
else
    echo "SKIP needs root, to give a directory to uid 65534"
fi

step "mount directory: one writable by other users (0777) is refused"
mkdir -m 777 "$TMP/open-mnt777"
expect_mount_dir_refused "-d (0777)" \
    "$TMP/open-mnt777 is writable by other users (mode 0777); run 'chmod" \
    -f -d "$TMP/open-mnt777"
if [ "$(stat -c %a "$TMP/open-mnt777")" = 777 ]; then
    pass "its mode is left alone (0777)"
else
    fail "its mode changed to $(stat -c %a "$TMP/open-mnt777")"
fi

step "mount directory: one inside a directory open to all is refused"
mkdir -m 777 "$TMP/open-parent"
expect_mount_dir_refused "-d (in a 0777 parent)" \
    "is inside $TMP/open-parent, which other users may write to" \
    -f -d "$TMP/open-parent/mnt"
if [ ! -e "$TMP/open-parent/mnt" ]; then
    pass "$TMP/open-parent/mnt was not made"
else
    fail "$TMP/open-parent/mnt was made"
fi

step "mount directory: the caller's own 0755 directory is accepted"
mkdir -m 755 "$TMP/mnt755"
env -u UCX_VFS_ENABLE "$UCT_VFS" -f -s "$RSOCK" -d "$TMP/mnt755" \
    >"$TMP/mnt755.log" 2>&1 &
pid=$!
if wait_until 5 is_mounted "$TMP/mnt755"; then
    pass "mounted at $TMP/mnt755"
else
    fail "not mounted at $TMP/mnt755 within 5 s"
    indent < "$TMP/mnt755.log"
fi
stop_daemon $pid
if ! is_mounted "$TMP/mnt755" &&
   [ "$(stat -c %a "$TMP/mnt755" 2>&1)" = 755 ]; then
    pass "after SIGTERM: unmounted, the directory kept (mode 0755)"
else
    fail "after SIGTERM: mounted: $(is_mounted "$TMP/mnt755" && echo yes ||
         echo no), mode: $(stat -c %a "$TMP/mnt755" 2>&1) (expected 755)"
fi

step "mount directory: one it makes is 0700 and the caller's, even" \
     "under umask 0277"
# SIGKILL leaves the directory (a clean exit removes it); the stale mount
# over it is then detached, so its own mode shows
mkdir -m 700 "$TMP/new-sock"
(umask 0277 && exec env -u UCX_VFS_ENABLE "$UCT_VFS" -f -s "$TMP/new-sock" \
    -d "$TMP/new-mnt") >"$TMP/new-mnt.log" 2>&1 &
pid=$!
if wait_until 5 is_mounted "$TMP/new-mnt"; then
    kill -KILL $pid
    { wait $pid; } 2>/dev/null
    unmount_quietly "$TMP/new-mnt"
    got=$(stat -c '%a %u' "$TMP/new-mnt" 2>&1)
    if [ "$got" = "700 $(id -u)" ]; then
        pass "$TMP/new-mnt: mode 0700, uid $(id -u)"
    else
        fail "$TMP/new-mnt: mode and uid '$got', expected '700 $(id -u)'"
    fi
else
    fail "not mounted at $TMP/new-mnt within 5 s"
    stop_daemon $pid
    indent < "$TMP/new-mnt.log"
fi

# ------------------------------------------------------------------------
step "start vfs_test_proc (UCX_VFS_ENABLE=y) before any daemon"
mkfifo "$TMP/proc.in"
UCX_VFS_ENABLE=y UCX_VFS_SOCK_DIR="$SOCK" \
    "$VFS_TEST_PROC" <"$TMP/proc.in" >"$TMP/proc.out" 2>"$TMP/proc.err" &
PROC_SHELL_PID=$!
exec 7>"$TMP/proc.in"
if ! wait_until 10 grep -q '^ready ' "$TMP/proc.out"; then
    fail "vfs_test_proc did not start"
    indent < "$TMP/proc.err"
    exit 1
fi
PID=$(awk '/^ready /{print $2; exit}' "$TMP/proc.out")
PROC_PID=$PID
pass "pid $PID is ready"

# Whether vfs_test_proc has printed more than $1 lines
proc_lines_gt() {
    [ "$(wc -l <"$TMP/proc.out")" -gt "$1" ]
}

# Sends a command and waits for its one-line answer, which must be "ok"
proc_cmd() {
    local before
    before=$(wc -l <"$TMP/proc.out")
    echo "$1" >&7
    if ! wait_until 15 proc_lines_gt "$before"; then
        fail "vfs_test_proc did not answer '$1'"
        indent < "$TMP/proc.err"
        return 1
    fi
    REPLY=$(sed -n "$((before + 1))p" "$TMP/proc.out")
    if [ "${REPLY%% *}" != ok ]; then
        fail "vfs_test_proc answered '$1' with '$REPLY'"
        indent < "$TMP/proc.err"
        return 1
    fi
    return 0
}

# ------------------------------------------------------------------------
step "start uct_vfs -f -v -s SOCK -d MNT; pid $PID must attach"
daemon_start -s "$SOCK" -d "$MNT"
if wait_until "$WAIT_ATTACH" test -d "$MNT/$PID"; then
    pass "$MNT/$PID appeared; the root lists: $(ls "$MNT" | tr '\n' ' ')"
else
    fail "$MNT/$PID did not appear within $WAIT_ATTACH s"
    show_daemon_log
    indent < "$TMP/proc.err"
    exit 1
fi
P="$MNT/$PID"

# ------------------------------------------------------------------------
step "ls -R shows the components, memory domains, worker, ifaces, eps"
ls -R "$P" >"$TMP/ls-R.txt" 2>"$TMP/ls-R.err"
if [ -s "$TMP/ls-R.err" ]; then
    fail "ls -R reported errors"
    indent < "$TMP/ls-R.err"
fi
echo "    $(wc -l <"$TMP/ls-R.txt") lines; top: $(ls "$P" | tr '\n' ' ')"

check_dir() {
    if [ -d "$P/$1" ]; then
        pass "$1/: $(ls "$P/$1" | tr '\n' ' ')"
    else
        fail "no directory $1"
        TREE_BAD=1
    fi
}
TREE_BAD=0
check_dir uct/component/self
check_dir uct/component/tcp
check_dir uct/md/self
check_dir uct/md/tcp

workers=$(ls -d "$P"/uct/worker/*/ 2>/dev/null | wc -l)
if [ "$workers" -eq 1 ]; then
    WORKER=$(ls -d "$P"/uct/worker/*/)
    WORKER=${WORKER%/}
    pass "one worker: ${WORKER#$P/}/: $(ls "$WORKER" | tr '\n' ' ')"
else
    fail "expected 1 worker directory under uct/worker, found $workers"
    TREE_BAD=1
fi

# The directory of the interface whose "transport" file says $1
iface_of() {
    local dir
    for dir in "$P"/uct/worker/*/iface/*/; do
        if [ "$(cat "$dir/transport" 2>/dev/null)" = "$1" ]; then
            echo "${dir%/}"
            return 0
        fi
    done
    return 1
}

for tl in self tcp; do
    dir=$(iface_of $tl)
    if [ -z "$dir" ]; then
        fail "no interface with transport '$tl' under uct/worker/*/iface"
        TREE_BAD=1
        continue
    fi
    eval "IFACE_$tl=\$dir"
    pass "$tl interface ${dir#$P/}/: $(ls "$dir" | tr '\n' ' ')"
    for f in device capabilities counters; do
        if [ ! -f "$dir/$f" ]; then
            fail "$tl interface: no file '$f'"
            TREE_BAD=1
        fi
    done
    eps=$(ls -d "$dir"/ep/*/ 2>/dev/null | wc -l)
    if [ "$eps" -ge 1 ]; then
        pass "$tl interface has $eps endpoint(s):" \
             "$(cd "$dir" && ls -d ep/*/ | tr '\n' ' ')"
    else
        fail "$tl interface has no endpoint directory under ep/"
        TREE_BAD=1
    fi
done
[ $TREE_BAD -eq 0 ] || show_tree

# ------------------------------------------------------------------------
step "cat: transport, device and capabilities of each interface"
for tl in self tcp; do
    eval "dir=\$IFACE_$tl"
    [ -n "$dir" ] || continue
    caps=$(cat "$dir/capabilities" 2>&1)
    dev=$(cat "$dir/device" 2>&1)
    if [ "$(cat "$dir/transport")" = $tl ] &&
       echo "$caps" | grep -q am_short; then
        pass "$tl: device '$dev', capabilities: $(echo $caps | cut -c1-100)"
    else
        fail "$tl: transport '$(cat "$dir/transport")', capabilities" \
             "without am_short:"
        echo "$caps" | indent
    fi
done

# ------------------------------------------------------------------------
step "the memory_domain link of each interface resolves to its md"
for tl in self tcp; do
    eval "dir=\$IFACE_$tl"
    [ -n "$dir" ] || continue
    target=$(readlink "$dir/memory_domain")
    if [ -d "$dir/memory_domain" ] &&
       [ "$(basename "$target")" = $tl ] &&
       ls "$dir/memory_domain/" >/dev/null 2>&1; then
        pass "$tl: memory_domain -> $target ($(ls "$dir/memory_domain" |
                                             tr '\n' ' '))"
    else
        fail "$tl: memory_domain -> '$target' does not resolve to md $tl"
        ls -l "$dir" 2>&1 | indent
    fi
done

# ------------------------------------------------------------------------
step "every file of every endpoint can be read"
for tl in self tcp; do
    eval "dir=\$IFACE_$tl"
    [ -n "$dir" ] || continue
    for ep in "$dir"/ep/*/; do
        [ -d "$ep" ] || continue
        files=$(find "$ep" -maxdepth 1 -type f | sort)
        if [ -z "$files" ]; then
            echo "    $tl ${ep#$dir/}: no files (the transport adds none)"
            continue
        fi
        for f in $files; do
            if content=$(cat "$f" 2>&1); then
                pass "$tl ${f#$dir/}: $(echo $content | cut -c1-80)"
            else
                fail "$tl ${f#$dir/}: $content"
            fi
        done
    done
done

# ------------------------------------------------------------------------
step "counters change after 'send 100'"
for tl in self tcp; do
    eval "dir=\$IFACE_$tl"
    [ -n "$dir" ] && cat "$dir/counters" >"$TMP/counters-$tl.before" 2>&1
done
proc_cmd "send 100" && echo "    vfs_test_proc: $REPLY"

# "am.7.tx_msgs 100" -> 100; 0 when absent
counter() {
    awk -v n="$2" '$1 == n { print $2; found = 1 }
                   END { if (!found) print 0 }' "$1"
}
for tl in self tcp; do
    eval "dir=\$IFACE_$tl"
    [ -n "$dir" ] || continue
    cat "$dir/counters" >"$TMP/counters-$tl.after" 2>&1
    tx0=$(counter "$TMP/counters-$tl.before" am.$AM_ID.tx_msgs)
    tx1=$(counter "$TMP/counters-$tl.after" am.$AM_ID.tx_msgs)
    rx0=$(counter "$TMP/counters-$tl.before" am.$AM_ID.rx_msgs)
    rx1=$(counter "$TMP/counters-$tl.after" am.$AM_ID.rx_msgs)
    if grep -q disabled "$TMP/counters-$tl.after"; then
        echo "SKIP $tl: counters are compiled out (--disable-stats)"
    elif [ $((tx1 - tx0)) -ge 100 ] && [ $((rx1 - rx0)) -ge 100 ]; then
        pass "$tl: am.$AM_ID.tx_msgs $tx0 -> $tx1, am.$AM_ID.rx_msgs" \
             "$rx0 -> $rx1"
    else
        fail "$tl: am.$AM_ID tx_msgs $tx0 -> $tx1, rx_msgs $rx0 -> $rx1" \
             "(expected +100 each)"
        diff "$TMP/counters-$tl.before" "$TMP/counters-$tl.after" | indent
    fi
done

# ------------------------------------------------------------------------
step "'destroy-ep' removes the endpoint directories"
no_eps() {
    local dir
    for dir in "$IFACE_self" "$IFACE_tcp"; do
        [ -n "$dir" ] || continue
        [ -z "$(ls "$dir/ep" 2>/dev/null)" ] || return 1
    done
    return 0
}
if proc_cmd destroy-ep; then
    if wait_until "$WAIT_CHANGE" no_eps; then
        pass "no endpoint directories left under the self and tcp ifaces"
    else
        fail "endpoint directories left $WAIT_CHANGE s after destroy-ep:"
        for dir in "$IFACE_self" "$IFACE_tcp"; do
            [ -d "$dir/ep" ] && ls -R "$dir/ep" 2>&1 | indent
        done
    fi
fi

# ------------------------------------------------------------------------
step "SIGKILL the daemon: the process keeps running, the mount is stale"
kill -KILL "$DAEMON_PID"
{ wait "$DAEMON_PID"; } 2>/dev/null
DAEMON_PID=""
sleep 0.5
if proc_cmd ping; then
    pass "vfs_test_proc still answers ($REPLY)"
fi
if err=$(ls "$MNT" 2>&1); then
    fail "the mount still works after the daemon was killed?"
else
    pass "the mount is stale: $err"
fi

step "restart the daemon: stale mount cleaned up, pid $PID attaches again"
daemon_start -s "$SOCK" -d "$MNT"
if wait_until "$WAIT_ATTACH" test -d "$MNT/$PID"; then
    pass "$MNT/$PID is back"
else
    fail "$MNT/$PID did not come back within $WAIT_ATTACH s"
    show_daemon_log
fi
STALE_MOUNT="$MNT is the mount of a uct_vfs that did not exit cleanly"
if grep -q -F "$STALE_MOUNT" "$TMP/daemon.log"; then
    pass "the daemon said: $(grep -o "uct_vfs: $STALE_MOUNT.*" \
                             "$TMP/daemon.log" | head -n 1)"
else
    fail "the daemon did not report the stale mount"
    show_daemon_log
fi

# ------------------------------------------------------------------------
step "a process of another user cannot attach (SO_PEERCRED)"
# A python3 that user nobody (65534) may run, for a bare connect()
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
other_python=""
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    for py in /usr/bin/python3 "$(command -v python3)"; do
        if [ -n "$py" ] && $NOBODY "$py" -c pass 2>/dev/null; then
            other_python=$py
            break
        fi
    done
fi
if [ -z "$other_python" ]; then
    echo "SKIP needs root, setpriv and a python3 that another user can" \
         "run, to connect as another user"
else
    # Open the way for a moment, so that only the uid check stands
    chmod 711 "$TMP" "$SOCK"
    chmod 666 "$SOCK/vfs.sock"
    $NOBODY "$other_python" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
time.sleep(0.5)
' "$SOCK/vfs.sock" 2>"$TMP/other.err"
    chmod 700 "$TMP" "$SOCK"
    chmod 600 "$SOCK/vfs.sock"
    if grep -q "refusing pid .* of uid 65534" "$TMP/daemon.log"; then
        pass "the daemon said: $(grep -o 'uct_vfs: refusing pid.*' \
                                 "$TMP/daemon.log" | head -n 1)"
    else
        fail "no refusal of uid 65534 in the daemon log"
        indent < "$TMP/other.err"
        show_daemon_log
    fi
    if [ "$(ls "$MNT" | tr -d '\n')" = "$PID" ]; then
        pass "the root still lists only $PID"
    else
        fail "the root lists: $(ls "$MNT" | tr '\n' ' ')"
    fi
fi

# ------------------------------------------------------------------------
step "'exit': the process's directory disappears"
proc_cmd exit
if wait_until "$WAIT_CHANGE" test ! -e "$MNT/$PID"; then
    pass "$MNT/$PID is gone"
else
    fail "$MNT/$PID is still there $WAIT_CHANGE s after the process exited"
fi
wait "$PROC_SHELL_PID"
rc=$?
PROC_PID=""
if [ $rc -eq 0 ]; then
    pass "vfs_test_proc exited 0"
else
    fail "vfs_test_proc exited $rc"
    indent < "$TMP/proc.err"
fi

# ------------------------------------------------------------------------
step "SIGTERM the daemon: it unmounts, removes its socket and exits 0"
kill -TERM "$DAEMON_PID"
wait_until 5 eval '! kill -0 $DAEMON_PID 2>/dev/null'
wait "$DAEMON_PID"
rc=$?
DAEMON_PID=""
if [ $rc -eq 0 ] && ! is_mounted "$MNT" && [ ! -e "$SOCK/vfs.sock" ]; then
    pass "exit 0, $MNT unmounted, socket removed"
else
    fail "exit $rc, mounted: $(is_mounted "$MNT" && echo yes || echo no)," \
         "socket left: $([ -e "$SOCK/vfs.sock" ] && echo yes || echo no)"
    show_daemon_log
fi

# The library must not have complained along the way
step "vfs_test_proc logged no errors"
if grep -q -E ' (error|fatal) ' "$TMP/proc.err"; then
    fail "vfs_test_proc logged errors:"
    indent < "$TMP/proc.err"
elif [ -s "$TMP/proc.err" ]; then
    pass "no errors; its other messages:"
    indent < "$TMP/proc.err"
else
    pass "its stderr is empty"
fi

if [ $FAILED -ne 0 ]; then
    echo "FAIL (see above)"
    exit 1
fi
echo "PASS all checks"
exit 0
