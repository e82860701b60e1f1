#!/usr/bin/env bash
# The JMH regression guard for hadroNIO's hot paths (benchmarks/): write copy-in and read copy-out
# on one connection, one selection pass with 1 and 1,000 registered keys, worker progress with
# nothing to do. Builds benchmarks/target/benchmarks.jar, then runs it; about 2 minutes.
#
#   scripts/jmh.sh                          # all, short settings (1 fork, 3 warm-up and 5 measured 1 s iterations)
#   scripts/jmh.sh SelectionPass -prof gc   # any JMH options: a benchmark regex, a profiler, ...
#   SKIP_BUILD=1 scripts/jmh.sh
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
hadronio_setup
cd "$HADRONIO_ROOT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  ./mvnw -B -ntp -q -pl benchmarks -am package -DskipTests
fi
if [ "$#" -eq 0 ]; then
  set -- -f 1 -wi 3 -w 1s -i 5 -r 1s
fi
exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar "$@"
