#!/usr/bin/env bash
# The README's test command: installs what is missing, then builds and runs every test.
set -euo pipefail
source "$(dirname "$0")/env.sh"
hadronio_setup
cd "$HADRONIO_ROOT"
echo "hadroNIO tests: JDK $JAVA_HOME, $(ucx_info -v | head -n1 | sed 's/# //')"
exec ./mvnw -B -ntp verify "$@"
