#!/usr/bin/env bash
# The README's test command: installs what is missing, then builds and runs every test.
set -euo pipefail
source "$(dirname "$0")/env.sh"
hadronio_setup
cd "$HADRONIO_ROOT"
echo "hadroNIO tests: JDK $JAVA_HOME, $(ucx_info -v | head -n1 | sed 's/# //')"
./mvnw -B -ntp verify "$@"
if [ "$#" -eq 0 ]; then
  # the opt-in connection mode (connections start as kernel TCP and move to UCX) must not rot:
  # the provider's tests once more in it, and the integration tests that check each pairing's
  # path and the contract across processes
  upgrade="--enable-native-access=ALL-UNNAMED -ea -Dhadronio.upgrade=true"
  echo "hadroNIO tests: the provider's tests again with -Dhadronio.upgrade=true"
  ./mvnw -B -ntp -pl provider surefire:test -Dtest.jvm.flags="$upgrade"
  echo "hadroNIO tests: the mixed-deployment integration tests again with -Dhadronio.upgrade=true"
  ./mvnw -B -ntp -pl integration-tests -am surefire:test -Dtest.jvm.flags="$upgrade" -Dsurefire.failIfNoSpecifiedTests=false \
    -Dtest='MixedPairingsTest,MixedPortTakeoverTest,OrderlyCloseTest'
fi
