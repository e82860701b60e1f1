#!/usr/bin/env bash
# Netty (NIO transport) side by side on hadroNIO and on the JDK's provider: the "netty" section of
# scripts/demo.sh, which is where the cases, message counts and table live. Results are recorded in
# docs/benchmarks/netty.md.
#
#   scripts/bench-netty.sh                 # 3 rounds of lat8 stream msg8 msg8f
#   RUNS=5 SKIP_BUILD=1 scripts/bench-netty.sh
#   CASES="lat8 stream" scripts/bench-netty.sh
#
# Environment: CASES (default "lat8 stream msg8 msg8f"), and everything scripts/demo.sh reads
# (RUNS, SERVER_CPU, CLIENT_CPU, SKIP_BUILD, LOG_DIR, JAVA_OPTS, STEP_TIMEOUT).
set -euo pipefail
SECTIONS=netty NETTY_CASES="${CASES:-lat8 stream msg8 msg8f}" exec "$(dirname "${BASH_SOURCE[0]}")/demo.sh"
