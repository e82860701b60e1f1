#!/usr/bin/env bash
# The load mode side by side: "hadronio load" (N connections from one client Selector, 64-byte
# requests at fixed offered rates, each answered by an echo server of one model) for the JDK's
# provider, hadroNIO and, optionally, an older hadroNIO jar, on 127.0.0.1, server and client pinned
# to one core each, in interleaved rounds; prints one table of medians per server model and
# connection count. Results are recorded in docs/benchmarks/load.md.
#
#   scripts/bench-load.sh                              # 3 rounds, 3 models, 10/100/1000 connections
#   RUNS=5 MODES=nonblocking CONNECTIONS=1000 RATES=5000,20000 SKIP_BUILD=1 scripts/bench-load.sh
#   BASELINE_JAR=/tmp/old/app/target/hadronio-app.jar scripts/bench-load.sh   # adds a column "before"
#
# Environment:
#   RUNS         interleaved rounds (default 3; the tables show medians of the rounds that ran a rate)
#   MODES        server models (default "blocking nonblocking netty")
#   CONNECTIONS  connection counts (default "10 100 1000")
#   RATES        offered rates, comma-separated and increasing, all run by one client on the same
#                connections (default 1000,5000,20000,50000)
#   WARMUP / DURATION   seconds of closed-loop warm-up and of the measured window per rate (default 1 / 2)
#   STOP_BELOW   skip a pair's higher rates once one was answered below this share of its offered
#                rate (saturated; default 0.9, as hadronio evaluate; 0 runs every rate)
#   PROVIDERS    which sides to run (default "jdk hadronio", plus "before" when BASELINE_JAR is set)
#   BASELINE_JAR another hadronio-app.jar, run as provider "before" (an A/B against an older build)
#   SERVER_CPU / CLIENT_CPU   cores the two processes are pinned to (default 0 / 1)
#   SKIP_BUILD   1: use the jars already built
#   LOG_DIR      where every process's output is kept (default docs/results/raw/load-<time>)
#   JAVA_OPTS    extra JVM options for both sides of every pair
#   RUN_TIMEOUT  seconds one client may take (default 180)
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

RUNS="${RUNS:-3}"
MODES="${MODES:-blocking nonblocking netty}"
CONNECTIONS="${CONNECTIONS:-10 100 1000}"
RATES="${RATES:-1000,5000,20000,50000}"
WARMUP="${WARMUP:-1}"
DURATION="${DURATION:-2}"
STOP_BELOW="${STOP_BELOW:-0.9}"
BASELINE_JAR="${BASELINE_JAR:-}"
PROVIDERS="${PROVIDERS:-jdk hadronio${BASELINE_JAR:+ before}}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
SKIP_BUILD="${SKIP_BUILD:-0}"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/load-$(date +%Y%m%d-%H%M%S)}"
JAVA_OPTS="${JAVA_OPTS:-}"
RUN_TIMEOUT="${RUN_TIMEOUT:-180}"
APP_JAR="$HADRONIO_ROOT/app/target/hadronio-app.jar"

die() { echo "bench-load: $*" >&2; exit 1; }
note() { echo "bench-load: $*" >&2; }

SERVER_PID=""
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  local jvm
  # the JVM under timeout(1): a server whose shutdown hangs (a thread-per-connection server of
  # 1,000 threads) must not outlive its run
  jvm="$(pgrep -P "$SERVER_PID" 2>/dev/null || true)"
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    sleep 0.3
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  for pid in $jvm; do
    kill -9 "$pid" 2>/dev/null || true
  done
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
trap stop_server EXIT
trap 'echo "bench-load: interrupted" >&2; exit 130' INT TERM

median() { tr ' ' '\n' | awk 'NF && $1 != "nan"' | sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# run_pair PROVIDER MODE CONNECTIONS TAG: the client's RESULT lines (one per rate) in $LOG_DIR/TAG-client.log
run_pair() {
  local provider="$1" mode="$2" n="$3" tag="$4" port="" i jar="$APP_JAR" dis=false
  local slog="$LOG_DIR/$tag-server.log" clog="$LOG_DIR/$tag-client.log"
  [ "$provider" = jdk ] && dis=true
  [ "$provider" = before ] && jar="$BASELINE_JAR"
  : >"$slog"
  local server=(taskset -c "$SERVER_CPU" "$JAVA_HOME/bin/java")
  # shellcheck disable=SC2206
  server+=($JAVA_OPTS --enable-native-access=ALL-UNNAMED -jar "$jar" load -s -a 127.0.0.1:0 --mode "$mode")
  DISABLE_HADRONIO=$dis timeout $((RUN_TIMEOUT + 30)) "${server[@]}" >"$slog" 2>&1 &
  SERVER_PID=$!
  for ((i = 0; i < 600; i++)); do
    port="$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -n1)"
    [ -n "$port" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    note "$tag: the server did not listen ($slog)"
    stop_server
    return
  fi
  local client=(taskset -c "$CLIENT_CPU" "$JAVA_HOME/bin/java")
  # shellcheck disable=SC2206
  client+=($JAVA_OPTS --enable-native-access=ALL-UNNAMED -jar "$jar" load -r "127.0.0.1:$port" --mode "$mode" -c "$n"
           --rate "$RATES" --warmup "$WARMUP" --duration "$DURATION" --stop-below "$STOP_BELOW" -l 64)
  printf 'server: DISABLE_HADRONIO=%s %s\nclient: DISABLE_HADRONIO=%s %s\n' "$dis" "${server[*]}" "$dis" "${client[*]}" \
    >"$LOG_DIR/$tag-command.txt"
  DISABLE_HADRONIO=$dis timeout "$RUN_TIMEOUT" "${client[@]}" >"$clog" 2>&1 || note "$tag: client failed ($clog)"
  stop_server
}

declare -A V_P50 V_P90 V_P99 V_ACH V_PATHS

run_rounds() {
  local round k mode n provider tag line rate key provs=($PROVIDERS) np
  np=${#provs[@]}
  for ((round = 1; round <= RUNS; round++)); do
    for mode in $MODES; do
      for n in $CONNECTIONS; do
        # each round starts with the next provider, so that drift in the machine's load hits all alike
        for ((k = 0; k < np; k++)); do
          provider="${provs[$(((k + round - 1) % np))]}"
          tag="r$round-$mode-c$n-$provider"
          run_pair "$provider" "$mode" "$n" "$tag"
          while IFS= read -r line; do
            rate="$(field "$line" offered_per_s)"
            key="$mode:$n:$rate:$provider"
            V_P50[$key]+=" $(field "$line" p50_us)"
            V_P90[$key]+=" $(field "$line" p90_us)"
            V_P99[$key]+=" $(field "$line" p99_us)"
            V_ACH[$key]+=" $(field "$line" achieved_per_s)"
            V_PATHS[$key]="$(field "$line" paths)"
            echo "round=$round $line load=$(cut -d' ' -f1 /proc/loadavg)" >>"$LOG_DIR/results.txt"
          done < <(grep '^RESULT ' "$LOG_DIR/$tag-client.log" || true)
        done
      done
    done
    note "round $round/$RUNS done"
  done
}

print_tables() {
  local mode n rate provider key
  echo
  echo "Load (hadronio load), 127.0.0.1, server on core $SERVER_CPU, client on core $CLIENT_CPU, 64-byte requests,"
  echo "${WARMUP} s closed-loop warm-up and ${DURATION} s measured per rate, rates above a saturated one (answered"
  echo "< $STOP_BELOW x offered) skipped; medians of the $RUNS interleaved rounds that ran a rate (µs; - : none did)"
  for mode in $MODES; do
    for n in $CONNECTIONS; do
      echo
      echo "$mode server, $n connections"
      echo
      printf '| offered/s |'; for provider in $PROVIDERS; do printf ' %s p50 | p90 | p99 |' "$provider"; done; echo
      printf '|--:|'; for provider in $PROVIDERS; do printf '%s' '--:|--:|--:|'; done; echo
      for rate in ${RATES//,/ }; do
        printf '| %s |' "$rate"
        for provider in $PROVIDERS; do
          key="$mode:$n:$rate:$provider"
          awk -v a="$(median <<<"${V_P50[$key]:-}")" -v b="$(median <<<"${V_P90[$key]:-}")" \
              -v c="$(median <<<"${V_P99[$key]:-}")" '
            function fmt(x) { return x == "-" ? "-" : x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
            BEGIN { printf " %s | %s | %s |", fmt(a), fmt(b), fmt(c) }'
        done
        echo
      done
      for provider in $PROVIDERS; do
        for rate in ${RATES//,/ }; do
          key="$mode:$n:$rate:$provider"
          [ -n "${V_ACH[$key]:-}" ] || continue
          printf '  %s at %s/s: answered/s per round:%s; paths: %s\n' "$provider" "$rate" "${V_ACH[$key]}" "${V_PATHS[$key]:-?}"
        done
      done
    done
  done
  echo
}

main() {
  hadronio_setup
  cd "$HADRONIO_ROOT"
  command -v taskset >/dev/null || die "taskset (util-linux) is needed to pin the processes"
  [[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$RUNS'"
  local p
  for p in $PROVIDERS; do
    [[ "$p" =~ ^(jdk|hadronio|before)$ ]] || die "PROVIDERS entry '$p' is not jdk, hadronio or before"
    [ "$p" != before ] || [ -f "$BASELINE_JAR" ] || die "provider 'before' needs BASELINE_JAR (a hadronio-app.jar)"
  done
  if [ "$SKIP_BUILD" != 1 ]; then
    note "building (./mvnw -B -ntp -q package -DskipTests) ..."
    ./mvnw -B -ntp -q package -DskipTests || die "build failed"
  fi
  [ -f "$APP_JAR" ] || die "$APP_JAR missing; build first"
  mkdir -p "$LOG_DIR"
  note "JDK $JAVA_HOME, $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), logs in $LOG_DIR"
  local load0
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  run_rounds
  {
    print_tables
    echo "load average (1/5/15 min) before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  } | tee -a "$LOG_DIR/table.md"
}

main "$@"
