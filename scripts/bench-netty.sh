#!/usr/bin/env bash
# Netty (NIO transport) side by side on hadroNIO and on the JDK's provider, two processes
# on 127.0.0.1 pinned to one core each, rounds interleaved; prints every RESULT line and
# a table of medians. The results are recorded in docs/benchmarks/netty.md.
#
#   scripts/bench-netty.sh                 # 3 rounds of the three cases below
#   RUNS=5 SKIP_BUILD=1 scripts/bench-netty.sh
#
# Cases (client options of 'hadronio netty benchmark ...'):
#   latency 8 B          latency    -l 8     -m 200000  -t 50000
#   streaming 64 KiB     throughput -l 65536 -m 50000   -t 10000
#   8-byte messages      throughput -l 8     -m 5000000 -t 1000000   (flushed every 64 writes)
#   8-byte, each flushed throughput -l 8     -m 1000000 -t 200000 -f 1
# Environment: RUNS (3), SERVER_CPU (0), CLIENT_CPU (1), PORT (3200), SKIP_BUILD (0),
#   LOG_DIR (a temporary directory), JAVA_OPTS (extra JVM options), CASES (all: lat64 stream msg8 msg8f).
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
hadronio_require_jdk

RUNS="${RUNS:-3}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
PORT="${PORT:-3200}"
SKIP_BUILD="${SKIP_BUILD:-0}"
LOG_DIR="${LOG_DIR:-$(mktemp -d /tmp/bench-netty.XXXXXX)}"
JAVA_OPTS="${JAVA_OPTS:-}"
CASES="${CASES:-lat8 stream msg8 msg8f}"
APP_JAR="$HADRONIO_ROOT/app/target/hadronio-app.jar"
mkdir -p "$LOG_DIR"

SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT

if [ "$SKIP_BUILD" != 1 ]; then
  (cd "$HADRONIO_ROOT" && ./mvnw -B -ntp -q install -DskipTests)
fi

case_args() {
  case "$1" in
    lat8) echo "latency -l 8 -m 200000 -t 50000" ;;
    stream) echo "throughput -l 65536 -m 50000 -t 10000" ;;
    msg8) echo "throughput -l 8 -m 5000000 -t 1000000" ;;
    msg8f) echo "throughput -l 8 -m 1000000 -t 200000 -f 1" ;;
    *) echo "bench-netty: unknown case $1" >&2; exit 1 ;;
  esac
}

# run PROVIDER CASE ROUND: one server/client pair; appends the client's RESULT line to results.txt
run() {
  local provider="$1" name="$2" round="$3" args kind rest log disable
  args="$(case_args "$name")"
  kind="${args%% *}"
  rest="${args#* }"
  disable=false
  [ "$provider" = jdk ] && disable=true
  PORT=$((PORT + 1))
  log="$LOG_DIR/$name-$provider-$round"
  # shellcheck disable=SC2086
  DISABLE_HADRONIO=$disable taskset -c "$SERVER_CPU" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED $JAVA_OPTS \
    -jar "$APP_JAR" netty benchmark "$kind" -s -a "127.0.0.1:$PORT" >"$log.server" 2>&1 &
  SERVER_PID=$!
  # shellcheck disable=SC2086
  if ! DISABLE_HADRONIO=$disable timeout 300 taskset -c "$CLIENT_CPU" "$JAVA_HOME/bin/java" \
      --enable-native-access=ALL-UNNAMED $JAVA_OPTS -jar "$APP_JAR" netty benchmark "$kind" \
      -r "127.0.0.1:$PORT" $rest >"$log.client" 2>&1; then
    echo "bench-netty: $name on $provider failed, see $log.client" >&2
    cat "$log.client" >&2
    exit 1
  fi
  wait "$SERVER_PID" || true
  SERVER_PID=""
  local line
  line="$(grep '^RESULT ' "$log.client")"
  echo "case=$name round=$round load=$(cut -d' ' -f1 /proc/loadavg) $line" | tee -a "$LOG_DIR/results.txt"
}

echo "bench-netty: logs in $LOG_DIR; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= RUNS; round++)); do
  for name in $CASES; do
    for provider in hadronio jdk; do
      run "$provider" "$name" "$round"
    done
  done
done
echo "bench-netty: load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# medians per case and provider
python3 - "$LOG_DIR/results.txt" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = dict(kv.split('=', 1) for kv in line.split() if '=' in kv)
    rows[(f['case'], f['provider'])].append(f)
def med(rs, key):
    return statistics.median(float(r[key]) for r in rs)
print()
print("| case | provider | runs | median | all runs | transport |")
print("|---|---|---|---|---|---|")
for (case, provider), rs in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] != 'hadronio')):
    if rs[0]['kind'] == 'netty-latency':
        key, unit = 'p50_us', 'µs p50 round trip'
        extra = " (avg %.2f µs, p99 %.2f µs, %.0f round trips/s)" % (med(rs, 'avg_us'), med(rs, 'p99_us'), med(rs, 'ops_per_s'))
    elif case == 'stream':
        key, unit = 'mb_per_s', 'MB/s'
        extra = " (%.0f messages/s)" % med(rs, 'ops_per_s')
    else:
        key, unit = 'ops_per_s', 'messages/s'
        extra = ""
    print("| %s | %s | %d | %.2f %s%s | %s | %s |" % (case, provider, len(rs), med(rs, key), unit, extra,
          ", ".join(r[key] for r in rs), rs[0]['transports']))
PY
