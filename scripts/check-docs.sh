#!/usr/bin/env bash
# The docs check (part of ./scripts/test.sh): every relative link and anchor in README.md,
# CHANGELOG.md and docs/ resolves, every script the README names exists, and every `hadronio`
# subcommand the README names answers --help (skipped when the application jar is not built).
# Offline; the JDK is all it needs (scripts/DocsCheck.java, a single-file program).
set -euo pipefail
source "$(dirname "$0")/env.sh"
hadronio_require_jdk
cd "$HADRONIO_ROOT"
jar=app/target/hadronio-app.jar
if [ -f "$jar" ]; then
  exec "$JAVA_HOME/bin/java" scripts/DocsCheck.java . "$jar"
else
  exec "$JAVA_HOME/bin/java" scripts/DocsCheck.java .
fi
