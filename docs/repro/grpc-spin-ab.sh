#!/bin/bash
# A/B: gRPC sequential unary calls, JDK vs hadroNIO with hadronio.polling.spin variants, interleaved
# per round; server pinned to core 0, client to core 1 (docs/benchmarks/apps.md, 2026-11-29).
# usage: docs/repro/grpc-spin-ab.sh ROUNDS "jdk 100 400" WARMUP_S DURATION_S   (after ./mvnw install -DskipTests)
cd "$(dirname "$0")/../.." || exit 1
source scripts/env.sh && hadronio_setup >/dev/null
JAVA="$JAVA_HOME/bin/java"
JAR=app/target/hadronio-app.jar
ROUNDS=$1; VARIANTS="$2"; WARMUP=$3; DURATION=$4
OUT=$(mktemp -d /tmp/grpc-spin-ab.XXXXXX)
for r in $(seq 1 $ROUNDS); do
  for v in $VARIANTS; do
    if [ "$v" = jdk ]; then dis=true; opts=""; else dis=false; opts="-Dhadronio.polling.spin=$v"; fi
    slog=$OUT/$v-$r-server.log; clog=$OUT/$v-$r-client.log
    DISABLE_HADRONIO=$dis taskset -c 0 $JAVA $opts -jar $JAR grpc benchmark -s -a 127.0.0.1:0 -l 8 > $slog 2>&1 &
    sp=$!
    port=""
    for i in $(seq 1 400); do port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' $slog | head -n1); [ -n "$port" ] && break; sleep 0.05; done
    DISABLE_HADRONIO=$dis timeout 200 taskset -c 1 $JAVA $opts -jar $JAR grpc benchmark -r 127.0.0.1:$port -l 8 --modes sequential --warmup $WARMUP -d $DURATION > $clog 2>&1
    kill $sp 2>/dev/null; wait $sp 2>/dev/null
    line=$(grep '^RESULT' $clog | head -1)
    echo "round $r $v: $line"
  done
done
