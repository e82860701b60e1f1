#!/usr/bin/env bash
# The 8-byte round trip's tails (issue 10, "No tails"): blocking NIO and Netty, side by side on hadroNIO
# and on the JDK's provider, two pinned processes, in the steady state: p50, p99, p99.9 and the mean, medians
# of interleaved rounds, and the two checks (hadroNIO's p99 at most the JDK's p50; its mean within 1.5x its
# p50). It is the "tail8" case of scripts/demo.sh's blocking and netty sections (message counts there).
# Results are recorded in docs/benchmarks/netty.md.
#
#   scripts/bench-tails.sh                    # 3 rounds, ~4 minutes
#   RUNS=5 SKIP_BUILD=1 scripts/bench-tails.sh
#
# Environment: everything scripts/demo.sh reads (RUNS, SERVER_CPU, CLIENT_CPU, SKIP_BUILD, LOG_DIR, JAVA_OPTS).
set -euo pipefail
SECTIONS="blocking netty" BLOCKING_CASES=tail8 NETTY_CASES=tail8 exec "$(dirname "${BASH_SOURCE[0]}")/demo.sh"
