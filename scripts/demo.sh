#!/usr/bin/env bash
# hadroNIO demo: builds the project, then measures on 127.0.0.1, side by side and interleaved,
# two processes pinned to one core each, and prints one table per section:
#   evaluate  (default) "hadronio evaluate --profile quick" (issue 11): the JDK's provider, hadroNIO and
#             the UCX binding in blocking, non-blocking (Selector) and Netty mode, throughput and latency
#             from 4 B to 1 MiB; results, figures and a report in $LOG_DIR/evaluation; prints its summary
#             and the points where hadroNIO is behind the JDK ("never slower": round trips by p50 and p99)
#             and the tails against their targets
#   connections  (default) connection set-up rate, JDK against hadroNIO, 1 and 8 clients
#             (scripts/bench-connections.sh, RUNS interleaved rounds)
#   ucx       the UCX binding ("hadronio ucx benchmark") against UCX's own ucx_perftest
#   blocking  blocking NIO ("hadronio blocking benchmark") on hadroNIO and on the JDK's provider:
#             8 B round trip (p50, average), 64 KiB streaming (MB/s), 8-byte writes per second
#   netty     the same for Netty's NIO transport ("hadronio netty benchmark")
#
#   scripts/demo.sh                       # the quick evaluation with its file transfers (the README says how long)
#   EVALUATE_OPTS=--load scripts/demo.sh  # with the load mode too (about 1.5 minutes more)
#   PROFILE=full scripts/demo.sh          # the full evaluation (see docs/EVALUATION.md for its duration)
#   SECTIONS="ucx blocking netty" scripts/demo.sh   # the older side-by-side tables, about 5 minutes
#   RUNS=5 SECTIONS=blocking scripts/demo.sh        # more rounds per measurement
#   SECTIONS=netty SKIP_BUILD=1 scripts/demo.sh
#   SIZES="8 65536" SECTIONS=ucx scripts/demo.sh
#
# Environment:
#   RUNS        interleaved rounds per measurement (default 3; the tables show medians)
#   SECTIONS    which comparisons to run (default "evaluate connections"; also ucx blocking netty nio2; run_section_<name>/print_section_<name>)
#   CONNECTION_CLIENTS / CONNECTION_WARMUP / CONNECTION_DURATION   connections section: client threads
#               (default "1 8"), warm-up and measured seconds per run (default 5 / 2)
#   PROFILE     evaluate section: smoke, quick (default) or full
#   EVALUATE_OPTS  more options for "hadronio evaluate" (e.g. --load, --modes blocking,netty)
#   SIZES       ucx section: message sizes in bytes (default "8 1024 65536 1048576")
#   BLOCKING_CASES  blocking section: any of lat8 stream msg8 (default all)
#   NETTY_CASES     netty section: any of lat8 stream msg8 msg8f (default "lat8 stream msg8";
#                   msg8f = 8-byte messages each flushed)
#   NIO2_CASES      nio2 section (NIO.2, CompletionHandlers): any of lat8 tail8 stream msg8 (default "lat8 tail8 stream")
#   SERVER_CPU / CLIENT_CPU   cores the two processes are pinned to (default 0 / 1)
#   SKIP_BUILD  1: use the jars already built
#   LOG_DIR     where every process's output is kept (default docs/results/raw/demo-<time>)
#   JAVA_OPTS   extra JVM options for the benchmark JVMs
#   STEP_TIMEOUT  seconds one client may take before the demo gives up (default 120)
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

RUNS="${RUNS:-3}"
SIZES="${SIZES:-8 1024 65536 1048576}"
SECTIONS="${SECTIONS:-evaluate connections}"
PROFILE="${PROFILE:-quick}"
EVALUATE_OPTS="${EVALUATE_OPTS:-}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
SKIP_BUILD="${SKIP_BUILD:-0}"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/demo-$(date +%Y%m%d-%H%M%S)}"
JAVA_OPTS="${JAVA_OPTS:-}"
# longest a single client may take before the demo gives up on it
STEP_TIMEOUT="${STEP_TIMEOUT:-120}"
APP_JAR="$HADRONIO_ROOT/app/target/hadronio-app.jar"

die() { echo "demo: $*" >&2; exit 1; }
note() { echo "demo: $*" >&2; }

# ---- background processes: every one is tracked and killed on exit --------------------------

BG_PIDS=()
cleanup() {
  local pid
  for pid in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      sleep 0.2
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
}
trap cleanup EXIT
trap 'echo "demo: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
trap 'echo "demo: interrupted" >&2; exit 130' INT TERM

# start_bg LOG CMD...: runs CMD in the background with its output in LOG; sets BG_PID
start_bg() {
  local log="$1"; shift
  : >"$log"
  "$@" >"$log" 2>&1 &
  BG_PID=$!
  BG_PIDS+=("$BG_PID")
}

# forget_bg PID: a reaped process leaves the list, so that a later re-use of its pid is never killed
forget_bg() {
  local keep=() p
  for p in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  BG_PIDS=("${keep[@]+"${keep[@]}"}")
}

# wait_bg PID LOG WHAT: waits (at most 60 s) for a background process to end by itself; fails unless it exits 0
wait_bg() {
  local pid="$1" log="$2" what="$3" i rc
  for ((i = 0; i < 600; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    show_log "$log"
    die "$what did not exit after its client finished (killed it)"
  fi
  rc=0; wait "$pid" || rc=$?
  forget_bg "$pid"
  if [ "$rc" != 0 ]; then
    show_log "$log"
    die "$what failed (exit $rc)"
  fi
}

# machine_probe: the machine's cross-core copy rate now, GB/s per round ("hadronio machine")
machine_probe() {
  taskset -c "$SERVER_CPU,$CLIENT_CPU" "$JAVA_HOME/bin/java" -jar "$APP_JAR" machine -r 2 -d 300 2>/dev/null |
    sed -n 's/^RESULT kind=cross-core-copy gb_per_s=\([^ ]*\).*/\1/p' | tr ',' '/' || true
}

show_log() { echo "----- $1" >&2; tail -n 30 "$1" >&2 || true; echo "-----" >&2; }

# free_port: a TCP port nobody listens on now
free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
    return
  fi
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then echo "$p"; return; fi
  done
}

# port_listening PORT: true when something listens on 127.0.0.1:PORT (or all interfaces)
port_listening() { ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# ---- iterations per measurement: about 0.15-0.3 s of measured time each on an idle machine -----
# Warm-up is half as many, for both tools (the binding also waits for its JIT to go quiet).

# iterations KIND SIZE -> "MESSAGES WARMUP"
iterations() {
  local m
  case "$1" in
    lat) if [ "$2" -le 64 ]; then m=300000; elif [ "$2" -le 4096 ]; then m=150000
         elif [ "$2" -le 131072 ]; then m=20000; else m=1500; fi ;;
    bw)  if [ "$2" -le 64 ]; then m=2000000; elif [ "$2" -le 4096 ]; then m=600000
         elif [ "$2" -le 131072 ]; then m=60000; else m=4000; fi ;;
  esac
  echo "$m $((m / 2))"
}
WINDOW="${WINDOW:-64}"

# ---- one server/client pair of the hadronio application ---------------------------------------

# pair TAG WHAT CMD... -- CLIENT_ARGS...: starts "CMD -s -a 127.0.0.1:0" pinned to SERVER_CPU, waits until
# it prints the port it listens on, runs "CMD -r 127.0.0.1:PORT CLIENT_ARGS..." pinned to CLIENT_CPU (at
# most STEP_TIMEOUT s), then waits for the server to exit by itself. Sets LINE to the client's RESULT
# line. Runs in this shell, not in $(...), so that the background server stays known to the exit trap.
pair() {
  local tag="$1" what="$2" cmd=() port i
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do cmd+=("$1"); shift; done
  [ $# -gt 0 ] || die "pair: no '--' between command and client arguments"
  shift
  local slog="$LOG_DIR/$tag-server.log" clog="$LOG_DIR/$tag-client.log"
  start_bg "$slog" taskset -c "$SERVER_CPU" "${cmd[@]}" -s -a 127.0.0.1:0
  local spid=$BG_PID
  port=""
  # up to 60 s: a JVM start can take seconds when the machine is busy
  for ((i = 0; i < 1200; i++)); do
    port="$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -n1)"
    [ -n "$port" ] && break
    kill -0 "$spid" 2>/dev/null || { show_log "$slog"; die "$what server exited before listening"; }
    sleep 0.05
  done
  [ -n "$port" ] || { show_log "$slog"; die "$what server did not start listening within 60 s"; }
  local client=(taskset -c "$CLIENT_CPU" "${cmd[@]}" -r "127.0.0.1:$port" "$@")
  echo "${client[*]}" >"$LOG_DIR/$tag-command.txt"
  if ! timeout "$STEP_TIMEOUT" "${client[@]}" >"$clog" 2>&1; then
    show_log "$clog"; show_log "$slog"; die "$what client failed or took longer than $STEP_TIMEOUT s"
  fi
  wait_bg "$spid" "$slog" "$what server"
  LINE="$(grep '^RESULT ' "$clog" | tail -n1)" || { show_log "$clog"; die "$what client printed no RESULT line"; }
}

# ---- one binding measurement -------------------------------------------------------------------

# binding KIND SIZE TAG: sets LINE to the client's RESULT line
binding() {
  local kind="$1" size="$2" tag="$3" sub msgs warm
  [ "$kind" = lat ] && sub=latency || sub=throughput
  read -r msgs warm <<<"$(iterations "$kind" "$size")"
  local args=(-l "$size" -m "$msgs" --warmup "$warm" -n 1)
  [ "$kind" = bw ] && args+=(-w "$WINDOW")
  # shellcheck disable=SC2086
  pair "$tag" "binding $sub ($size B)" "$JAVA_HOME/bin/java" $JAVA_OPTS -jar "$APP_JAR" ucx benchmark "$sub" -- "${args[@]}"
}

# ---- one ucx_perftest measurement --------------------------------------------------------------

# perftest KIND SIZE TAG: sets LINE to the "Final:" line of the client
perftest() {
  local kind="$1" size="$2" tag="$3" test msgs warm port attempt i
  [ "$kind" = lat ] && test=tag_lat || test=tag_bw
  read -r msgs warm <<<"$(iterations "$kind" "$size")"
  local slog="$LOG_DIR/$tag-server.log" clog="$LOG_DIR/$tag-client.log" spid=""
  for attempt in 1 2 3; do
    port="$(free_port)"
    start_bg "$slog" taskset -c "$SERVER_CPU" ucx_perftest -p "$port"
    spid=$BG_PID
    for ((i = 0; i < 500; i++)); do
      port_listening "$port" && break
      kill -0 "$spid" 2>/dev/null || break
      sleep 0.02
    done
    port_listening "$port" && break
    kill "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true
    forget_bg "$spid"
    spid=""
    note "ucx_perftest server did not listen on port $port (attempt $attempt)"
  done
  [ -n "$spid" ] || { show_log "$slog"; die "ucx_perftest server did not start"; }
  local args=(127.0.0.1 -p "$port" -t "$test" -s "$size" -n "$msgs" -w "$warm")
  [ "$kind" = bw ] && args+=(-O "$WINDOW")
  echo "ucx_perftest ${args[*]}" >"$LOG_DIR/$tag-command.txt"
  if ! timeout "$STEP_TIMEOUT" taskset -c "$CLIENT_CPU" ucx_perftest "${args[@]}" >"$clog" 2>&1; then
    show_log "$clog"; show_log "$slog"; die "ucx_perftest $test client failed ($size B)"
  fi
  wait_bg "$spid" "$slog" "ucx_perftest server"
  LINE="$(grep '^Final:' "$clog")" || { show_log "$clog"; die "ucx_perftest printed no Final line"; }
}

# field LINE KEY: the value of KEY=value in a RESULT line
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# ---- section "ucx": the binding against ucx_perftest -------------------------------------------
#
# ucx_perftest columns of its "Final:" line:
#   Final: iterations | latency or overhead (usec): 50%ile average overall |
#          bandwidth (MB/s = 2^20 B/s): average overall | message rate (msg/s): average overall
# tag_lat reports one-way latency (half the ping-pong round trip), so RTT = 2 x 50%ile.
# For bandwidth we use the overall message rate x size, in 1e9 B/s like the binding.

declare -A UCX_B_LAT UCX_P_LAT UCX_B_BW UCX_P_BW UCX_B_MR UCX_P_MR UCX_TRANSPORT

run_section_ucx() {
  local round size line order step who
  for ((round = 1; round <= RUNS; round++)); do
    # alternate who goes first, so that drift in the machine's load hits both alike
    if ((round % 2)); then order="b p"; else order="p b"; fi
    for size in $SIZES; do
      for step in lat bw; do
        for who in $order; do
          if [ "$who" = b ]; then
            binding "$step" "$size" "ucx-r$round-$size-$step-binding"; line="$LINE"
            UCX_TRANSPORT[$size]="$(field "$line" transports)"
            if [ "$step" = lat ]; then
              UCX_B_LAT[$size]+=" $(field "$line" median_us)"
            else
              UCX_B_BW[$size]+=" $(field "$line" gb_per_s)"
              UCX_B_MR[$size]+=" $(field "$line" mmsg_per_s)"
            fi
          else
            perftest "$step" "$size" "ucx-r$round-$size-$step-perftest"; line="$LINE"
            if [ "$step" = lat ]; then
              UCX_P_LAT[$size]+=" $(awk '{printf "%.4f", 2 * $3}' <<<"$line")"
            else
              UCX_P_BW[$size]+=" $(awk -v s="$size" '{printf "%.4f", $9 * s / 1e9}' <<<"$line")"
              UCX_P_MR[$size]+=" $(awk '{printf "%.4f", $9 / 1e6}' <<<"$line")"
            fi
          fi
        done
      done
      note "round $round/$RUNS, $size B done"
    done
  done
}

print_section_ucx() {
  echo
  echo "UCX binding (hadronio ucx benchmark) vs ucx_perftest, 127.0.0.1, server on core $SERVER_CPU, client on core $CLIENT_CPU"
  echo "ratio = how many times slower the binding is (<= 1.20 meets the target)"
  echo
  echo "medians of $RUNS interleaved rounds:"
  ucx_table median
  echo
  echo "best round of $RUNS (lowest RTT, highest rate; filters rounds that other load on the machine disturbed):"
  ucx_table best
  echo
  # every round, so that a round hit by other load on the machine is visible
  echo "per round, binding/ucx_perftest (RTT µs; M msg/s at <= 64 B, else GB/s):"
  local size bb pb
  for size in $SIZES; do
    if [ "$size" -le 64 ]; then bb="${UCX_B_MR[$size]}"; pb="${UCX_P_MR[$size]}"; else bb="${UCX_B_BW[$size]}"; pb="${UCX_P_BW[$size]}"; fi
    printf '  %-8s RTT %s   rate %s\n' "$(human "$size")" "$(pairs "${UCX_B_LAT[$size]}" "${UCX_P_LAT[$size]}")" "$(pairs "$bb" "$pb")"
  done
  echo
}

# ucx_table median|best: one row per size
ucx_table() {
  local how="$1" size bl pl bb pb unit lat rate
  if [ "$how" = median ]; then lat=median; rate=median; else lat=lowest; rate=highest; fi
  # (%15s/%20s: the µ takes two bytes and printf counts bytes)
  printf '| %8s | %15s | %20s | %5s | %16s | %12s | %5s | %-9s |\n' \
    size "binding RTT µs" "ucx_perftest RTT µs" ratio "binding rate" perftest ratio transport
  printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---------: ---------------: --------------------: ------: -----------------: -------------: ------: -----------
  for size in $SIZES; do
    bl="$($lat <<<"${UCX_B_LAT[$size]}")"; pl="$($lat <<<"${UCX_P_LAT[$size]}")"
    if [ "$size" -le 64 ]; then
      bb="$($rate <<<"${UCX_B_MR[$size]}")"; pb="$($rate <<<"${UCX_P_MR[$size]}")"; unit="M msg/s"
    else
      bb="$($rate <<<"${UCX_B_BW[$size]}")"; pb="$($rate <<<"${UCX_P_BW[$size]}")"; unit="GB/s"
    fi
    awk -v s="$(human "$size")" -v bl="$bl" -v pl="$pl" -v bb="$bb" -v pb="$pb" -v u="$unit" -v t="${UCX_TRANSPORT[$size]}" \
      'BEGIN { printf "| %8s | %14.3f | %19.3f | %5.2f | %8.2f %-7s | %12.2f | %5.2f | %-9s |\n", s, bl, pl, bl / pl, bb, u, pb, pb / bb, t }'
  done
}

lowest() { tr ' ' '\n' | grep -v '^$' | sort -g | head -n1; }
highest() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -n1; }

# pairs "A1 A2 .." "B1 B2 ..": "A1/B1 A2/B2 .." with 3 significant digits
pairs() {
  local a=($1) b=($2) i out=""
  for i in "${!a[@]}"; do out+="$(awk -v x="${a[$i]}" -v y="${b[$i]:-nan}" 'BEGIN { printf "%.3g/%.3g", x, y }') "; done
  echo "$out"
}

human() {
  local b="$1"
  if ((b >= 1048576 && b % 1048576 == 0)); then echo "$((b / 1048576)) MiB"
  elif ((b >= 1024 && b % 1024 == 0)); then echo "$((b / 1024)) KiB"
  else echo "$b B"; fi
}

# ---- sections "blocking" and "netty": the same application code on hadroNIO and on the JDK's provider --
#
# Each case runs 'hadronio blocking|netty benchmark ...' once on each provider per round (the JDK's
# provider via DISABLE_HADRONIO=true); which provider goes first alternates between rounds. The same
# message counts for both providers: the JDK takes longest (a few seconds per case on an idle
# machine), hadroNIO still measures 50,000 round trips or 0.4-2.5 s of streaming. Netty's 64 KiB
# streaming runs 200,000 messages: its rate grows with the run's length on both providers (a fixed
# ~0.1-0.2 s inside the measured window, partly JIT compilation on the pinned core; 50,000
# messages measured 4.1-4.5 GB/s where 200,000-300,000 measured 5.5-6.6), blocking streaming does not.
# Netty's 8-byte messages warm up for 10,000,000: after 1,000,000 hadroNIO measured 3.9-5.7 M/s, after
# 15,000,000 8.6-9.3 (the JDK 6.6-6.9 either way); blocking 8-byte writes gain little (5.1-5.5 -> 5.7-6.1).

# The tail8 case (scripts/bench-tails.sh, issue 10's "no tails") measures the 8-byte round trip's p50, p99,
# p99.9 and mean in the steady state, so each provider warms up for seconds: hadroNIO 1,000,000 round trips
# (~1-4 s; Netty on hadroNIO after 200,000 still had its mean at 1.65x its median, after 1,000,000 at
# 1.2-1.3x), the JDK 100,000 (5-10 s: a million would take two minutes a run).

# app_case GROUP CASE [PROVIDER] -> "SUBCOMMAND CLIENT_ARGS..."
app_case() {
  case "$1:$2:${3:-}" in
    *:tail8:jdk)     echo "latency -l 8 -m 100000 -t 100000" ;;
    *:tail8:*)       echo "latency -l 8 -m 300000 -t 1000000" ;;
    blocking:lat8:*)   echo "latency -l 8 -m 50000 -t 50000" ;;
    blocking:stream:*) echo "throughput -l 65536 -m 50000 -t 20000" ;;
    blocking:msg8:*)   echo "throughput -l 8 -m 3000000 -t 1000000" ;;
    netty:lat8:*)      echo "latency -l 8 -m 50000 -t 50000" ;;
    netty:stream:*)    echo "throughput -l 65536 -m 200000 -t 20000" ;;
    netty:msg8:*)      echo "throughput -l 8 -m 5000000 -t 10000000" ;;
    netty:msg8f:*)     echo "throughput -l 8 -m 1000000 -t 200000 -f 1" ;;
    nio2:lat8:*)       echo "latency -l 8 -m 50000 -t 50000" ;;
    nio2:stream:*)     echo "throughput -l 65536 -m 50000 -t 20000" ;;
    nio2:msg8:*)       echo "throughput -l 8 -m 1000000 -t 1000000" ;;
    *) return 1 ;;
  esac
}

# app_rows GROUP CASE -> lines "METRIC SCALE BETTER TARGET LABEL..." (one table row each).
# SCALE divides the RESULT value; BETTER is low|high; TARGET is the issue's figure in the row's unit, or -.
app_rows() {
  local lat=- bw=- rate=-
  case "$1" in
    blocking) lat=1.5; bw=6000; rate=8 ;;   # issue 3
    netty)    lat=4;   bw=5000; rate=2 ;;   # issue 4
  esac
  case "$2" in
    lat8)   echo "p50_us 1 low $lat round trip 8 B, p50 (µs)"
            echo "avg_us 1 low - round trip 8 B, average (µs)" ;;
    tail8)  echo "p50_us 1 low - round trip 8 B, p50 (µs)"
            echo "p99_us 1 low - round trip 8 B, p99 (µs)"
            echo "p999_us 1 low - round trip 8 B, p99.9 (µs)"
            echo "avg_us 1 low - round trip 8 B, mean (µs)" ;;
    stream) echo "mb_per_s 1 high $bw streaming 64 KiB writes (MB/s)" ;;
    msg8)   if [ "$1" = netty ]; then echo "ops_per_s 1e6 high $rate 8-byte messages, flush every 64 (M/s)"
            else echo "ops_per_s 1e6 high $rate 8-byte writes (M/s)"; fi ;;
    msg8f)  echo "ops_per_s 1e6 high - 8-byte messages, each flushed (M/s)" ;;
  esac
}

declare -A APP_V APP_T

# run_app_section GROUP CASES
run_app_section() {
  local group="$1" cases="$2" round c p order sub args line m v disable got t
  for ((round = 1; round <= RUNS; round++)); do
    if ((round % 2)); then order="hadronio jdk"; else order="jdk hadronio"; fi
    for c in $cases; do
      for p in $order; do
        read -r sub args <<<"$(app_case "$group" "$c" "$p")"
        [ "$p" = jdk ] && disable=true || disable=false
        # shellcheck disable=SC2086
        pair "$group-r$round-$c-$p" "$group benchmark $sub $c on $p" \
          env DISABLE_HADRONIO=$disable "$JAVA_HOME/bin/java" $JAVA_OPTS -jar "$APP_JAR" "$group" benchmark "$sub" -- $args
        line="$LINE"
        echo "section=$group case=$c round=$round load=$(cut -d' ' -f1 /proc/loadavg) $line" >>"$LOG_DIR/results.txt"
        got="$(field "$line" provider)"; t="$(field "$line" transports)"
        [ "$got" = "$p" ] || die "$group $c: asked for provider $p, the client reports '$got' ($LOG_DIR/$group-r$round-$c-$p-client.log)"
        if [ "$p" = hadronio ] && [ "$t" = kernel-tcp ]; then
          die "$group $c: hadroNIO fell back to the JDK's provider (transports=kernel-tcp); see $LOG_DIR/$group-r$round-$c-$p-*.log"
        fi
        case ",${APP_T[$group:$c:$p]:-}," in *",$t,"*) ;; *) APP_T[$group:$c:$p]="${APP_T[$group:$c:$p]:+${APP_T[$group:$c:$p]} / }$t" ;; esac
        for m in p50_us p99_us p999_us avg_us mb_per_s ops_per_s; do
          v="$(field "$line" "$m")"
          [ -n "$v" ] && APP_V[$group:$c:$p:$m]+=" $v"
        done
      done
    done
    note "$group: round $round/$RUNS done"
  done
}

# print_app_section GROUP CASES TITLE
print_app_section() {
  local group="$1" cases="$2" title="$3" c metric scale better target label h j
  echo
  echo "$title, 127.0.0.1, server on core $SERVER_CPU, client on core $CLIENT_CPU; medians of $RUNS interleaved rounds"
  echo "ratio = hadroNIO / JDK (round trips: lower is better; rates: higher is better); target: $4"
  echo
  printf '| %-40s | %10s | %10s | %6s | %8s | %-6s | %-22s |\n' measurement hadroNIO JDK ratio target met transport
  printf '|%s|%s|%s|%s|%s|%s|%s|\n' ------------------------------------------ -----------: -----------: -------: ---------: -------- ------------------------
  for c in $cases; do
    while read -r metric scale better target label; do
      h="$(median <<<"${APP_V[$group:$c:hadronio:$metric]:-}")"
      j="$(median <<<"${APP_V[$group:$c:jdk:$metric]:-}")"
      awk -v l="$label" -v h="$h" -v j="$j" -v s="$scale" -v b="$better" -v t="$target" \
          -v tr="${APP_T[$group:$c:hadronio]:-?} / ${APP_T[$group:$c:jdk]:-?}" '
        function fmt(x) { return x >= 100 ? sprintf("%.0f", x) : x >= 10 ? sprintf("%.1f", x) : sprintf("%.2f", x) }
        BEGIN {
          h /= s; j /= s
          met = "-"; tg = "-"
          if (t != "-") {
            tg = (b == "low" ? "<= " : ">= ") t
            met = (b == "low" ? h <= t : h >= t) ? "yes" : "no"
          }
          # labels hold one two-byte character (µ) at most; printf pads bytes
          pad = (index(l, "µ") ? 41 : 40)
          printf "| %-" pad "s | %10s | %10s | %6.2f | %8s | %-6s | %-22s |\n", l, fmt(h), fmt(j), h / j, tg, met, tr
        }'
    done < <(app_rows "$group" "$c")
  done
  if [[ " $cases " == *" tail8 "* ]]; then
    # issue 10's "no tails": hadroNIO's p99 at most the JDK's p50, and its mean within 1.5x its own p50
    awk -v g="$group" -v h50="$(median <<<"${APP_V[$group:tail8:hadronio:p50_us]:-}")" \
        -v h99="$(median <<<"${APP_V[$group:tail8:hadronio:p99_us]:-}")" \
        -v hm="$(median <<<"${APP_V[$group:tail8:hadronio:avg_us]:-}")" \
        -v j50="$(median <<<"${APP_V[$group:tail8:jdk:p50_us]:-}")" 'BEGIN {
      printf "\n%s tails: hadroNIO p99 %.2f us vs the JDK'"'"'s p50 %.1f us (%s); hadroNIO mean / p50 = %.2f (target <= 1.5: %s)\n",
        g, h99, j50, (h99 <= j50 ? "met" : "not met"), hm / h50, (hm <= 1.5 * h50 ? "met" : "not met") }'
  fi
  echo
  echo "per round, hadroNIO/JDK:"
  for c in $cases; do
    while read -r metric scale better target label; do
      awk -v l="$label" -v v="$(pairs_scaled "${APP_V[$group:$c:hadronio:$metric]:-}" "${APP_V[$group:$c:jdk:$metric]:-}" "$scale")" \
        'BEGIN { pad = (index(l, "µ") ? 41 : 40); printf "  %-" pad "s  %s\n", l, v }'
    done < <(app_rows "$group" "$c")
  done
  echo
}

# pairs_scaled "A1 A2 .." "B1 B2 .." SCALE: "A1/B1 A2/B2 .." divided by SCALE
pairs_scaled() {
  local a=($1) b=($2) i out=""
  for i in "${!a[@]}"; do
    out+="$(awk -v x="${a[$i]}" -v y="${b[$i]:-nan}" -v s="$3" '
      function fmt(v) { return v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : sprintf("%.2f", v) }
      BEGIN { printf "%s/%s", fmt(x / s), fmt(y / s) }') "
  done
  echo "$out"
}

BLOCKING_CASES="${BLOCKING_CASES:-lat8 stream msg8}"
NETTY_CASES="${NETTY_CASES:-lat8 stream msg8}"
NIO2_CASES="${NIO2_CASES:-lat8 tail8 stream}"

run_section_blocking() { run_app_section blocking "$BLOCKING_CASES"; }
print_section_blocking() {
  print_app_section blocking "$BLOCKING_CASES" "Blocking NIO (hadronio blocking benchmark), hadroNIO vs the JDK's provider" \
    "issue 3 (round trip 8 B <= 1.5 µs median, 64 KiB streaming >= 6 GB/s, 8-byte writes >= 8 M/s)"
}
run_section_netty() { run_app_section netty "$NETTY_CASES"; }
print_section_netty() {
  print_app_section netty "$NETTY_CASES" "Netty NIO transport (hadronio netty benchmark), hadroNIO vs the JDK's provider" \
    "issue 4 (round trip 8 B <= 4 µs median, 64 KiB streaming >= 5 GB/s, 8-byte messages >= 2 M/s)"
}
run_section_nio2() { run_app_section nio2 "$NIO2_CASES"; }
print_section_nio2() {
  print_app_section nio2 "$NIO2_CASES" "NIO.2 (hadronio nio2 benchmark), hadroNIO vs the JDK's provider" \
    "issue 37 (round trip 8 B >= 10x faster, hadroNIO p99 <= the JDK's p50; 64 KiB streaming >= 2x)"
}

# ---- section "evaluate": hadronio evaluate (issue 11) --------------------------------------------
#
# The evaluation starts and pins its JVM pairs itself (SERVER_CPU/CLIENT_CPU), shows a progress bar
# on the terminal and prints its summary table at the end; docs/EVALUATION.md explains the columns.

run_section_evaluate() {
  local rev
  rev="$(git -C "$HADRONIO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  # evaluate exits 1 when a run failed; its results and report still hold every other run (the report lists
  # the failed ones), so the demo goes on to print the table and says so, and dies only without results
  local rc=0
  "$JAVA_HOME/bin/java" $JAVA_OPTS -jar "$APP_JAR" evaluate --profile "$PROFILE" --output "$LOG_DIR/evaluation" \
    --server-cpu "$SERVER_CPU" --client-cpu "$CLIENT_CPU" --revision "$rev" $EVALUATE_OPTS | tee "$LOG_DIR/evaluate.txt" || rc=$?
  [ -f "$LOG_DIR/evaluation/results.json" ] || die "hadronio evaluate failed (exit $rc) before writing results"
  if [ "$rc" != 0 ]; then
    note "some evaluation runs failed: see 'Failed runs' in $LOG_DIR/evaluation/EVALUATION.md"
  fi
}

print_section_evaluate() {
  echo
  echo "hadronio evaluate --profile $PROFILE: JDK provider vs hadroNIO vs the UCX binding, 127.0.0.1, server on core $SERVER_CPU, client on core $CLIENT_CPU"
  echo "(medians of the profile's repetitions; the report with figures and every size: $LOG_DIR/evaluation/EVALUATION.md)"
  echo
  sed -n '/^| mode /,/^$/p' "$LOG_DIR/evaluate.txt"
  grep '^Never slower' "$LOG_DIR/evaluate.txt" || true
  grep '^Tails' "$LOG_DIR/evaluate.txt" || true
}

# ---- section "connections": connection set-up rate, scripts/bench-connections.sh ------------------

# Short connections (open, connect, 8-byte request and answer, close) from 1 and 8 client threads,
# the JDK's provider on both sides against hadroNIO on both sides, in interleaved rounds
run_section_connections() {
  local rc=0
  RUNS="$RUNS" CLIENTS="${CONNECTION_CLIENTS:-1 8}" WARMUP="${CONNECTION_WARMUP:-5}" DURATION="${CONNECTION_DURATION:-2}" \
    PAIRS="jdk/jdk hadronio/hadronio" SKIP_BUILD=1 LOG_DIR="$LOG_DIR/connections" SERVER_CPU="$SERVER_CPU" \
    CLIENT_CPU="$CLIENT_CPU" JAVA_OPTS="$JAVA_OPTS" "$HADRONIO_ROOT/scripts/bench-connections.sh" \
    >"$LOG_DIR/connections.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] || die "scripts/bench-connections.sh failed (exit $rc): see $LOG_DIR/connections.txt"
}

print_section_connections() {
  echo
  echo "Connection set-up rate (scripts/bench-connections.sh): connect, 8-byte request and answer, close;"
  echo "medians of $RUNS interleaved rounds; output in $LOG_DIR/connections.txt"
  echo
  sed -n '/^| server /,/^$/p' "$LOG_DIR/connections.txt"
  local c jdk had
  for c in ${CONNECTION_CLIENTS:-1 8}; do
    jdk="$(awk -F'|' -v c="$c" '$2 ~ /jdk/ && $3 ~ /jdk/ && $4+0 == c {gsub(/ /, "", $5); print $5}' "$LOG_DIR/connections.txt")"
    had="$(awk -F'|' -v c="$c" '$2 ~ /hadronio/ && $3 ~ /hadronio/ && $4+0 == c {gsub(/ /, "", $5); print $5}' "$LOG_DIR/connections.txt")"
    if [[ "$jdk" =~ ^[0-9]+$ && "$had" =~ ^[0-9]+$ ]]; then
      awk -v c="$c" -v j="$jdk" -v h="$had" 'BEGIN {printf "connections/s, %d client(s): hadroNIO / JDK = %.2fx\n", c, h / j}'
    fi
  done
  # the rows the machine's port reuse capped, if any (bench-connections.sh names them)
  sed -n '/^at the kernel.s port-reuse ceiling/,/^$/p' "$LOG_DIR/connections.txt"
}

# ---- main --------------------------------------------------------------------------------------

main() {
  hadronio_setup
  cd "$HADRONIO_ROOT"
  command -v taskset >/dev/null || die "taskset (util-linux) is needed to pin the processes"
  command -v ss >/dev/null || die "ss (iproute2) is needed to see when a server listens"
  [[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$RUNS'"
  local c
  for c in $SECTIONS; do declare -F "run_section_$c" >/dev/null || die "unknown section '$c' (evaluate connections ucx blocking netty nio2)"; done
  for c in $BLOCKING_CASES; do app_case blocking "$c" >/dev/null || die "unknown BLOCKING_CASES entry '$c' (lat8 stream msg8 tail8)"; done
  for c in $NETTY_CASES; do app_case netty "$c" >/dev/null || die "unknown NETTY_CASES entry '$c' (lat8 stream msg8 msg8f tail8)"; done
  for c in $NIO2_CASES; do app_case nio2 "$c" >/dev/null || die "unknown NIO2_CASES entry '$c' (lat8 tail8 stream msg8)"; done
  local cpus; cpus="$(nproc)"
  ((SERVER_CPU < cpus && CLIENT_CPU < cpus)) || die "SERVER_CPU/CLIENT_CPU ($SERVER_CPU/$CLIENT_CPU) must be < $cpus cores"

  if [ "$SKIP_BUILD" != 1 ]; then
    note "building (./mvnw -B -ntp -q package -DskipTests) ..."
    ./mvnw -B -ntp -q package -DskipTests || die "build failed"
  fi
  [ -f "$APP_JAR" ] || die "$APP_JAR missing; build first"
  mkdir -p "$LOG_DIR"
  note "JDK $JAVA_HOME, $(ucx_info -v | sed -n 's/^# Version /UCX /p'), $cpus cores, logs in $LOG_DIR"
  local start=$SECONDS section load0 machine=""
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  for section in $SECTIONS; do
    machine+="$section: before $(machine_probe)"
    "run_section_$section"
    machine+=", after $(machine_probe); "
  done
  {
    for section in $SECTIONS; do
      "print_section_$section"
    done
    # the benchmarks keep two cores busy themselves (load ~2); more means other work competed
    echo "load average (1/5/15 min) before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
    # this VM moves memory between its two cores at ~8 GB/s for a while, then at ~2 GB/s for seconds to
    # minutes; large transfers on both providers slow down with it (docs/benchmarks/blocking.md)
    echo "cross-core copy rate of the machine (hadronio machine, GB/s; ~2 means its slow state): ${machine%; }"
  } | tee -a "$LOG_DIR/table.md"
  note "done in $((SECONDS - start)) s; raw output in $LOG_DIR"
}

main "$@"
