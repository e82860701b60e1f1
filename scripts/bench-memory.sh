#!/usr/bin/env bash
# Resident memory of the hadronio application's processes, side by side: the JDK's provider, a git
# revision's build of hadroNIO (A) and the working tree's (B), pinned as the demo pins them (server on
# core 0, client on core 1), interleaved over RUNS rounds (the order of the three sides rotates). Per
# case and process, the table gives medians over the rounds of
#   VmRSS  the last sample of /proc/PID/status (every 0.2 s) before the client exited: after warm-up
#          and the measured part, so the memory of a process that is doing its work;
#   VmHWM  the peak, printed by the process itself at exit (RESOURCES line, HADRONIO_APP_RESOURCES);
# and, with BREAKDOWN=1, where the last sample's VmRSS lies (scripts/smaps-groups.sh: Java heap, other
# anonymous memory, UCX's shared memory and libraries, the JVM's files, huge pages).
# Results are recorded in docs/benchmarks/memory.md.
#
#   scripts/bench-memory.sh 3734dc8                  # 3 rounds of blocking, netty and idle1000
#   RUNS=5 CASES="idle1000" scripts/bench-memory.sh main
#
# Cases:
#   blocking   one connection, "blocking benchmark latency -l 8" (8-byte round trips)
#   netty      one connection, "netty benchmark latency -l 8"
#   stream     one connection, "blocking benchmark throughput -l 65536" (64 KiB streaming)
#   idle1000   1,000 connections from one client (one Selector) to the Selector echo server
#              ("load --mode nonblocking -c 1000 --rate 1000": each connection sends a 64-byte request
#              about once a second after a closed-loop warm-up), every one of them on UCX: hadroNIO's
#              processes run with -Dhadronio.upgrade.writes=1, so each connection moves at its second
#              write (with the default 128 writes, how many moved depended on the warm-up's pace)
#
# Environment:
#   RUNS        rounds (default 3)
#   CASES       any of blocking netty stream idle1000 (default "blocking netty idle1000")
#   SERVER_CPU / CLIENT_CPU   cores (default 0 / 1)
#   JAVA_OPTS   extra JVM options for every process (all three sides)
#   BREAKDOWN   1: also the breakdown of the last sample, one table per case and process
#   LOG_DIR     every process's output (default docs/results/raw/memory-<time>, not committed)
# The revision's jar is the one scripts/bench-ab.sh builds ($TMPDIR/hadronio-ab-<rev>); it is built the
# same way when it is missing, and never rebuilt. The working tree's jar must be built already
# (./mvnw -q package -DskipTests).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
hadronio_setup
cd "$HADRONIO_ROOT"

[ $# -eq 1 ] || { echo "usage: scripts/bench-memory.sh REVISION" >&2; exit 2; }
REV="$1"
RUNS="${RUNS:-3}"
CASES="${CASES:-blocking netty idle1000}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
JAVA_OPTS="${JAVA_OPTS:-}"
BREAKDOWN="${BREAKDOWN:-0}"
GROUPS_OF="$HADRONIO_ROOT/scripts/smaps-groups.sh"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/memory-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$LOG_DIR"
BASE_DIR="${TMPDIR:-/tmp}/hadronio-ab-$(git rev-parse --short "$REV")"

die() { echo "bench-memory: $*" >&2; exit 1; }

if [ ! -f "$BASE_DIR/app/target/hadronio-app.jar" ]; then
  [ -e "$BASE_DIR" ] && die "$BASE_DIR exists without a built jar: build it there, or remove it"
  git worktree add --detach -f "$BASE_DIR" "$REV" >/dev/null 2>&1 || die "cannot check out $REV"
  (cd "$BASE_DIR" && ./mvnw -B -ntp -q package -DskipTests) || die "the build of $REV failed"
fi
[ -f app/target/hadronio-app.jar ] || die "build the working tree first (./mvnw -q package -DskipTests)"
declare -A JAR=([jdk]="$HADRONIO_ROOT/app/target/hadronio-app.jar" [A]="$BASE_DIR/app/target/hadronio-app.jar"
  [B]="$HADRONIO_ROOT/app/target/hadronio-app.jar")

# case_of CASE -> "SERVER_ARGS|CLIENT_ARGS": the same work on every side (the JDK's round trips are slower, so
# its runs take longer; what a run allocates depends on the work, not on the time)
case_of() {
  case "$1" in
    blocking) echo "blocking benchmark latency -s|blocking benchmark latency -l 8 -m 40000 -t 10000" ;;
    netty)    echo "netty benchmark latency -s|netty benchmark latency -l 8 -m 40000 -t 10000" ;;
    stream)   echo "blocking benchmark throughput -s|blocking benchmark throughput -l 65536 -m 100000 -t 20000" ;;
    idle1000) echo "load -s --mode nonblocking|load -c 1000 --rate 1000 -l 64 --warmup 4 --duration 3" ;;
    *) return 1 ;;
  esac
}
for c in $CASES; do case_of "$c" >/dev/null || die "unknown case $c"; done

kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status" 2>/dev/null || true; }

SPID=""
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null || true' EXIT

# sample PID RANGE: the process's VmRSS, or with BREAKDOWN=1 its smaps groups (RANGE: the heap's, from
# smaps-groups.sh -r); nothing once it is gone
sample() {
  if [ "$BREAKDOWN" = 1 ] && [ -n "$2" ]; then
    HEAP_RANGE="$2" "$GROUPS_OF" "$1" 2>/dev/null | sed -n 's/^total=\([0-9]*\) /\1 /p'
  else
    # no breakdown, or not yet the heap's range (a process that ends within a second has none)
    kb "$1" VmRSS
  fi
}

# groups_in SAMPLE: the "group=KiB ..." part of a breakdown sample (nothing for a plain VmRSS one)
groups_in() { case "$1" in *" "*) echo "${1#* }" ;; esac; }

# pair TAG SIDE CASE: runs one server/client pair; prints "SERVER_RSS SERVER_HWM CLIENT_RSS CLIENT_HWM" (KiB),
# with BREAKDOWN=1 followed by "|SERVER_GROUPS|CLIENT_GROUPS" (group=KiB ...)
pair() {
  local tag="$1" side="$2" c="$3" spec port i cpid srss="" crss="" r srange="" crange=""
  spec="$(case_of "$c")"
  local slog="$LOG_DIR/$tag-server.log" clog="$LOG_DIR/$tag-client.log"
  : >"$slog"
  local env=(HADRONIO_APP_RESOURCES=true) opts="$JAVA_OPTS"
  [ "$side" = jdk ] && env+=(DISABLE_HADRONIO=true)
  # the idle connections are UCX's: every one moves, not only those the warm-up took past 128 writes
  [ "$c" = idle1000 ] && [ "$side" != jdk ] && opts="-Dhadronio.upgrade.writes=1 $opts"
  # shellcheck disable=SC2086
  env "${env[@]}" taskset -c "$SERVER_CPU" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED $opts \
    -jar "${JAR[$side]}" ${spec%%|*} -a 127.0.0.1:0 >"$slog" 2>&1 &
  SPID=$!
  port=""
  for ((i = 0; i < 1200; i++)); do
    port="$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -n1)"
    [ -n "$port" ] && break
    kill -0 "$SPID" 2>/dev/null || die "$tag: the server exited ($slog)"
    sleep 0.05
  done
  [ -n "$port" ] || die "$tag: the server did not listen within 60 s ($slog)"
  # shellcheck disable=SC2086
  env "${env[@]}" taskset -c "$CLIENT_CPU" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
    $opts -jar "${JAR[$side]}" ${spec#*|} -r "127.0.0.1:$port" >"$clog" 2>&1 &
  cpid=$! # env and taskset exec: this is the JVM's pid
  for ((i = 0; i < 900; i++)); do
    kill -0 "$cpid" 2>/dev/null || break
    if [ "$BREAKDOWN" = 1 ] && [ -z "$crange" ] && ((i >= 2)); then
      crange="$("$GROUPS_OF" -r "$cpid" 2>/dev/null || true)"; srange="$("$GROUPS_OF" -r "$SPID" 2>/dev/null || true)"
    fi
    # a sample of a process that exited while it was read is empty or all zeros: the last good one stays
    r="$(sample "$cpid" "$crange")"; [ -n "$r" ] && [ "${r%% *}" != 0 ] && crss="$r"
    r="$(sample "$SPID" "$srange")"; [ -n "$r" ] && [ "${r%% *}" != 0 ] && srss="$r"
    sleep 0.2
  done
  kill -0 "$cpid" 2>/dev/null && { kill "$cpid"; die "$tag: the client took longer than 180 s ($clog)"; }
  wait "$cpid" || die "$tag: the client failed ($clog)"
  # the load server serves until it is told to stop; the others exit after their client
  [ "$c" = idle1000 ] && kill "$SPID" 2>/dev/null
  wait "$SPID" || true
  SPID=""
  grep -q '^RESULT ' "$clog" || die "$tag: the client printed no RESULT line ($clog)"
  [ "$side" != jdk ] && grep -q 'transports=kernel-tcp' "$clog" && die "$tag: hadroNIO's run ended on kernel TCP ($clog)"
  # a process never sampled (it ended within the first sample's 0.2 s) is "-", left out of the medians
  srss="${srss:--}"; crss="${crss:--}"
  echo "${srss%% *} $(sed -n 's/^RESOURCES peak_rss_kb=\([0-9]*\).*/\1/p' "$slog") ${crss%% *}" \
    "$(sed -n 's/^RESOURCES peak_rss_kb=\([0-9]*\).*/\1/p' "$clog")$([ "$BREAKDOWN" = 1 ] && echo "|$(groups_in "$srss")|$(groups_in "$crss")")"
}

declare -A V
SIDES=(jdk A B)
for ((round = 1; round <= RUNS; round++)); do
  for c in $CASES; do
    for ((k = 0; k < 3; k++)); do
      side="${SIDES[$(((k + round - 1) % 3))]}"
      out="$(pair "r$round-$c-$side" "$side" "$c")"
      read -r srss shwm crss chwm <<<"${out%%|*}"
      echo "round=$round case=$c side=$side server_rss_kb=$srss server_hwm_kb=$shwm client_rss_kb=$crss client_hwm_kb=$chwm" \
        >>"$LOG_DIR/results.txt"
      if [ "$BREAKDOWN" = 1 ]; then
        rest="${out#*|}"
        for kv in ${rest%%|*}; do V[$c:server:g:${kv%%=*}:$side]+=" ${kv#*=} "; done
        for kv in ${rest#*|}; do V[$c:client:g:${kv%%=*}:$side]+=" ${kv#*=} "; done
        echo "round=$round case=$c side=$side server: ${rest%%|*}; client: ${rest#*|}" >>"$LOG_DIR/results.txt"
      fi
      V[$c:server:rss:$side]+=" $srss "; V[$c:server:hwm:$side]+=" $shwm "
      V[$c:client:rss:$side]+=" $crss "; V[$c:client:hwm:$side]+=" $chwm "
    done
  done
  echo "bench-memory: round $round/$RUNS done" >&2
done

median() { tr ' ' '\n' <<<"$1" | grep -E '^[0-9.]+$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

echo
echo "JDK = the JDK's provider (DISABLE_HADRONIO=true), A = $REV ($(git rev-parse --short "$REV")), B = the working tree" \
  "($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', with changes')); MiB, medians of $RUNS interleaved rounds"
echo
echo "| case | process | figure | JDK | A | B | A / JDK | B / JDK |"
echo "|---|---|---|--:|--:|--:|--:|--:|"
for c in $CASES; do
  for p in server client; do
    for f in rss hwm; do
      j="$(median "${V[$c:$p:$f:jdk]}")"; a="$(median "${V[$c:$p:$f:A]}")"; b="$(median "${V[$c:$p:$f:B]}")"
      [ "$f" = rss ] && name=VmRSS || name=VmHWM
      echo "| $c | $p | $name | $(mib "$j") | $(mib "$a") | $(mib "$b") | $(ratio "$a" "$j") | $(ratio "$b" "$j") |"
    done
  done
done
if [ "$BREAKDOWN" = 1 ]; then
  for c in $CASES; do
    for p in server client; do
      echo
      echo "$c, $p: where the last sample's resident memory lies (MiB, medians; scripts/smaps-groups.sh)"
      echo
      echo "| group | JDK | A | B | B - JDK |"
      echo "|---|--:|--:|--:|--:|"
      for g in java_heap anon anon_huge sysv posix libucx jvm_files other_files; do
        j="$(median "${V[$c:$p:g:$g:jdk]:-}")"; a="$(median "${V[$c:$p:g:$g:A]:-}")"; b="$(median "${V[$c:$p:g:$g:B]:-}")"
        echo "| $g | $(mib "$j") | $(mib "$a") | $(mib "$b") | $(awk -v a="$b" -v b="$j" 'BEGIN {printf "%+.1f", (a - b) / 1024}') |"
      done
    done
  done
fi
echo
echo "raw output: $LOG_DIR"
