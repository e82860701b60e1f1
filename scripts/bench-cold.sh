#!/usr/bin/env bash
# A fresh JVM's first connections, side by side: "hadronio probe" starts, for every jar and every
# pairing of providers (client/server: jdk/jdk, hadronio/hadronio, hadronio/jdk, jdk/hadronio), a
# fresh server JVM (it writes an 8-byte greeting on accept) pinned to one core and a fresh client
# JVM pinned to the other, in interleaved rounds; it prints one table of medians: the first
# SocketChannel.open(address) from just before the call and from the JVM's launch, and the median
# connect-to-greeting time over the client's first 21 connections.
# Results are recorded in docs/benchmarks/connections.md ("The first connection").
#
#   scripts/bench-cold.sh                                   # this build, 5 rounds
#   OLD_JAR=/path/to/old/hadronio-app.jar scripts/bench-cold.sh   # an older build beside this one
#   RUNS=9 SKIP_BUILD=1 PROBE_OPTS="--jvm-option=--add-exports=java.base/sun.nio.ch=ALL-UNNAMED" scripts/bench-cold.sh
#
# Environment:
#   RUNS        interleaved rounds (default 5)
#   OLD_JAR     an older build's app jar, shown as "old" beside this build ("new")
#   SKIP_BUILD  1: use the jar already built
#   SERVER_CPU / CLIENT_CPU   cores of the server and client JVMs (default 0 / 1)
#   PROBE_OPTS  more options for "hadronio probe" (see its --help), e.g. --pairings, --jvm-option
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

RUNS="${RUNS:-5}"
OLD_JAR="${OLD_JAR:-}"
SKIP_BUILD="${SKIP_BUILD:-0}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
PROBE_OPTS="${PROBE_OPTS:-}"
APP_JAR="$HADRONIO_ROOT/app/target/hadronio-app.jar"

die() { echo "bench-cold: $*" >&2; exit 1; }

hadronio_setup
cd "$HADRONIO_ROOT"
command -v taskset >/dev/null || die "taskset (util-linux) is needed to pin the processes"
if [ "$SKIP_BUILD" != 1 ]; then
  echo "bench-cold: building (./mvnw -B -ntp -q package -DskipTests) ..." >&2
  ./mvnw -B -ntp -q package -DskipTests || die "build failed"
fi
[ -f "$APP_JAR" ] || die "$APP_JAR missing; build first"
jars=()
if [ -n "$OLD_JAR" ]; then
  [ -f "$OLD_JAR" ] || die "OLD_JAR $OLD_JAR not found"
  jars+=(--jar "old=$OLD_JAR" --jar "new=$APP_JAR")
fi
echo "bench-cold: JDK $JAVA_HOME, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# shellcheck disable=SC2086
"$JAVA_HOME/bin/java" -jar "$APP_JAR" probe --runs "$RUNS" --server-cpu "$SERVER_CPU" --client-cpu "$CLIENT_CPU" \
  ${jars[@]+"${jars[@]}"} $PROBE_OPTS
echo "bench-cold: load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
