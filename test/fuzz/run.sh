#!/bin/sh
# Runs the fuzz harnesses (called by make, see Makefile.am):
#
#   run.sh fuzz    SRCDIR BUILDDIR SECONDS HARNESS...
#       each harness under libFuzzer for SECONDS, starting from a scratch
#       copy of corpus/HARNESS and regress/HARNESS (the repository is never
#       written); prints executions per second and coverage; fails on any
#       crash, leak or timeout, whose input is kept in
#       BUILDDIR/fuzz-artifacts/HARNESS/.
#   run.sh regress SRCDIR BUILDDIR 0 HARNESS...
#       each harness once on every file of corpus/HARNESS and
#       regress/HARNESS.
set -u

mode=$1
srcdir=$2
builddir=$3
seconds=$4
shift 4

failed=""
summary=""

inputs_of() {
    for dir in "$srcdir/corpus/$1" "$srcdir/regress/$1"; do
        if [ -d "$dir" ]; then
            echo "$dir"
        fi
    done
}

# stat_of LOG NAME: a "stat::NAME: value" line of -print_final_stats
stat_of() {
    sed -n "s/^stat::$2:[[:space:]]*//p" "$1"
}

# "cov 600, ft 1800, corpus 400" from a libFuzzer status line
cov_sed='s/.*cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/'
cov_sed="${cov_sed}cov \\1, ft \\2, corpus \\3/p"

# One file at a time: libFuzzer given a directory would fuzz it
files_of() {
    for dir in $(inputs_of "$1"); do
        find "$dir" -type f ! -name '.*' | LC_ALL=C sort
    done
}

for harness in "$@"; do
    prog="$builddir/$harness"
    case $mode in
    regress)
        log="$builddir/$harness.regress.log"
        # shellcheck disable=SC2046
        if ! "$prog" $(files_of "$harness") >"$log" 2>&1; then
            cat "$log" >&2
            failed="$failed $harness"
            continue
        fi
        echo "$harness: $(files_of "$harness" | wc -l) inputs passed"
        ;;
    fuzz)
        work="$builddir/fuzz-work/$harness"
        artifacts="$builddir/fuzz-artifacts/$harness"
        log="$work/fuzz.log"
        rm -rf "$work"
        mkdir -p "$work/corpus" "$artifacts"
        for dir in $(inputs_of "$harness"); do
            cp "$dir"/* "$work/corpus/" 2>/dev/null || true
        done

        dict=""
        if [ -f "$srcdir/$harness.dict" ]; then
            dict="-dict=$srcdir/$harness.dict"
        fi

        echo "=== fuzzing $harness for ${seconds}s (log: $log)"
        rc=0
        # shellcheck disable=SC2086
        "$prog" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$artifacts/" $dict \
            "$work/corpus" >"$log" 2>&1 || rc=$?

        # the first and the last status lines: coverage and speed
        grep -E '^#[0-9]+[[:space:]]+INITED' "$log" | head -n 1
        grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE)' "$log" |
            tail -n 1
        runs=$(stat_of "$log" number_of_executed_units)
        speed=$(stat_of "$log" average_exec_per_sec)
        rss=$(stat_of "$log" peak_rss_mb)
        cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 |
              sed -n "$cov_sed")
        summary="$summary
$harness: $runs runs, $speed exec/s, $cov, peak rss $rss MB"

        if [ $rc -ne 0 ]; then
            echo "--- $harness: libFuzzer exited with $rc; the end of $log:" >&2
            tail -n 60 "$log" >&2
            echo "--- $harness: inputs kept in $artifacts:" >&2
            ls -l "$artifacts" >&2
            echo "--- reproduce with: $prog <input>; once fixed, add the" \
                 "input to test/fuzz/regress/$harness/" >&2
            failed="$failed $harness"
        fi
        ;;
    *)
        echo "run.sh: unknown mode '$mode'" >&2
        exit 2
        ;;
    esac
done

if [ -n "$summary" ]; then
    echo "=== fuzzing summary (${seconds}s per harness):$summary"
fi

if [ -n "$failed" ]; then
    echo "FAILED:$failed" >&2
    exit 1
fi
exit 0
