#!/usr/bin/env bash
# gRPC-java side by side: "hadronio grpc kvs benchmark" (YCSB workloads against a "grpc kvs"
# server, both on gRPC's Netty transport over NIO) with both processes on the JDK's provider and
# both on hadroNIO, fully JIT-compiled, server and client pinned to one core each; one table.
# Every run's JSON export and output stay in LOG_DIR.
#
#   scripts/bench-grpc.sh                                   # workloads A-F, ~5 minutes
#   WORKLOADS="A C" OPERATIONS=100000 SKIP_BUILD=1 scripts/bench-grpc.sh
#
# Environment: WORKLOADS (default "A B C D E F"), RECORDS (10000), OPERATIONS (30000),
# THREADS (4), CHANNELS (1), TARGET (0: unthrottled), PROVIDERS (default "jdk hadronio"),
# SERVER_CPU / CLIENT_CPU (0 / 1), SKIP_BUILD (1: use the jars already built), JAVA_OPTS,
# LOG_DIR (default docs/results/raw/grpc-<time>), APP_JAR (another build of app/target/hadronio-app.jar,
# to compare two builds).
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
hadronio_setup
cd "$HADRONIO_ROOT"

WORKLOADS="${WORKLOADS:-A B C D E F}"
RECORDS="${RECORDS:-10000}"
OPERATIONS="${OPERATIONS:-30000}"
THREADS="${THREADS:-4}"
CHANNELS="${CHANNELS:-1}"
TARGET="${TARGET:-0}"
PROVIDERS="${PROVIDERS:-jdk hadronio}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
JAVA_OPTS="${JAVA_OPTS:-}"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/grpc-$(date +%Y%m%d-%H%M%S)}"
APP_JAR="${APP_JAR:-$HADRONIO_ROOT/app/target/hadronio-app.jar}"
PORT="${PORT:-29960}"

[ "${SKIP_BUILD:-0}" = 1 ] || ./mvnw -B -ntp -q package -DskipTests
mkdir -p "$LOG_DIR"

SERVER_PID=""
stop_server() { [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; }; }
trap stop_server EXIT

# env for a provider: the JDK's with DISABLE_HADRONIO=true, as the README says
provider_env() { [ "$1" = jdk ] && echo "DISABLE_HADRONIO=true" || echo "DISABLE_HADRONIO=false"; }

declare -A RESULT
for w in $WORKLOADS; do
  for p in $PROVIDERS; do
    log="$LOG_DIR/$w-$p"
    env "$(provider_env "$p")" taskset -c "$SERVER_CPU" java $JAVA_OPTS -jar "$APP_JAR" grpc kvs -s -q \
      -a "127.0.0.1:$PORT" > "$log-server.txt" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do grep -q 'listening on' "$log-server.txt" 2>/dev/null && break; sleep 0.1; done
    env "$(provider_env "$p")" taskset -c "$CLIENT_CPU" java $JAVA_OPTS -jar "$APP_JAR" grpc kvs benchmark \
      -r "127.0.0.1:$PORT" -w "$w" -n "$RECORDS" -o "$OPERATIONS" -T "$THREADS" -c "$CHANNELS" --target "$TARGET" \
      --status 10 --export "$log.json" > "$log-client.txt" 2>&1 || echo "bench-grpc: $w on $p failed, see $log-client.txt" >&2
    stop_server
    RESULT[$w/$p]="$(grep '^RESULT .*phase=run' "$log-client.txt" | tail -n1 || true)"
    PORT=$((PORT + 1))
  done
done

field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<< "$1"; }
echo
echo "gRPC kvs, YCSB: $RECORDS records, $OPERATIONS operations, $THREADS threads, $CHANNELS channel(s); logs in $LOG_DIR"
echo
echo "| workload | provider | ops/s | failures | p50 / p99 µs per operation | transport |"
echo "|---|---|---|---|---|---|"
for w in $WORKLOADS; do
  for p in $PROVIDERS; do
    r="${RESULT[$w/$p]}"
    if [ -z "$r" ]; then echo "| $w | $p | failed | | | |"; continue; fi
    lat="$(grep -o '[a-z_]*_p50_us=[0-9]* [a-z_]*_p99_us=[0-9]*' <<< "$r" | sed 's/_p50_us=/ /; s/ [a-z_]*_p99_us=/ \/ /' | paste -sd ';' -)"
    echo "| $w | $p | $(field "$r" ops_per_s) | $(field "$r" failures) | $lat | $(field "$r" transport) |"
  done
done
