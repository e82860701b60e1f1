#!/usr/bin/env bash
# The README's test command: installs what is missing, then builds and runs every test.
#   scripts/test.sh               every test, the docs check, then the second pass in the eager
#                                 connection mode (CI runs this)
#   scripts/test.sh --fast        the inner loop: every test not tagged "slow", one pass, the docs check
#   scripts/test.sh [--fast] ARGS ARGS go to Maven (e.g. -pl provider -am, -Dtest=SelectorContractTest);
#                                 no second pass
# @Tag("slow") (JUnit 5, on a test class or method) marks a test that takes more than ~10 s on a
# 2-core machine, or one of the heavy kinds: soak, connection churn, fuzzing, network namespaces,
# peers killed across JVMs, applications (gRPC, JGroups, Jetty, Tomcat, Netty; the app's
# benchmark and evaluation smoke runs). --fast leaves them out with surefire's excludedGroups.
set -euo pipefail
fast=false
args=()
for a in "$@"; do
  if [ "$a" = "--fast" ]; then fast=true; else args+=("$a"); fi
done
set -- ${args[@]+"${args[@]}"}
if $fast; then
  echo "hadroNIO tests: fast mode: every test not tagged slow, no eager-mode pass${*:+; Maven arguments: $*}"
elif [ "$#" -eq 0 ]; then
  echo "hadroNIO tests: full mode: every test, then the eager-mode pass"
else
  echo "hadroNIO tests: the tests Maven selects with: $*; no eager-mode pass"
fi
source "$(dirname "$0")/env.sh"
hadronio_setup
cd "$HADRONIO_ROOT"
echo "hadroNIO tests: JDK $JAVA_HOME, $(ucx_info -v | head -n1 | sed 's/# //')"
if $fast; then
  ./mvnw -B -ntp install -DexcludedGroups=slow "$@"
  exec ./scripts/check-docs.sh
fi
# install, not verify: the second pass below runs surefire alone on single modules (-pl), which
# resolves the other modules' jars from the local repository; on a fresh machine nothing else
# puts them there (verify alone made that pass fail with "Could not find artifact
# io.hadronio:hadronio-ucx-binding")
./mvnw -B -ntp install "$@"
echo "hadroNIO tests: the docs check (links, anchors, the README's commands)"
./scripts/check-docs.sh
if [ "$#" -eq 0 ]; then
  # the other connection mode (the handshake before connect returns, on UCX from the first byte)
  # must not rot: the provider's tests once more in it, the integration tests that check each
  # pairing's path and the contract across processes, and the soak and churn, whose connections
  # are then all on UCX from their first byte
  eager="--enable-native-access=ALL-UNNAMED -ea -Dhadronio.upgrade=false"
  echo "hadroNIO tests: the provider's tests again with -Dhadronio.upgrade=false"
  # but those tagged own-properties: what they run does not follow the JVM's connection mode (their
  # providers come from their own Properties, or they make none), so this pass would run them
  # exactly as the first
  ./mvnw -B -ntp -pl provider surefire:test -Dtest.jvm.flags="$eager" -DexcludedGroups=own-properties
  echo "hadroNIO tests: the mixed-deployment (NIO and NIO.2), close, soak and churn integration tests again with -Dhadronio.upgrade=false"
  # the soak once here, with UCX's default settings: its other run (every message eager in UCX) varies
  # UCX's protocol, not the connection mode, and the first pass has it
  ./mvnw -B -ntp -pl integration-tests -am surefire:test -Dtest.jvm.flags="$eager" -Dsurefire.failIfNoSpecifiedTests=false \
    -Dtest='MixedPairingsTest,AsynchronousPairingsTest,MixedPortTakeoverTest,OrderlyCloseTest,SoakTest#shouldKeepEveryByteThroughKillsAndHalfClosesAndLeakNothingWithDefaultUcxSettings,ConnectionChurnTest,CloseAfterAnswerAcrossJvmsTest'
fi
