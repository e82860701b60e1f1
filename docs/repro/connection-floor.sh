#!/bin/bash
# Connection set-up against its floor: interleaved rounds of the app's own pairs
# ("hadronio blocking benchmark connection", JDK/JDK and hadroNIO/hadroNIO) and of
# docs/repro/ConnectionFloor.java through the JDK's channels and through raw system calls, one
# client thread, server on core 0, client on core 1 (docs/benchmarks/connections.md, 2026-11-29).
# usage: docs/repro/connection-floor.sh ROUNDS WARMUP_S DURATION_S   (after ./mvnw install -DskipTests)
cd "$(dirname "$0")/../.." || exit 1
source scripts/env.sh && hadronio_setup >/dev/null
JAVA="$JAVA_HOME/bin/java"
JAR=app/target/hadronio-app.jar
FLOOR=docs/repro/ConnectionFloor.java
ROUNDS=${1:-5}; WARMUP=${2:-4}; DURATION=${3:-4}
OUT=$(mktemp -d /tmp/connection-floor.XXXXXX)
# the single-file program is compiled once, not at every start
"$JAVA_HOME/bin/javac" -d "$OUT/classes" "$FLOOR" || exit 1
run() {  # run SERVER CLIENT: each app-jdk, app-hadronio, floor-jdk or floor-raw
  local s=$1 c=$2 slog="$OUT/server.log" port=""
  case $s in
    app-*) [ "$s" = app-jdk ] && dis=true || dis=false
      DISABLE_HADRONIO=$dis taskset -c 0 "$JAVA" -jar $JAR blocking benchmark connection -s -a 127.0.0.1:0 >"$slog" 2>&1 & ;;
    floor-*) taskset -c 0 "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$OUT/classes" ConnectionFloor server "${s#floor-}" >"$slog" 2>&1 & ;;
  esac
  local sp=$!
  for i in $(seq 1 400); do port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -n1); [ -n "$port" ] && break; sleep 0.05; done
  case $c in
    app-*) [ "$c" = app-jdk ] && dis=true || dis=false
      line=$(DISABLE_HADRONIO=$dis timeout 120 taskset -c 1 "$JAVA" -jar $JAR blocking benchmark connection -r 127.0.0.1:$port \
        --clients 1 --warmup-duration "$WARMUP" --duration "$DURATION" 2>&1 | grep -o 'conn_per_s=[0-9]*.*p99_us=[0-9.]*') ;;
    floor-*) line=$(timeout 120 taskset -c 1 "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$OUT/classes" ConnectionFloor client \
        "${c#floor-}" "$port" "$WARMUP" "$DURATION") ;;
  esac
  sleep 0.3; kill $sp 2>/dev/null; wait $sp 2>/dev/null
  echo "round $r $s/$c: $line"
}
for r in $(seq 1 "$ROUNDS"); do
  run app-jdk app-jdk
  run app-hadronio app-hadronio
  run floor-jdk floor-jdk
  run floor-raw floor-raw
  run floor-raw floor-jdk
  run floor-jdk floor-raw
done
