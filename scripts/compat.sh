#!/usr/bin/env bash
# docs/COMPATIBILITY.md from scratch: builds, runs the application tests (Jetty, JGroups, Tomcat +
# the JDK's HttpClient, gRPC, Kafka, the NIO patterns of `hadronio patterns`) in every provider pairing, once in the default connection mode (upgrade)
# and once with -Dhadronio.upgrade=false (eager), and turns their output into the matrix. About 8-10
# minutes. COMPAT_MODES="upgrade" skips the eager-mode run.
set -euo pipefail
source "$(dirname "$0")/env.sh"
hadronio_setup
cd "$HADRONIO_ROOT"
results=integration-tests/target/compat/results.tsv
status=0
rm -f "$results"
for mode in ${COMPAT_MODES:-upgrade eager}; do
  flags="--enable-native-access=ALL-UNNAMED -ea"
  [ "$mode" = eager ] && flags="$flags -Dhadronio.upgrade=false"
  echo "compat: application tests, $mode mode"
  # verify, not install: the reactor builds the provider jar the tests put on the applications' class path;
  # each run appends its rows to $results
  ./mvnw -B -ntp -pl integration-tests -am verify -Dtest='io.hadronio.it.apps.**' \
    -Dsurefire.failIfNoSpecifiedTests=false -Dtest.jvm.flags="$flags" || status=$?
done
java -cp integration-tests/target/test-classes io.hadronio.it.apps.CompatibilityMatrix "$results" docs/COMPATIBILITY.md \
  "Last run: $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores, UCX $(ucx_info -v | head -n1 | grep -o '[0-9][0-9.]*[0-9]')."
exit "$status"
