#!/bin/bash
# rc_verbs (and ud_verbs) against perftest on Soft-RoCE: perftest's ib_*
# tools and uct_perftest over rc_verbs, and with -x over ud_verbs against
# the tools' UD mode (-c UD), interleaved, in one boot of the test VM of
# test/rxe, on rxe_lo and across the veth pair (rxe_v0 <-> rxe_v1); prints
# the medians of the rounds, their ratios and the targets, and rc_verbs
# and ud_verbs side by side. With -S: size sweeps (8 B to 4 MiB) of both
# transports against perftest, as CSV files and PNG curves.
#
#   contrib/bench/rc_vs_perftest.sh [-b BUILDDIR] [-r ROUNDS] [-q] [-c S,C]
#                                   [-P lo|pair|both] [-x TLS] [-o DIR]
#                                   [-t SEC]
#   contrib/bench/rc_vs_perftest.sh -S [-b BUILDDIR] [-q] [-c S,C]
#                                   [-P lo|pair|both] [-x TLS] [-o DIR]
#                                   [-t SEC]
#
# See contrib/bench/README.md for what is measured and how to read it.
set -u -o pipefail

prog=rc_vs_perftest
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
top=$(cd "$(dirname "$self")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Sizes at which ud_verbs' AM zcopy rate is compared with its bcopy rate
# (the veth pair, MTU 1024, takes those up to 512 B)
ud_copy_sizes="128 512 2048"

# ====================================================================
# Inside the VM: --guest PERFTEST_BIN LIBDIRS MODDIR ROUNDS QUICK CPUS
# PATHS BUDGET KEEP TLS SWEEP. Results go to stdout as "@val@ KEY ROUND
# VALUE" (with SWEEP 1, "@csv@ NAME ROW"), kept logs as "@log@ NAME
# LINE"; everything else is progress.
# ====================================================================
guest() {
    local uct_bin=$1 libdirs=$2 moddir=$3 rounds=$4 quick=$5 cpus=$6
    local paths=$7 budget=$8 keep=$9 tls=${10} sweep=${11:-0}
    local server_cpu=${cpus%,*} client_cpu=${cpus#*,}
    local logs port=18500 failed=0 t0 r path rstart rlen=0

    logs=$(mktemp -d /tmp/$prog.XXXXXX)
    if [ -n "$libdirs" ]; then
        export LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
    if [ -n "$moddir" ] && [ -z "${UCX_MODULE_DIR:-}" ]; then
        export UCX_MODULE_DIR=$moddir
    fi

    # libibverbs loads every provider its configuration lists; rxe alone
    # starts each process faster in the emulated guest
    if [ -z "${IBV_CONFIG_DIR:-}" ] && [ -r /etc/libibverbs.d/rxe.driver ]; then
        mkdir -p "$logs/ibv.d" && cp /etc/libibverbs.d/rxe.driver "$logs/ibv.d/" &&
            export IBV_CONFIG_DIR=$logs/ibv.d
    fi
    # Read the programs and libraries once, so that the first runs do not
    # pay for the host's files coming over 9p
    local d
    for d in ${libdirs//:/ } $moddir; do
        cat "$d"/*.so* >/dev/null 2>&1
    done
    cat "$uct_bin" "$(command -v ib_send_lat)" >/dev/null 2>&1
    "$uct_bin" -h >/dev/null 2>&1

    # Run lengths: latency iterations, 8-byte message rate, 64 KiB
    # bandwidth; warm-up of uct_perftest (perftest's latency tools have
    # none, its bandwidth tools a few iterations)
    local n_lat=1000 n_rate=5000 n_bw=200 w_lat=100 w_rate=500 w_bw=20
    if [ "$quick" -eq 1 ]; then
        n_lat=300 n_rate=1500 n_bw=60 w_lat=30 w_rate=150 w_bw=10
    fi

    val() { echo "@val@ $1 $2 $3"; }

    # pair NAME SERVER_ARGS -- CLIENT_ARGS: server on its CPU, then the
    # client once the server listens on $port; output in $logs/NAME.{server,
    # client}; returns the client's exit code, or 1 when the server did
    # not come up or failed
    pair() {
        local name=$1 sargs=() cargs=() spid i crc src t_start
        shift
        t_start=$(date +%s%N)
        while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
        shift
        cargs=("$@")
        port=$((port + 1))
        sargs=("${sargs[@]//@PORT@/$port}")
        cargs=("${cargs[@]//@PORT@/$port}")
        setsid taskset -c "$server_cpu" timeout -k 5 120 stdbuf -oL \
            "${sargs[@]}" >"$logs/$name.server" 2>&1 &
        spid=$!
        for ((i = 0; i < 300; i++)); do
            port_listening "$port" && break
            kill -0 "$spid" 2>/dev/null || break
            sleep 0.05
        done
        if ! port_listening "$port"; then
            note "$name: the server did not listen on port $port"
            kill -TERM -- "-$spid" 2>/dev/null
            wait "$spid"
            return 1
        fi
        setsid -w taskset -c "$client_cpu" timeout -k 5 90 stdbuf -oL \
            "${cargs[@]}" >"$logs/$name.client" 2>&1
        crc=$?
        for ((i = 0; i < 100; i++)); do
            kill -0 "$spid" 2>/dev/null || break
            sleep 0.05
        done
        kill -TERM -- "-$spid" 2>/dev/null
        wait "$spid"
        src=$?
        note "  $name: client $crc, server $src," \
            "$(( ($(date +%s%N) - t_start) / 1000000 )) ms"
        if [ "$crc" -ne 0 ]; then
            return "$crc"
        fi
        [ "$crc" -eq 0 ] && [ "$src" -eq 0 ]
    }

    # ib_run NAME TOOL DEV_S DEV_C ADDR ARGS...: one perftest run, up to
    # three tries (perftest's clock calibration sometimes fails under
    # emulation: times print as inf); its result line in ib_line, empty
    # when no try gave one (a variable, not output: pair counts ports).
    # Only the figures used count: t_stdev is sometimes -nan.
    ib_run() {
        local name=$1 tool=$2 dev_s=$3 dev_c=$4 addr=$5 try
        shift 5
        for try in 1 2 3; do
            ib_line=""
            if pair "$name" "$tool" -d "$dev_s" -x 1 -F -u 18 -p @PORT@ "$@" \
                    -- "$tool" -d "$dev_c" -x 1 -F -u 18 -p @PORT@ "$@" "$addr"; then
                ib_line=$(grep -E '^ *[0-9]+ +[0-9]+ ' "$logs/$name.client" | head -n1)
            fi
            # t_min t_max t_typical t_avg, or bw_peak bw_avg msg_rate (a
            # zero rate is a run the tool could not time)
            if echo "$ib_line" | awk -v t="$tool" 'NF < 5 { exit 1 }
                    { f = $3 " " $4 " " $5 " " $6 }
                    f ~ /inf|nan/ || (t ~ /_bw$/ && !($5 > 0)) { exit 1 }'; then
                return 0
            fi
            note "$name: try $try gave no figure"
            ib_line=""
        done
        return 1
    }

    # ib NAME KEY ROUND TOOL DEV_S DEV_C ADDR ARGS...: one perftest run,
    # its result (latency: typical and average; bandwidth: MiB/s and
    # msg/s) recorded under KEY
    ib() {
        local name=$1 key=$2 r=$3 tool=$4 dev_s=$5 dev_c=$6 addr=$7 line rate
        shift 7
        command -v "$tool" >/dev/null || {
            note "$tool not found (Debian package perftest)"
            val "$key" "$r" fail
            failed=1
            return
        }
        ib_run "$name" "$tool" "$dev_s" "$dev_c" "$addr" "$@"
        line=$ib_line
        if [ -z "$line" ]; then
            note "round $r: $name failed (logs with -o)"
            val "$key" "$r" fail
            failed=1
            return
        fi
        case $tool in
        *_lat)
            # bytes iters t_min t_max t_typical t_avg ...
            val "$key" "$r" "$(echo "$line" | awk '{ print $5 }')"
            val "$key.avg" "$r" "$(echo "$line" | awk '{ print $6 }')" ;;
        *_bw)
            # bytes iters bw_peak bw_avg msg_rate[Mpps]; a zero rate (a
            # run the tool could not time) is no figure
            rate=$(echo "$line" | awk '{ printf "%.0f", $5 * 1e6 }')
            if [ "$rate" = 0 ]; then
                note "round $r: $name printed a zero message rate:" \
                    "$(echo "$line" | xargs)"
                rate=fail
            fi
            val "$key" "$r" "$(echo "$line" | awk '{ print $4 }')"
            val "$key.rate" "$r" "$rate" ;;
        esac
    }

    # uct NAME KEY ROUND TL DEV_S DEV_C ADDR ARGS...: one uct_perftest run
    # over TL; records typical and average latency, MiB/s and msg/s
    # (KEY, KEY.avg, KEY.bw, KEY.rate); "n/a" when TL cannot run it
    uct() {
        local name=$1 key=$2 r=$3 tl=$4 dev_s=$5 dev_c=$6 addr=$7 rc line
        shift 7
        pair "$name" "$uct_bin" -x "$tl" -d "$dev_s" -p @PORT@ \
            -- "$uct_bin" -x "$tl" -d "$dev_c" -p @PORT@ -f csv "$@" "$addr"
        rc=$?
        line=$(awk -F, '$1 != "test" && NF >= 8 { print; exit }' \
               "$logs/$name.client" 2>/dev/null)
        if [ $rc -eq 2 ]; then
            note "round $r: $tl cannot run $*: $(tail -n1 "$logs/$name.client")"
            val "$key" "$r" n/a
            return
        elif [ $rc -ne 0 ] || [ -z "$line" ]; then
            note "round $r: uct_perftest $* failed (exit $rc):" \
                "$(grep -v ' operations, ' "$logs/$name.client" | tail -n1)"
            val "$key" "$r" fail
            failed=1
            return
        fi
        # test,mode,size,iterations,typical,avg,bw,rate
        val "$key" "$r" "$(echo "$line" | cut -d, -f5)"
        val "$key.avg" "$r" "$(echo "$line" | cut -d, -f6)"
        val "$key.bw" "$r" "$(echo "$line" | cut -d, -f7)"
        val "$key.rate" "$r" "$(echo "$line" | cut -d, -f8)"
    }

    # One round on one path: each perftest tool next to its uct_perftest
    # counterpart, which of the two goes first alternating between rounds;
    # rc_verbs against the tools' RC mode, ud_verbs against their UD mode
    # (keys "PATH:ud:...")
    round() {
        local r=$1 path=$2 ds dc addr p m pairs=""
        case $path in
        lo)   ds=rxe_lo dc=rxe_lo addr=127.0.0.1 ;;
        pair) ds=rxe_v0 dc=rxe_v1 addr=10.78.0.1 ;;
        esac
        p="$path-r$r"
        run_ib() {
            ib "$p-$1" "$path:$1" "$r" "$1" "$ds" "$dc" "$addr" "${@:2}"
        }
        run_uct() {
            uct "$p-$1" "$path:$1" "$r" rc_verbs "$ds:1" "$dc:1" "$addr" \
                "${@:2}"
        }
        run_ib_ud() {
            ib "$p-ud-$1" "$path:ud:$1" "$r" "$1" "$ds" "$dc" "$addr" \
                -c UD "${@:2}"
        }
        run_uct_ud() {
            uct "$p-ud-$1" "$path:ud:$1" "$r" ud_verbs "$ds:1" "$dc:1" \
                "$addr" "${@:2}"
        }
        one() {
            case $1 in
            send_lat)  run_ib ib_send_lat -s 8 -n "$n_lat" ;;
            am_lat)    run_uct am_lat -t am_lat -D short -s 8 -n "$n_lat" -w "$w_lat" ;;
            write_lat) run_ib ib_write_lat -s 8 -n "$n_lat" ;;
            put_lat)   run_uct put_lat -t put_lat -D short -s 8 -n "$n_lat" -w "$w_lat" ;;
            read_lat)  run_ib ib_read_lat -s 8 -n "$n_lat" ;;
            get)       run_uct get_zcopy -t get_lat -D zcopy -s 8 -n "$n_lat" -w "$w_lat" ;;
            send_bw)   run_ib ib_send_bw -s 8 -n "$n_rate" ;;
            am_bw)     run_uct am_bw -t am_bw -D short -s 8 -n "$n_rate" -w "$w_rate" ;;
            write_bw)  run_ib ib_write_bw -s 65536 -n "$n_bw" ;;
            put_bw)    run_uct put_bw -t put_bw -D zcopy -s 64k -n "$n_bw" -w "$w_bw" ;;
            ud_send_lat) run_ib_ud ib_send_lat -s 8 -n "$n_lat" ;;
            ud_am_lat) run_uct_ud am_lat -t am_lat -D short -s 8 -n "$n_lat" -w "$w_lat" ;;
            ud_send_bw) run_ib_ud ib_send_bw -s 8 -n "$n_rate" ;;
            ud_am_bw)  run_uct_ud am_bw -t am_bw -D short -s 8 -n "$n_rate" -w "$w_rate" ;;
            ud_bcopy_*|ud_zcopy_*)
                local k=${1#ud_}
                run_uct_ud "am_bw_$k" -t am_bw -D "${k%_*}" -s "${k#*_}" \
                    -n "$n_rate" -w "$w_rate" ;;
            esac
        }
        [[ ,$tls, == *,rc_verbs,* ]] &&
            pairs+=" send_lat:am_lat write_lat:put_lat read_lat:get"
        [[ ,$tls, == *,ud_verbs,* ]] &&
            pairs+=" ud_send_lat:ud_am_lat"
        [[ ,$tls, == *,rc_verbs,* ]] && pairs+=" send_bw:am_bw write_bw:put_bw"
        [[ ,$tls, == *,ud_verbs,* ]] && pairs+=" ud_send_bw:ud_am_bw"
        # ud's AM zcopy against its own bcopy, up to the path's MTU
        if [[ ,$tls, == *,ud_verbs,* ]]; then
            local size
            for size in $ud_copy_sizes; do
                [ "$path" = pair ] && [ "$size" -gt 512 ] && continue
                pairs+=" ud_bcopy_$size:ud_zcopy_$size"
            done
        fi
        for m in $pairs; do
            if [ $((r % 2)) -eq 1 ]; then
                one "${m%:*}"; one "${m#*:}"
            else
                one "${m#*:}"; one "${m%:*}"
            fi
        done
    }

    # ------------------------------------------------------------ sweep
    # -S: one pass over the sizes for each transport on each path; rows
    # go to stdout as "@csv@ NAME impl,series,size,latency_usec,
    # msg_per_sec,mib_per_sec", NAME being the transport, with "-pair" on
    # the veth pair
    local sweep_sizes="8 32 128 512 2048 8192 32768 131072 524288 2097152 4194304"
    local -A sweep_lim

    # over_budget: true once the measurements ran past the budget (then
    # the remaining runs are skipped)
    over_budget() {
        if [ $(($(date +%s) - t0)) -gt "$budget" ]; then
            [ -n "${budget_said:-}" ] ||
                note "past the ${budget} s budget: skipping the remaining runs"
            budget_said=1
            failed=1
            return 0
        fi
        return 1
    }

    # sweep_iters KIND SIZE: iterations of a latency (lat) or bandwidth
    # (bw) run of SIZE bytes: fewer as the bytes moved grow (rxe moves
    # 40-80 MiB/s in this guest); 300 ping-pongs give a steady median
    sweep_iters() {
        local n
        if [ "$1" = lat ]; then
            if [ "$2" -le 32768 ]; then n=$((n_lat * 3 / 10))
            elif [ "$2" -le 131072 ]; then n=200
            elif [ "$2" -le 524288 ]; then n=50
            else n=15
            fi
        else
            if [ "$2" -le 2048 ]; then n=$n_rate
            elif [ "$2" -le 32768 ]; then n=2000
            elif [ "$2" -le 524288 ]; then n=200
            else n=30
            fi
        fi
        [ "$quick" -eq 1 ] && [ "$2" -gt 32768 ] && n=$(( (n + 2) / 3 ))
        echo "$n"
    }

    # sweep_limits TL DEV OP MODE: sets lim to the "MIN MAX" sizes of OP
    # (am, put) with MODE over TL, from uct_perftest's refusal (exit 2)
    # of a size no transport takes, in loopback; empty when TL has no
    # such operation. Kept in sweep_lim (hence no subshell).
    sweep_limits() {
        local key="$1:$2:$3:$4" out
        if [ -z "${sweep_lim[$key]+set}" ]; then
            out=$(timeout -k 5 60 "$uct_bin" -x "$1" -d "$2:1" -l -t "$3_lat" \
                      -D "$4" -s 64g -n 1 -w 0 2>&1 >/dev/null)
            sweep_lim[$key]=$(echo "$out" |
                sed -n 's/.* outside the limits \([0-9]*\)\.\.\([0-9]*\).*/\1 \2/p' |
                head -n1)
            if [ -n "${sweep_lim[$key]}" ]; then
                note "  $1 $3 $4 on $2: sizes ${sweep_lim[$key]/ /..}"
            else
                note "  $1 $3 $4 on $2: none ($(echo "$out" | tail -n1))"
            fi
        fi
        lim=${sweep_lim[$key]}
    }

    # sweep_uct NAME TL DS DC ADDR TEST MODES: uct_perftest's TEST over
    # the sizes, each with the first of MODES whose limits take it; one
    # client/server run per mode and run length (a size list each). A
    # run in this guest sometimes stalls at a timer tick per ping-pong
    # (typical 3-4 ms instead of 20-300 us up to 32 KiB), perftest alike:
    # such a latency size is run once more and the second figure kept.
    sweep_uct() {
        local name=$1 tl=$2 ds=$3 dc=$4 addr=$5 test=$6 modes=$7
        local s m lim n key log again order=() kind=${6#*_}
        local -A lists
        for s in $sweep_sizes; do
            for m in $modes; do
                sweep_limits "$tl" "$ds" "${test%_*}" "$m"
                [ -n "$lim" ] || continue
                if [ "$s" -lt "${lim% *}" ] || [ "$s" -gt "${lim#* }" ]; then
                    continue
                fi
                n=$(sweep_iters "$kind" "$s")
                key="$m $n"
                [ -n "${lists[$key]:-}" ] || order+=("$key")
                lists[$key]+="${lists[$key]:+,}$s"
                break
            done
        done
        for key in "${order[@]}"; do
            over_budget && return
            m=${key% *} n=${key#* }
            log="$name-$tl-$test-$m-$n"
            sweep_uct_run "$log" "${lists[$key]}"
            # a latency test's stalled sizes once more (see above)
            again=""
            if [ "$kind" = lat ]; then
                again=$(awk -F, '$1 != "test" && NF >= 8 && $3 <= 32768 &&
                                 $5 >= 1000 { printf "%s%s", c, $3; c = "," }' \
                            "$logs/$log.client")
            fi
            # test,mode,size,iterations,typical,avg,bw,rate,min,p99
            awk -F, -v f="$name" -v s="$test" -v a=",$again," '
                $1 != "test" && NF >= 8 && index(a, "," $3 ",") == 0 {
                    print "@csv@ " f " openuct," s "," $3 "," $5 "," $8 "," $7 }' \
                "$logs/$log.client"
            [ -n "$again" ] || continue
            note "$tl $test $m: typical of $again bytes 1 ms or more: once more"
            sweep_uct_run "$log-again" "$again"
            awk -F, -v f="$name" -v s="$test" '$1 != "test" && NF >= 8 {
                print "@csv@ " f " openuct," s "," $3 "," $5 "," $8 "," $7 }' \
                "$logs/$log-again.client"
        done
    }

    # sweep_uct_run LOG SIZES: one client/server run of sweep_uct's test
    # (its variables) over SIZES
    sweep_uct_run() {
        local rc
        pair "$1" "$uct_bin" -x "$tl" -d "$ds:1" -p @PORT@ \
            -- "$uct_bin" -x "$tl" -d "$dc:1" -p @PORT@ -f csv \
            -t "$test" -D "$m" -s "$2" -n "$n" -w $(( (n + 9) / 10 )) "$addr"
        rc=$?
        if [ $rc -ne 0 ]; then
            note "$tl $test $m $2: uct_perftest exit $rc:" \
                "$(grep -v ' operations, ' "$logs/$1.client" | tail -n1)"
            failed=1
        fi
    }

    # sweep_ib NAME DS DC ADDR TOOL MAX ARGS...: perftest's TOOL, one run
    # per size up to MAX bytes
    sweep_ib() {
        local name=$1 ds=$2 dc=$3 addr=$4 tool=$5 max=$6 s n line
        shift 6
        for s in $sweep_sizes; do
            [ "$s" -le "$max" ] || continue
            over_budget && return
            n=$(sweep_iters "${tool##*_}" "$s")
            if ! ib_run "$name-$tool-$s" "$tool" "$ds" "$dc" "$addr" "$@" \
                    -s "$s" -n "$n"; then
                note "$name: $tool $* -s $s gave no figure"
                failed=1
                continue
            fi
            if [[ $tool == *_lat ]] && [ "$s" -le 32768 ] &&
                    echo "$ib_line" | awk '{ exit !($5 >= 1000) }'; then
                note "$name: $tool $* -s $s: typical 1 ms or more: once more"
                line=$ib_line
                ib_run "$name-$tool-$s-again" "$tool" "$ds" "$dc" "$addr" \
                    "$@" -s "$s" -n "$n" || ib_line=$line
            fi
            case $tool in
            *_lat)
                # bytes iters t_min t_max t_typical ...: one way for
                # send and write (perftest halves their round trip)
                echo "$ib_line" | awk -v f="$name" -v t="$tool" '{
                    print "@csv@ " f " perftest," t "," $1 "," $5 ",," }' ;;
            *_bw)
                # bytes iters bw_peak bw_avg[MiB/s] msg_rate[Mpps]
                echo "$ib_line" | awk -v f="$name" -v t="$tool" '$5 > 0 {
                    printf "@csv@ %s perftest,%s,%s,,%.0f,%s\n", f, t, $1,
                           $5 * 1e6, $4 }' ;;
            esac
        done
    }

    # sweep_path PATH: every transport's curves on PATH
    sweep_path() {
        local path=$1 ds dc addr name mtu
        case $path in
        lo)   ds=rxe_lo dc=rxe_lo addr=127.0.0.1 ;;
        pair) ds=rxe_v0 dc=rxe_v1 addr=10.78.0.1 ;;
        esac
        mtu=$(ibv_devinfo -d "$dc" | awk '/active_mtu/ { print $2; exit }')
        if [[ ,$tls, == *,rc_verbs,* ]]; then
            name=rc_verbs
            [ "$path" = pair ] && name+=-pair
            note "sweep: rc_verbs on $path"
            sweep_uct "$name" rc_verbs "$ds" "$dc" "$addr" am_lat "short bcopy zcopy"
            sweep_ib "$name" "$ds" "$dc" "$addr" ib_send_lat 4194304
            sweep_uct "$name" rc_verbs "$ds" "$dc" "$addr" put_lat zcopy
            sweep_ib "$name" "$ds" "$dc" "$addr" ib_write_lat 4194304
            sweep_uct "$name" rc_verbs "$ds" "$dc" "$addr" am_bw "short bcopy zcopy"
            sweep_ib "$name" "$ds" "$dc" "$addr" ib_send_bw 4194304
            sweep_uct "$name" rc_verbs "$ds" "$dc" "$addr" put_bw zcopy
            sweep_ib "$name" "$ds" "$dc" "$addr" ib_write_bw 4194304
        fi
        if [[ ,$tls, == *,ud_verbs,* ]]; then
            name=ud_verbs
            [ "$path" = pair ] && name+=-pair
            note "sweep: ud_verbs on $path (MTU ${mtu:-?})"
            # perftest's UD mode takes messages up to the MTU
            sweep_uct "$name" ud_verbs "$ds" "$dc" "$addr" am_lat "short bcopy zcopy"
            sweep_ib "$name" "$ds" "$dc" "$addr" ib_send_lat "${mtu:-1024}" -c UD
            sweep_uct "$name" ud_verbs "$ds" "$dc" "$addr" am_bw "short bcopy zcopy"
            sweep_ib "$name" "$ds" "$dc" "$addr" ib_send_bw "${mtu:-1024}" -c UD
        fi
    }

    echo "@info@ kernel $(uname -r);" \
        "rxe_lo $(ibv_devinfo -d rxe_lo | grep -m1 active_mtu | awk '{ print $2 }')," \
        "rxe_v0 $(ibv_devinfo -d rxe_v0 | grep -m1 active_mtu | awk '{ print $2 }');" \
        "perftest $({ ib_send_lat --version 2>&1 || true; } | grep -m1 -o '[0-9][0-9.]*' | head -n1)"
    t0=$(date +%s)
    if [ "$sweep" -eq 1 ]; then
        # the first runs after the boot stall (ping-pongs at 2-4 ms for
        # seconds): one run whose figures and outcome are not kept
        r=$failed
        uct sweep-warmup warmup 0 "${tls%%,*}" rxe_lo:1 rxe_lo:1 127.0.0.1 \
            -t am_lat -D short -s 8 -n 2000 -w 200 >/dev/null
        failed=$r
        for path in $paths; do
            sweep_path "$path"
        done
        rounds=0
    fi
    for ((r = 1; r <= rounds; r++)); do
        rstart=$(date +%s)
        # a round that would end past the budget is not started
        if [ $r -gt 1 ] && [ $((rstart - t0 + rlen)) -gt "$budget" ]; then
            note "round $r would end past the ${budget} s budget: stopping" \
                "after $((r - 1)) round(s)"
            echo "@info@ rounds $((r - 1)) of $rounds (time budget ${budget} s)"
            break
        fi
        for path in $paths; do
            note "round $r/$rounds: $path"
            round "$r" "$path"
        done
        rlen=$(($(date +%s) - rstart))
        note "round $r took ${rlen} s"
    done
    echo "@info@ measured in $(($(date +%s) - t0)) s"

    if [ "$keep" -eq 1 ]; then
        for f in "$logs"/*; do
            [ -f "$f" ] && sed "s|^|@log@ $(basename "$f") |" "$f"
        done
    fi
    rm -rf "$logs"
    return $failed
}

if [ "${1:-}" = --guest ]; then
    shift
    guest "$@"
    exit $?
fi

# ====================================================================
# On the host
# ====================================================================
usage() {
    cat <<EOF
Usage: contrib/bench/rc_vs_perftest.sh [options]

Boots the Soft-RoCE test VM once and runs, in interleaved rounds,
perftest's ib_send_lat, ib_write_lat, ib_read_lat, ib_send_bw and
ib_write_bw next to uct_perftest over rc_verbs (am_lat, put_lat, get,
am_bw, put_bw), and with -x ud_verbs ib_send_lat and ib_send_bw in UD
mode (-c UD) next to uct_perftest over ud_verbs (am_lat, am_bw), on
rxe_lo and across the veth pair; prints the medians, their ratios and the
targets, and rc_verbs next to ud_verbs when both ran.

  -b BUILDDIR  build tree holding src/tools/perf/uct_perftest (default:
               build/release in the source tree, \$OPENUCT_BUILD_DIR/release
               when that is set)
  -r ROUNDS    rounds (default 3); the table shows the median
  -q           quick: about a third of the iterations
  -c S,C       guest CPUs of the server and the client (default 0,1)
  -P PATHS     lo, pair or both (default both)
  -x TLS       transports, comma-separated: rc_verbs, ud_verbs (default
               rc_verbs)
  -o DIR       keep every run's output in DIR; with -S the CSV and PNG
               files go there (default BUILDDIR/curves)
  -t SEC       time budget of the measurements in the VM (default 240,
               with -S 900); rounds (with -S runs) that would start later
               are not started
  -S           size sweep instead of rounds: 8 B to 4 MiB, uct_perftest
               (am_lat, put_lat, am_bw, put_bw) against perftest
               (ib_send_lat/bw, ib_write_lat/bw, -c UD for ud_verbs), one
               pass; NAME.csv and NAME.png per transport and path (NAME:
               rc_verbs, ud_verbs, with -pair on the veth pair); defaults
               to -x rc_verbs,ud_verbs -P lo; needs gnuplot
  -h           this help

Exit code 0 when every run gave a figure, targets met or not; 1 when a
run failed (its figure is "fail"; with -S, a point missing from the
curves); 77 when the VM could not start.
EOF
}

builddir=""
rounds=3
quick=0
cpus="0,1"
paths_opt=""
keep_dir=""
budget=""
tls=""
sweep=0

while getopts "b:r:qc:P:x:o:t:Sh" opt; do
    case $opt in
    b) builddir=$OPTARG ;;
    r) rounds=$OPTARG ;;
    q) quick=1 ;;
    c) cpus=$OPTARG ;;
    P) paths_opt=$OPTARG ;;
    x) tls=$OPTARG ;;
    o) keep_dir=$OPTARG ;;
    t) budget=$OPTARG ;;
    S) sweep=1 ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || die "unexpected argument '$1' (see -h)"
# a sweep covers both transports on rxe_lo in one pass unless told
if [ $sweep -eq 1 ]; then
    : "${tls:=rc_verbs,ud_verbs}" "${budget:=900}" "${paths_opt:=lo}"
    rounds=1
fi
: "${tls:=rc_verbs}" "${budget:=240}" "${paths_opt:=both}"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive number, not '$rounds'"
[[ $budget =~ ^[1-9][0-9]*$ ]] || die "-t wants seconds, not '$budget'"
[[ $cpus =~ ^[01],[01]$ ]] && [ "${cpus%,*}" != "${cpus#*,}" ] ||
    die "-c wants the two guest CPUs, 0,1 or 1,0, not '$cpus'"
for t in ${tls//,/ }; do
    case $t in
    rc_verbs|ud_verbs) ;;
    *) die "-x wants rc_verbs and/or ud_verbs, comma-separated, not '$t'" ;;
    esac
done
[ -n "${tls//,/}" ] || die "-x wants at least one transport"
has_tl() {
    [[ ,$tls, == *,$1,* ]]
}

case $paths_opt in
lo) paths=lo ;;
pair) paths=pair ;;
both) paths="lo pair" ;;
*) die "-P wants lo, pair or both, not '$paths_opt'" ;;
esac

if [ -z "$builddir" ]; then
    builddir=${OPENUCT_BUILD_DIR:-$top/build}/release
fi
builddir=$(cd "$builddir" 2>/dev/null && pwd) ||
    die "no build tree at $builddir; build one or pass -b BUILDDIR"
# The libtool wrapper script runs a shell and sed before the program,
# which costs seconds per run in the emulated VM: run the program itself
# with the library path the wrapper would set
uct_bin=$builddir/src/tools/perf/.libs/uct_perftest
libdirs=$builddir/src/uct/.libs:$builddir/src/ucs/.libs
if [ ! -x "$uct_bin" ]; then
    uct_bin=$builddir/src/tools/perf/uct_perftest
    libdirs=""
fi
[ -x "$uct_bin" ] || die "no uct_perftest in $builddir/src/tools/perf; build it first"
moddir=""
[ -d "$builddir/modules" ] && moddir=$builddir/modules
[ -n "$moddir" ] && [ ! -e "$moddir/libuct_ib.so" ] &&
    die "$moddir has no libuct_ib.so: configure found no libibverbs (install libibverbs-dev, reconfigure)"
for t in ib_send_lat ib_write_lat ib_read_lat ib_send_bw ib_write_bw; do
    command -v "$t" >/dev/null ||
        die "$t is not installed (Debian package perftest; contrib/install-deps.sh)"
done

if [ $sweep -eq 1 ]; then
    require_installed gnuplot
    out_dir=${keep_dir:-$builddir/curves}
    mkdir -p "$out_dir" || die "cannot create $out_dir"
    out_dir=$(cd "$out_dir" && pwd)
    keep_dir=""         # the CSV and PNG files are the output
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$work"' EXIT

if [ $sweep -eq 1 ]; then
    note "uct_perftest $uct_bin; $tls; size sweep on: $paths"
else
    note "uct_perftest $uct_bin; $tls; $rounds round(s) on: $paths"
fi
load=$(load_average)
start=$(date +%s)
# The VM's own limit covers boot, set-up and a round (or run) past the
# budget
bash "$top/test/rxe/run.sh" -t $((budget + 200)) -- \
    bash "$self" --guest "$uct_bin" "$libdirs" "$moddir" "$rounds" "$quick" \
    "$cpus" "$paths" "$budget" "$([ -n "$keep_dir" ] && echo 1 || echo 0)" \
    "$tls" "$sweep" 2>&1 | tee "$work/out" |
    grep --line-buffered -v '^@\(val\|log\|info\|csv\)@' >&2
rc=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))
[ "$rc" -eq 77 ] && { note "the VM could not start"; exit 77; }
[ "$rc" -eq 124 ] && note "the VM ran over its time limit"

if [ -n "$keep_dir" ]; then
    mkdir -p "$keep_dir" &&
        awk -v d="$keep_dir" '$1 == "@log@" { f = d "/" $2; sub(/^@log@ [^ ]+ ?/, "");
                                               print > f }' "$work/out" &&
        note "logs in $keep_dir"
fi

# ---------------------------------------------------------------- curves

# sweep_title NAME: what the curves of NAME.csv show
sweep_title() {
    local tl=${1%-pair} where floor
    case $1 in
    *-pair) where="veth pair rxe_v1 -> rxe_v0 (MTU 1024)" ;;
    *)      where="rxe_lo (MTU 4096)" ;;
    esac
    floor="perftest ib_send_lat/bw, ib_write_lat/bw"
    [ "$tl" = ud_verbs ] && floor="perftest ib_send_lat/bw -c UD"
    echo "$tl on Soft-RoCE, $where: openuct uct_perftest against $floor" \
        "(qemu TCG guest, 2 vCPUs; $(date +%F))"
}

if [ $sweep -eq 1 ]; then
    names=$(awk '$1 == "@csv@" && !seen[$2]++ { print $2 }' "$work/out")
    [ -n "$names" ] || die "nothing was measured (VM exit $rc)"
    plotted=0
    for name in $names; do
        csv=$out_dir/$name.csv
        { echo "impl,series,size,latency_usec,msg_per_sec,mib_per_sec"
          awk -v n="$name" '$1 == "@csv@" && $2 == n { print $3 }' "$work/out"
        } >"$csv"
        note "$(($(wc -l <"$csv") - 1)) points in $csv"
        "$top/contrib/bench/plot_curves.sh" "$csv" "$out_dir/$name.png" \
            "$(sweep_title "$name")" && plotted=$((plotted + 1))
    done
    note "${elapsed} s in all; CSV and PNG files in $out_dir"
    if [ "$rc" -ne 0 ] || [ "$plotted" -ne "$(echo "$names" | wc -w)" ]; then
        die "some runs gave no figures (VM exit $rc); see above"
    fi
    exit 0
fi

# ---------------------------------------------------------------- table

# vals[KEY]: " ROUND:VALUE" per round that recorded it
declare -A vals
while read -r _ key r v; do
    record "$key" "$r:$v"
done < <(grep '^@val@ ' "$work/out")

# round_ratios BASE_KEY UCT_KEY: " ROUND:RATIO" for every round in which
# both gave a number
round_ratios() {
    local bv uv r out=""
    # shellcheck disable=SC2086
    for bv in ${vals[$1]:-}; do
        # shellcheck disable=SC2086
        for uv in ${vals[$2]:-}; do
            [ "${uv%%:*}" = "${bv%%:*}" ] || continue
            r=$(ratio "${uv#*:}" "${bv#*:}")
            [ "$r" = - ] || out+=" ${bv%%:*}:$r"
        done
    done
    echo "$out"
}

# row LABEL BASE_KEY UCT_KEY DECIMALS [OP LIMIT]
row() {
    local label=$1 bkey=$2 ukey=$3 dec=$4 op=${5:-} limit=${6:-}
    local base uct ratio rratio target=- result=-
    # shellcheck disable=SC2086
    base=$(median ${vals[$bkey]:-})
    # shellcheck disable=SC2086
    uct=$(median ${vals[$ukey]:-})
    ratio=$(ratio "$uct" "$base")
    # shellcheck disable=SC2046
    rratio=$(median $(round_ratios "$bkey" "$ukey"))
    if [ -n "$op" ]; then
        target="$op $limit"
        judge "$ratio" "$op" "$limit"
        result=$verdict
    fi
    printf '%-38s %10s %10s %7s %7s %8s  %s\n' "$label" "$(fmt "$base" "$dec")" \
        "$(fmt "$uct" "$dec")" "$ratio" "$(fmt "$rratio" 3)" "$target" "$result"
}

# rounds_line LABEL KEY DECIMALS
rounds_line() {
    local v out=""
    # shellcheck disable=SC2086
    for v in ${vals[$2]:-}; do
        out+=" $(fmt "${v#*:}" "$3")"
    done
    printf '#   %-40s%s\n' "$1" "${out:- -}"
}

# side LABEL RC_KEY UD_KEY DECIMALS: rc_verbs and ud_verbs (and the
# perftest figure each was compared with) next to each other
side() {
    local label=$1 dec=$4 rc ud prc pud
    # shellcheck disable=SC2086
    rc=$(median ${vals[$2]:-})
    # shellcheck disable=SC2086
    ud=$(median ${vals[$3]:-})
    # shellcheck disable=SC2086
    prc=$(median ${vals[$5]:-})
    # shellcheck disable=SC2086
    pud=$(median ${vals[$6]:-})
    printf '%-30s %10s %10s %10s %10s %7s\n' "$label" "$(fmt "$prc" "$dec")" \
        "$(fmt "$rc" "$dec")" "$(fmt "$pud" "$dec")" "$(fmt "$ud" "$dec")" \
        "$(ratio "$ud" "$rc")"
}

echo
echo "# $(echo "$tls" | sed 's/,/ and /') against perftest on Soft-RoCE" \
    "(test VM of test/rxe, qemu TCG)"
sed -n 's/^@info@ /# /p' "$work/out"
echo "# host $(uname -sr), $(nproc) CPUs, load average before the run ${load:-?};" \
    "guest CPUs: server ${cpus%,*}, client ${cpus#*,}; ${elapsed} s in all" \
    "$([ "$quick" -eq 1 ] && echo "(quick)")"
echo "# median of the rounds; ratio = uct / perftest of the medians (the target's" \
    "figure), r-ratio = median of the rounds' own ratios;"
echo "# latency one-way in usec (get: round trip), rate in msg/s, bandwidth in MiB/s"
for path in $paths; do
    echo "#"
    case $path in
    lo)   echo "# rxe_lo (lo, MTU 4096): server and client on rxe_lo" ;;
    pair) echo "# veth pair (MTU 1024): server rxe_v0 (10.78.0.1), client rxe_v1" ;;
    esac
    printf '%-38s %10s %10s %7s %7s %8s  %s\n' metric perftest uct ratio r-ratio target result
    if has_tl rc_verbs; then
        row "am_lat short 8 B, typical" "$path:ib_send_lat" "$path:am_lat" 2 "<=" 1.15
        row "put_lat short 8 B, typical" "$path:ib_write_lat" "$path:put_lat" 2 "<=" 1.15
        row "get zcopy 8 B (get_lat), average" "$path:ib_read_lat.avg" "$path:get_zcopy.avg" 2
        row "am_bw short 8 B, rate" "$path:ib_send_bw.rate" "$path:am_bw.rate" 0 ">=" 0.9
        row "put_bw zcopy 64 KiB, bandwidth" "$path:ib_write_bw" "$path:put_bw.bw" 1 ">=" 0.9
    fi
    if has_tl ud_verbs; then
        row "ud am_lat short 8 B, typical" "$path:ud:ib_send_lat" "$path:ud:am_lat" 2 "<=" 1.15
        row "ud am_bw short 8 B, rate" "$path:ud:ib_send_bw.rate" "$path:ud:am_bw.rate" 0 ">=" 0.95
        for m in $ud_copy_sizes; do
            [ "$path" = pair ] && [ "$m" -gt 512 ] && continue
            row "ud am_bw zcopy/bcopy $m B, rate" "$path:ud:am_bw_bcopy_$m.rate" \
                "$path:ud:am_bw_zcopy_$m.rate" 0 ">=" 0.9
        done
    fi
done
if has_tl rc_verbs && has_tl ud_verbs; then
    echo "#"
    echo "# rc_verbs and ud_verbs side by side (medians; perftest in RC and in UD mode)"
    for path in $paths; do
        echo "#"
        printf '%-30s %10s %10s %10s %10s %7s\n' "$path" perftest-RC rc_verbs \
            perftest-UD ud_verbs ud/rc
        side "am_lat short 8 B, typical" "$path:am_lat" "$path:ud:am_lat" 2 \
            "$path:ib_send_lat" "$path:ud:ib_send_lat"
        side "am_lat short 8 B, average" "$path:am_lat.avg" "$path:ud:am_lat.avg" 2 \
            "$path:ib_send_lat.avg" "$path:ud:ib_send_lat.avg"
        side "am_bw short 8 B, rate" "$path:am_bw.rate" "$path:ud:am_bw.rate" 0 \
            "$path:ib_send_bw.rate" "$path:ud:ib_send_bw.rate"
    done
fi
echo "#"
echo "# perftest: ib_send_lat/ib_write_lat t_typical; ib_read_lat t_avg (round trip);"
echo "#   ib_send_bw 8 B MsgRate; ib_write_bw 64 KiB BW average; ud rows: the same"
echo "#   tools with -c UD against uct_perftest -x ud_verbs"
echo "# per round:"
for path in $paths; do
    has_tl rc_verbs || continue
    rounds_line "$path ib_send_lat typical" "$path:ib_send_lat" 2
    rounds_line "$path am_lat typical" "$path:am_lat" 2
    rounds_line "$path ib_write_lat typical" "$path:ib_write_lat" 2
    rounds_line "$path put_lat typical" "$path:put_lat" 2
    rounds_line "$path ib_read_lat typical" "$path:ib_read_lat" 2
    rounds_line "$path ib_read_lat average" "$path:ib_read_lat.avg" 2
    rounds_line "$path get zcopy average" "$path:get_zcopy.avg" 2
    rounds_line "$path ib_send_lat average" "$path:ib_send_lat.avg" 2
    rounds_line "$path am_lat average" "$path:am_lat.avg" 2
    rounds_line "$path ib_send_bw rate" "$path:ib_send_bw.rate" 0
    rounds_line "$path am_bw rate" "$path:am_bw.rate" 0
    rounds_line "$path ib_write_bw MiB/s" "$path:ib_write_bw" 1
    rounds_line "$path put_bw MiB/s" "$path:put_bw.bw" 1
done
for path in $paths; do
    has_tl ud_verbs || continue
    rounds_line "$path ib_send_lat -c UD typical" "$path:ud:ib_send_lat" 2
    rounds_line "$path ud am_lat typical" "$path:ud:am_lat" 2
    rounds_line "$path ib_send_lat -c UD average" "$path:ud:ib_send_lat.avg" 2
    rounds_line "$path ud am_lat average" "$path:ud:am_lat.avg" 2
    rounds_line "$path ib_send_bw -c UD rate" "$path:ud:ib_send_bw.rate" 0
    rounds_line "$path ud am_bw rate" "$path:ud:am_bw.rate" 0
    for m in $ud_copy_sizes; do
        [ "$path" = pair ] && [ "$m" -gt 512 ] && continue
        rounds_line "$path ud am_bw bcopy $m B rate" "$path:ud:am_bw_bcopy_$m.rate" 0
        rounds_line "$path ud am_bw zcopy $m B rate" "$path:ud:am_bw_zcopy_$m.rate" 0
    done
done
echo "# targets: $n_passed passed, $n_missed missed"

fails=0
for k in "${!vals[@]}"; do
    [[ "${vals[$k]} " == *":fail "* ]] && fails=$((fails + 1))
done
if [ ${#vals[@]} -eq 0 ]; then
    die "nothing was measured (VM exit $rc)"
fi
if [ $fails -gt 0 ] || [ $rc -ne 0 ]; then
    die "$fails measurement(s) failed in at least one round (VM exit $rc); -o DIR keeps the logs"
fi
exit 0
