#!/usr/bin/env bash
# Two builds of hadroNIO side by side, interleaved: the working tree's (B) against a git revision's
# (A, built in a temporary worktree), both on hadroNIO, on the same cases of the hadronio
# application, pinned as the demo pins them (server on core 0, client on core 1). Each round runs
# every case on A and B, the order alternating between rounds; the table gives medians over the
# rounds and B / A (above 1: B is better, for round trips too).
#
#   scripts/bench-ab.sh main                      # this tree against main, 5 rounds
#   RUNS=7 CASES="blocking:lat8 netty:lat8" scripts/bench-ab.sh HEAD~3
#
# Environment:
#   RUNS        rounds (default 5)
#   CASES       any of blocking:lat8 blocking:stream netty:lat8 netty:stream (default these four), and
#               blocking:lat1m blocking:stream1m (1 MiB round trip and streaming: what huge pages change)
#   SERVER_CPU / CLIENT_CPU   cores (default 0 / 1)
#   SKIP_BUILD  1: use the jars already built (this tree's app/target, and the revision's if present)
#   LOG_DIR     every process's output (default docs/results/raw/ab-<time>, not committed)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
hadronio_setup
cd "$HADRONIO_ROOT"

[ $# -eq 1 ] || { echo "usage: scripts/bench-ab.sh REVISION" >&2; exit 2; }
REV="$1"
RUNS="${RUNS:-5}"
CASES="${CASES:-blocking:lat8 blocking:stream netty:lat8 netty:stream}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/ab-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$LOG_DIR"
BASE_DIR="${TMPDIR:-/tmp}/hadronio-ab-$(git rev-parse --short "$REV")"

die() { echo "bench-ab: $*" >&2; exit 1; }

# ---- the two builds ----------------------------------------------------------------------------
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -f "$BASE_DIR/app/target/hadronio-app.jar" ]; then
  rm -rf "$BASE_DIR"
  git worktree add --detach -f "$BASE_DIR" "$REV" >/dev/null 2>&1 || die "cannot check out $REV"
  (cd "$BASE_DIR" && ./mvnw -B -ntp -q package -DskipTests) || die "the build of $REV failed"
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  ./mvnw -B -ntp -q package -DskipTests || die "the build of the working tree failed"
fi
declare -A JAR=([A]="$BASE_DIR/app/target/hadronio-app.jar" [B]="$HADRONIO_ROOT/app/target/hadronio-app.jar")

# ---- one pair ----------------------------------------------------------------------------------
BG=""
trap '[ -n "$BG" ] && kill "$BG" 2>/dev/null || true' EXIT

# pair TAG JAR GROUP SUB ARGS...: the server pinned to SERVER_CPU, the client to CLIENT_CPU; prints
# the client's RESULT line
pair() {
  local tag="$1" jar="$2" group="$3" sub="$4" port i
  shift 4
  local slog="$LOG_DIR/$tag-server.log" clog="$LOG_DIR/$tag-client.log"
  taskset -c "$SERVER_CPU" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar "$jar" \
    "$group" benchmark "$sub" -s -a 127.0.0.1:0 >"$slog" 2>&1 &
  BG=$!
  port=""
  for ((i = 0; i < 1200; i++)); do
    port="$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -n1)"
    [ -n "$port" ] && break
    kill -0 "$BG" 2>/dev/null || die "$tag: the server exited ($slog)"
    sleep 0.05
  done
  [ -n "$port" ] || die "$tag: the server did not listen within 60 s ($slog)"
  timeout 180 taskset -c "$CLIENT_CPU" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar "$jar" \
    "$group" benchmark "$sub" -r "127.0.0.1:$port" "$@" >"$clog" 2>&1 || die "$tag: the client failed ($clog)"
  wait "$BG" || true
  BG=""
  grep '^RESULT ' "$clog" | tail -n1
}

field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

# case GROUP:CASE -> "SUB METRIC HIGHER_IS_BETTER ARGS..."
case_of() {
  case "$1" in
    blocking:lat8)   echo "latency p50_us 0 -l 8 -m 50000 -t 50000" ;;
    blocking:stream) echo "throughput mb_per_s 1 -l 65536 -m 50000 -t 20000" ;;
    netty:lat8)      echo "latency p50_us 0 -l 8 -m 50000 -t 50000" ;;
    netty:stream)    echo "throughput mb_per_s 1 -l 65536 -m 200000 -t 20000" ;;
    blocking:lat1m)  echo "latency p50_us 0 -l 1048576 -m 3000 -t 1000" ;;
    blocking:stream1m) echo "throughput mb_per_s 1 -l 1048576 -m 6000 -t 1000" ;;
    *) return 1 ;;
  esac
}
for c in $CASES; do case_of "$c" >/dev/null || die "unknown case $c"; done

declare -A V
for ((round = 1; round <= RUNS; round++)); do
  if ((round % 2)); then order="A B"; else order="B A"; fi
  for c in $CASES; do
    read -r sub metric _ args <<<"$(case_of "$c")"
    for side in $order; do
      # shellcheck disable=SC2086
      line="$(pair "r$round-${c/:/-}-$side" "${JAR[$side]}" "${c%%:*}" "$sub" $args)"
      echo "round=$round case=$c side=$side $line" >>"$LOG_DIR/results.txt"
      V[$c:$side]+=" $(field "$line" "$metric") "
      [ "$metric" = p50_us ] && V[$c:$side:avg]+=" $(field "$line" avg_us) "
      [ "$(field "$line" transports)" = kernel-tcp ] && die "$c on $side ran on kernel-tcp: hadroNIO was not in use"
    done
  done
  echo "bench-ab: round $round/$RUNS done" >&2
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

echo
echo "A = $REV ($(git rev-parse --short "$REV")), B = the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', with changes')); medians of $RUNS interleaved rounds"
echo
echo "| case | figure | A | B | B / A (above 1: B better) |"
echo "|---|---|--:|--:|--:|"
for c in $CASES; do
  read -r sub metric higher _ <<<"$(case_of "$c")"
  a="$(median "${V[$c:A]}")"; b="$(median "${V[$c:B]}")"
  if [ "$higher" = 1 ]; then r="$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b / a}')"
  else r="$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')"; fi
  echo "| $c | $metric | $a | $b | $r |"
  if [ "$metric" = p50_us ]; then
    a="$(median "${V[$c:A:avg]}")"; b="$(median "${V[$c:B:avg]}")"
    echo "| $c | avg_us | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}') |"
  fi
done
echo
echo "raw output: $LOG_DIR"
