#!/bin/sh
#
# Smoke test of uct_perftest over the self transport in loopback:
#   check-perftest.sh BUILDDIR
# Runs every test in every mode self supports with small counts and two
# sizes, checks the result rows, the CSV output, and that unsupported
# combinations and client/server mode over self fail as documented.
# Timing is printed, never judged.

builddir=${1:?usage: check-perftest.sh BUILDDIR}
perftest="$builddir/src/tools/perf/uct_perftest"
base="-x self -d memory -l -n 1000 -w 100"
out=$(mktemp) || exit 1
err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT
failures=0

fail() {
    echo "FAIL: $*"
    sed 's/^/    out: /' "$out"
    sed 's/^/    err: /' "$err"
    failures=$((failures + 1))
}

# run EXPECTED_EXIT ARGS...: runs the tool, checks the exit code
run() {
    expected=$1
    shift
    "$perftest" "$@" >"$out" 2>"$err"
    rc=$?
    if [ "$rc" -ne "$expected" ]; then
        fail "uct_perftest $* exited $rc, expected $expected"
        return 1
    fi
    return 0
}

# Table rows: test mode size iterations min p50 p99 average bw rate.
# p50 (field 6) and bandwidth (field 9) must be positive; latency tests
# print min <= p50 <= p99, bandwidth tests "-" for min and p99
check_rows() {
    want=$1
    rows=$(awk -v t="$2" '$1 == t && $6 > 0 && $9 > 0 &&
        (($5 == "-" && $7 == "-") || ($5 > 0 && $5 <= $6 && $6 <= $7))' \
        "$out" | wc -l)
    if [ "$rows" -ne "$want" ]; then
        fail "expected $want result rows with positive figures, got $rows"
    fi
}

check_csv() {
    want=$1
    if ! head -n 1 "$out" | grep -qx \
        'test,mode,size,iterations,typical_lat_usec,avg_lat_usec,bw_mib_s,msg_rate,min_lat_usec,p99_lat_usec'
    then
        fail "CSV header missing"
        return
    fi
    rows=$(awk -F, -v t="$2" \
        'NR > 1 && NF == 10 && $1 == t && $5 > 0 && $7 > 0 &&
         (($9 == "" && $10 == "") || ($9 > 0 && $9 <= $5 && $5 <= $10))' \
        "$out" | wc -l)
    lines=$(wc -l < "$out")
    if [ "$rows" -ne "$want" ] || [ "$lines" -ne $((want + 1)) ]; then
        fail "expected a CSV header and $want rows of 10 columns"
    fi
}

for test in am_lat am_bw put_lat put_bw get_lat get_bw; do
    for mode in short bcopy zcopy; do
        sizes=8,4096
        if run 0 $base -t $test -D $mode -s $sizes; then
            check_rows 2 $test
        fi
        if run 0 $base -t $test -D $mode -s $sizes -f csv; then
            check_csv 2 $test
        fi
    done
done

if run 0 $base -t atomic_add_lat -s 4,8; then
    check_rows 2 atomic_add_lat
fi
if run 0 $base -t atomic_add_lat -f csv; then
    check_csv 1 atomic_add_lat
fi
run 0 $base -t put_bw -D zcopy -s 1m -n 100 -w 10 && check_rows 1 put_bw

# The rendezvous pattern: get zcopy only
run 0 $base -t rndv_lat -D zcopy -s 8,8k,1m && check_rows 3 rndv_lat
run 0 $base -t rndv_lat -D zcopy -s 64 -f csv && check_csv 1 rndv_lat
run 2 $base -t rndv_lat &&
    { grep -q "use -D zcopy" "$err" || fail "rndv_lat -D short: no hint"; }

# Receiver credits: none, one message at a time, the default; and the
# completion window
for w in 0 1 127; do
    run 0 $base -t am_bw -W $w -s 8,1k && check_rows 2 am_bw
    grep -q "receiver credits $w," "$out" || fail "-W $w not in the header"
done
run 0 $base -t am_bw -D zcopy -O 1 -s 4k && check_rows 1 am_bw
run 2 $base -t am_bw -O 0 &&
    { grep -q "invalid -O" "$err" || fail "bad -O not named"; }
run 2 $base -t am_bw -W -1 &&
    { grep -q "invalid -W" "$err" || fail "bad -W not named"; }

# Unsupported combinations: one line on stderr, exit code 2
run 2 $base -t atomic_add_lat -D bcopy &&
    { grep -q "cannot run atomic_add_lat" "$err" || fail "no reason given"; }
run 2 $base -t am_lat -D short -s 100000 &&
    { grep -q "outside the limits" "$err" || fail "no reason given"; }

# Bad command lines: usage, exit code 2
run 2 -x self -d memory -l -t no_such_test &&
    { grep -q "^Usage" "$err" || fail "no usage printed"; }
run 2 $base -t am_lat -s 0 || true
run 2 $base -t am_lat -p 1234 || true
run 2 $base -t am_lat -T soon &&
    { grep -q "invalid -T" "$err" || fail "bad -T not named"; }
run 0 $base -t am_lat -T 0 && check_rows 1 am_lat
run 0 -h && { grep -q "^Usage" "$out" || fail "-h prints no usage"; }

# The clock read every 16 iterations: samples are 16-iteration means
run 0 $base -t am_lat -B 16 -n 1000 && check_rows 1 am_lat
grep -q "clock read every 16 iterations" "$out" || fail "-B not in the header"
run 2 $base -t am_bw -B 16 &&
    { grep -q -- "-B go with" "$err" || fail "-B with am_bw not refused"; }

# One message per iteration, as ucx_perftest -l times loopback latency
run 0 $base -t am_lat -1 && check_rows 1 am_lat
grep -q "half of one message" "$out" || fail "-1 not in the header"
run 2 $base -t put_lat -1 &&
    { grep -q -- "-1 and -B go with" "$err" || fail "-1 with put_lat not refused"; }

# Connection modes: self connects to interfaces only
run 0 $base -t am_lat -C iface && check_rows 1 am_lat
grep -q "connected to iface" "$out" || fail "-C iface not in the header"
run 2 $base -t am_lat -C ep &&
    { grep -q "cannot connect to an endpoint" "$err" || fail "-C ep not refused with a reason"; }
run 2 $base -t am_lat -C sideways &&
    { grep -q "invalid -C" "$err" || fail "bad -C not named"; }

# self does not cross processes: client/server mode is refused with a hint
if "$perftest" -x self -d memory -t am_lat localhost >"$out" 2>"$err"; then
    fail "client mode over self succeeded"
elif ! grep -q "use -l" "$err"; then
    fail "client mode over self: no hint to use -l"
fi

if [ "$failures" -ne 0 ]; then
    echo "check-perftest: $failures failure(s)"
    exit 1
fi
echo "check-perftest: all passed"
