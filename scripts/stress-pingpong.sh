#!/usr/bin/env bash
# Runs the smoke profile's hadroNIO blocking latency pair (server `blocking benchmark latency -s
# --sessions 3`, client `-l 64,64,65536` with the smoke profile's message counts, C1 only) over and
# over, and keeps the thread dumps of any pair that stops making progress. It looks for the
# intermittent hang of a blocking 64 KiB round trip across the upgrade switch (README, "An
# intermittent hang"; docs/RELIABILITY.md).
#
#   scripts/stress-pingpong.sh [ITERATIONS]
#
# Environment:
#   STRESS_OUT      where logs and dumps go (default: /tmp/hadronio-stress-<time>)
#   STRESS_TIMEOUT  seconds a pair may run before it counts as stuck (default: 60)
#   STRESS_JVM      extra JVM options for both sides, e.g. "-Dhadronio.upgrade.delay=0"
#   STRESS_SIZES    the client's -l (default: 64,64,65536)
#   STRESS_MESSAGES the client's -m (default: 1994,1994,467, the smoke profile's)
#   STRESS_WARMUP   the client's -t (default: 5982,1994,467)
#   STRESS_PIN      "1" pins server and client to cores 0 and 1 as `hadronio evaluate` does (default: 1)
#   STRESS_BURN     busy-loop processes to run beside the pair, the load of the rest of a test suite (default: 0)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
hadronio_require_jdk

iterations="${1:-50}"
out="${STRESS_OUT:-/tmp/hadronio-stress-$(date +%Y%m%d-%H%M%S)}"
timeout_s="${STRESS_TIMEOUT:-60}"
sizes="${STRESS_SIZES:-64,64,65536}"
messages="${STRESS_MESSAGES:-1994,1994,467}"
warmup="${STRESS_WARMUP:-5982,1994,467}"
sessions=$(awk -F, '{print NF}' <<<"$sizes")
jar="$HADRONIO_ROOT/app/target/hadronio-app.jar"
[ -f "$jar" ] || { echo "build first: ./mvnw -B -ntp -q package -DskipTests" >&2; exit 1; }
mkdir -p "$out"
read -r -a extra <<<"${STRESS_JVM:-}"
java_cmd=(java -XX:TieredStopAtLevel=1 --enable-native-access=ALL-UNNAMED "${extra[@]}" -jar "$jar")
server_pin=(); client_pin=()
if [ "${STRESS_PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  server_pin=(taskset -c 0); client_pin=(taskset -c 1)
fi

burners=()
server=""; client=""
cleanup() {
  for p in "$client" "$server" "${burners[@]}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 "${STRESS_BURN:-0}"); do
  ( while :; do :; done ) &
  burners+=("$!")
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

stuck=0
for i in $(seq 1 "$iterations"); do
  port=$(free_port)
  slog="$out/$i-server.log"; clog="$out/$i-client.log"
  "${server_pin[@]}" "${java_cmd[@]}" blocking benchmark latency -s -a "127.0.0.1:$port" --sessions "$sessions" \
    >"$slog" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do
    grep -q "listening on" "$slog" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.05
  done
  "${client_pin[@]}" "${java_cmd[@]}" blocking benchmark latency -r "127.0.0.1:$port" -l "$sizes" -m "$messages" \
    -t "$warmup" >"$clog" 2>&1 &
  client=$!
  start=$(date +%s)
  while kill -0 "$client" 2>/dev/null; do
    if [ $(( $(date +%s) - start )) -ge "$timeout_s" ]; then
      stuck=$((stuck + 1))
      echo "iteration $i: STUCK after ${timeout_s}s ($(grep -c RESULT "$clog") RESULT lines); dumps in $out/$i-*-threads.txt"
      jcmd "$client" Thread.print >"$out/$i-client-threads.txt" 2>&1 || true
      jcmd "$server" Thread.print >"$out/$i-server-threads.txt" 2>&1 || true
      kill "$client" "$server" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  wait "$client" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  results=$(grep -c RESULT "$clog" || true)
  if [ "$results" != "$sessions" ] && ! [ -f "$out/$i-client-threads.txt" ]; then
    echo "iteration $i: FAILED with $results RESULT lines (see $clog)"
  fi
  client=""; server=""
  echo "iteration $i: $results/$sessions sizes, $(( $(date +%s) - start )) s, $(grep -o 'transports=[^ ]*' "$clog" | tr '\n' ' ')"
done
echo "stuck: $stuck of $iterations (logs in $out)"
[ "$stuck" = 0 ]
