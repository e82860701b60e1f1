#!/usr/bin/env bash
# The quick profile's non-blocking round trips at 16 KiB (twice), 64 KiB and 256 KiB, as
# `hadronio evaluate --profile quick` runs them (the same messages and warm-ups, one server for
# the four sizes), in a pinned pair: server on core 0, client on core 1. Each argument is a set of
# JVM options for both sides; the sets run interleaved, ROUNDS times. Prints p50 and p99 (µs)
# per size. docs/nio2.md ("The millisecond p99 of short windows") used:
#
#   docs/repro/quick-window-tails.sh "-Dx=1" "-XX:TieredStopAtLevel=1" "-Dhadronio.polling.yield=false"
#
# Environment: APP_JAR (default app/target/hadronio-app.jar), MODE (nonblocking or nio2), ROUNDS (3).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
hadronio_setup
JAR="${APP_JAR:-app/target/hadronio-app.jar}"
MODE="${MODE:-nonblocking}"
one() {
  local opts="$1" slog clog port sp
  slog=$(mktemp); clog=$(mktemp)
  # shellcheck disable=SC2086
  taskset -c 0 "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED $opts -jar "$JAR" "$MODE" benchmark latency -s \
      -a 127.0.0.1:0 --sessions 4 >"$slog" 2>&1 &
  sp=$!
  for _ in $(seq 200); do
    port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -1)
    [ -n "$port" ] && break
    sleep 0.05
  done
  # shellcheck disable=SC2086
  taskset -c 1 "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED $opts -jar "$JAR" "$MODE" benchmark latency \
      -r "127.0.0.1:$port" -l 16384,16384,65536,262144 -m 5496,5496,2338,708 -t 16490,5496,2338,2000 >"$clog" 2>&1 || true
  kill "$sp" 2>/dev/null || true
  wait "$sp" 2>/dev/null || true
  sed -n 's/.*length=\([0-9]*\).*p50_us=\([0-9.]*\).*p99_us=\([0-9.]*\).*/\1 B: p50 \2 p99 \3 |/p' "$clog" | tr '\n' ' '
  rm -f "$slog" "$clog"
}
for r in $(seq "${ROUNDS:-3}"); do
  for opts in "$@"; do
    echo "round $r [$opts] $(one "$opts") load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
