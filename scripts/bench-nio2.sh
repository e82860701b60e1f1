#!/usr/bin/env bash
# NIO.2 on hadroNIO against NIO.2 on the JDK's provider (docs/nio2.md): the `hadronio nio2
# benchmark` cases of scripts/demo.sh's nio2 section, pinned (server core 0, client core 1),
# providers interleaved, medians of RUNS rounds.
#   scripts/bench-nio2.sh                                  # cases lat8 tail8 stream
#   RUNS=5 SKIP_BUILD=1 CASES="lat8 stream" scripts/bench-nio2.sh
set -euo pipefail
SECTIONS=nio2 NIO2_CASES="${CASES:-lat8 tail8 stream}" exec "$(dirname "${BASH_SOURCE[0]}")/demo.sh"
