#!/usr/bin/env bash
# The I/O shapes of NIO frameworks and brokers side by side (issue 39): "hadronio patterns" as plain NIO
# programs, once on the JDK's provider (DISABLE_HADRONIO=true) and once on hadroNIO, in interleaved
# rounds (JDK first in odd rounds), pinned with taskset; prints one table of medians over the rounds.
#
#   handoff  8-byte request/response: the caller's thread queues the write and wakes the I/O thread's
#            selector, the I/O thread hands the answer back through a queue (p50/p99 round trip)
#   dispatch the same client against a server whose I/O thread hands each request to an application
#            thread, which queues the answer and wakes the selector (both JVMs: two threads on one core)
#   bulk     SESSIONS sessions x BULK_BYTES of CHUNK-byte writes queued by an application thread,
#            flushed by the I/O thread, echoed (MB/s echoed)
#   wakeup   wakeup() -> select() returning, from the selector's own thread and from another thread
#            WAKEUP_DELAYS µs after the selector entered select() (spinning, asleep); one JVM on
#            WAKEUP_CPUS, then one on core SERVER_CPU alone (p50/p99)
#   connections  connections opened one after another, each used for REQUESTS blocking 64-byte round
#            trips through the echo server and closed (connections/s, round trip and lifetime p50/p99)
#   fetch    a FILE_BYTES file on /dev/shm served with FileChannel.transferTo into the accepted
#            channel, the client reads and checks it (MB/s)
#   upload   the client sends FILE_BYTES, the server stores them with FileChannel.transferFrom (MB/s)
#
# fetch and upload also run as "hadronio server, JDK client" (hadronio-tcp): the server's channel is
# then a hadroNIO channel on kernel TCP, the kernel path; with BASELINE_JAR, the baseline's server too
# (before-tcp).
#
#   SKIP_BUILD=1 scripts/bench-patterns.sh                       # 3 rounds of everything, ~13 min
#   RUNS=5 PATTERNS="fetch upload" SKIP_BUILD=1 scripts/bench-patterns.sh
#
# Environment:
#   RUNS           interleaved rounds (default 3; medians of the rounds that succeeded)
#   PATTERNS       which (default "handoff dispatch bulk wakeup connections fetch upload")
#   WARMUP         unmeasured seconds (handoff, bulk, wakeup, connections; default 5)
#   DURATION       measured seconds (handoff, connections; wakeup: each case; default 5)
#   REQUESTS       connections: round trips per connection (default 100)
#   SESSIONS, BULK_BYTES, CHUNK   bulk: sessions, bytes per session and pass, bytes per write
#                  (default 4, 134217728, 65536); 3 measured passes
#   FILE_BYTES     fetch/upload size (default 1073741824)
#   FILE_WARMUP_PASSES / FILE_PASSES   fetch/upload: unmeasured and measured transfers (default 2 / 3;
#                  small files need many, e.g. FILE_BYTES=1048576 FILE_WARMUP_PASSES=2000 FILE_PASSES=2000)
#   FILE           the served file (default /dev/shm/hadronio-patterns.dat, written once, removed at the end)
#   WAKEUP_DELAYS  default 10,2000; WAKEUP_CPUS default 0-1
#   SERVER_CPU / CLIENT_CPU   default 0 / 1
#   BASELINE_JAR   another hadronio-app.jar, run as provider "before" in every round
#   RUN_TIMEOUT    seconds a JVM may take (default 180)
#   SKIP_BUILD     1: use the jars already built
#   LOG_DIR        default docs/results/raw/patterns-<time>
#   JAVA_OPTS      extra JVM options for every JVM
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh"

RUNS="${RUNS:-3}"
PATTERNS="${PATTERNS:-handoff dispatch bulk wakeup connections fetch upload}"
WARMUP="${WARMUP:-5}"
DURATION="${DURATION:-5}"
REQUESTS="${REQUESTS:-100}"
SESSIONS="${SESSIONS:-4}"
BULK_BYTES="${BULK_BYTES:-134217728}"
CHUNK="${CHUNK:-65536}"
FILE_BYTES="${FILE_BYTES:-1073741824}"
FILE_WARMUP_PASSES="${FILE_WARMUP_PASSES:-2}"
FILE_PASSES="${FILE_PASSES:-3}"
FILE="${FILE:-/dev/shm/hadronio-patterns.dat}"
WAKEUP_DELAYS="${WAKEUP_DELAYS:-10,2000}"
WAKEUP_CPUS="${WAKEUP_CPUS:-0-1}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
BASELINE_JAR="${BASELINE_JAR:-}"
RUN_TIMEOUT="${RUN_TIMEOUT:-180}"
SKIP_BUILD="${SKIP_BUILD:-0}"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/patterns-$(date +%Y%m%d-%H%M%S)}"
JAVA_OPTS="${JAVA_OPTS:-}"
APP_JAR="${APP_JAR:-$HADRONIO_ROOT/app/target/hadronio-app.jar}"

die() { echo "bench-patterns: $*" >&2; exit 1; }
note() { echo "bench-patterns: $*" >&2; }

trap 'stop_all; rm -f "$FILE" "$FILE.upload"' EXIT
trap 'echo "bench-patterns: interrupted" >&2; exit 130' INT TERM



# run PATTERN VARIANT TAG: one measurement; sets STATUS, LINES. VARIANT: jdk, hadronio, before, or
# hadronio-tcp (hadroNIO server, JDK client)
run() {
  local pattern="$1" variant="$2" tag="$3" sp cp server_pattern port="" i rc log="$LOG_DIR/$3.log"
  STATUS=failed LINES=""
  sp="$variant" cp="$variant"
  [ "$variant" = hadronio-tcp ] && sp=hadronio cp=jdk
  [ "$variant" = before-tcp ] && sp=before cp=jdk
  if [ "$pattern" = wakeup ]; then
    java_bg "$cp" "$WAKEUP_CPUS" "$log" patterns --pattern wakeup --warmup "$WARMUP" -d "$DURATION" --delays "$WAKEUP_DELAYS"
    rc=0; wait "$PID" || rc=$?
    LINES="$(sed -n 's/^RESULT /cpus=2 /p' "$log")"
    java_bg "$cp" "$SERVER_CPU" "$log.1" patterns --pattern wakeup --warmup "$WARMUP" -d "$DURATION" --delays "$WAKEUP_DELAYS"
    wait "$PID" || rc=$?
    LINES+=$'\n'"$(sed -n 's/^RESULT /cpus=1 /p' "$log.1")"
    PIDS=()
    [ "$rc" = 0 ] && ! grep -q 'failures=[1-9]' <<<"$LINES" && STATUS=ok
    return 0
  fi
  local client_pattern="$pattern"
  case "$pattern" in
    handoff | bulk | connections) server_pattern=echo ;;
    dispatch) server_pattern=dispatch client_pattern=handoff ;;
    *) server_pattern=file ;;
  esac
  java_bg "$sp" "$SERVER_CPU" "$log.server" patterns -s --pattern "$server_pattern" -a 127.0.0.1:0 \
    --file "$FILE" --bytes "$FILE_BYTES"
  local server=$PID
  for ((i = 0; i < 120 * 20; i++)); do
    port="$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$log.server" | head -n1 || true)"
    [ -n "$port" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    note "$tag: the server did not listen ($log.server)"
    stop_all
    return 0
  fi
  local args=(--warmup "$WARMUP" -d "$DURATION")
  case "$pattern" in
    bulk) args+=(--sessions "$SESSIONS" --bytes "$BULK_BYTES" --chunk "$CHUNK") ;;
    connections) args+=(--requests "$REQUESTS") ;;
    fetch | upload) args=(--bytes "$FILE_BYTES" --warmup-passes "$FILE_WARMUP_PASSES" --passes "$FILE_PASSES") ;;
  esac
  java_bg "$cp" "$CLIENT_CPU" "$log" patterns -r "127.0.0.1:$port" --pattern "$client_pattern" "${args[@]}"
  rc=0; wait "$PID" || rc=$?
  LINES="$(grep '^RESULT ' "$log" || true)"
  stop_all
  if [ "$rc" = 0 ] && [ -n "$LINES" ] && [ "$(field "$LINES" failures)" = 0 ]; then
    STATUS=ok
  else
    note "$tag failed (exit $rc, $log)"
  fi
}

# figures PATTERN: key|what|line filter (grep -E)|field
figures() {
  case "$1" in
    handoff | dispatch) echo "rt|round trips/s|pattern=handoff|per_s
p50|round trip p50 µs|pattern=handoff|p50_us
p99|round trip p99 µs|pattern=handoff|p99_us" ;;
    connections) echo "cps|connections/s, $REQUESTS round trips each|pattern=connections|conn_per_s
p50|round trip p50 µs|pattern=connections|p50_us
p99|round trip p99 µs|pattern=connections|p99_us
p999|round trip p99.9 µs|pattern=connections|p999_us
life|connection's life p99 µs|pattern=connections|life_p99_us" ;;
    bulk) echo "mbs|MB/s echoed, $SESSIONS sessions x $BULK_BYTES B in $CHUNK-B writes|pattern=bulk|mb_per_s" ;;
    wakeup)
      local c d
      for c in 2 1; do
        echo "s$c-p50|$c core(s): from its own thread, p50 µs|^cpus=$c .*from=self|p50_us"
        echo "s$c-p99|$c core(s): from its own thread, p99 µs|^cpus=$c .*from=self|p99_us"
        for d in ${WAKEUP_DELAYS//,/ }; do
          echo "o$c-$d-p50|$c core(s): from another thread $d µs after select(), p50 µs|^cpus=$c .*from=other delay_us=$d |p50_us"
          echo "o$c-$d-p99|$c core(s): from another thread $d µs after select(), p99 µs|^cpus=$c .*from=other delay_us=$d |p99_us"
        done
      done ;;
    fetch) echo "mbs|MB/s, $FILE_BYTES B file with transferTo|pattern=fetch|mb_per_s" ;;
    upload) echo "mbs|MB/s, $FILE_BYTES B with transferFrom|pattern=upload|mb_per_s" ;;
  esac
}

variants() {
  local v="jdk hadronio${BASELINE_JAR:+ before}"
  case "$1" in fetch | upload) v+=" hadronio-tcp${BASELINE_JAR:+ before-tcp}" ;; esac
  echo "$v"
}

declare -A V T
record() {
  local pattern="$1" variant="$2" key what filter fld v
  while IFS='|' read -r key what filter fld; do
    v=""
    if [ "$STATUS" = ok ]; then
      v="$( (grep -E -- "$filter" <<<"$LINES" || true) | head -n1)"
      v="$(field "$v" "$fld")"
    fi
    V[$pattern:$key:$variant]+=" ${v:-x}"
  done < <(figures "$pattern")
  [ "$STATUS" = ok ] && T[$pattern:$variant]="$(field "$(head -n1 <<<"$LINES")" transport)"
  return 0
}

print_table() {
  local pattern key what filter fld v vs header sep
  echo
  echo "hadronio patterns side by side on 127.0.0.1, $(nproc) cores; server on core $SERVER_CPU, client on core $CLIENT_CPU"
  echo "medians of $RUNS interleaved rounds (JDK first in odd rounds); hadronio-tcp (before-tcp): hadroNIO's (the baseline's) server, JDK client (kernel TCP)"
  for pattern in $PATTERNS; do
    vs="$(variants "$pattern")"
    echo
    header="| $pattern | JDK"; sep="|---|---:"
    for v in $vs; do [ "$v" = jdk ] || { header+=" | $v | $v/JDK"; sep+="|---:|---:"; }; done
    echo "$header | rounds (${vs// /; }) |"
    echo "$sep|---|"
    while IFS='|' read -r key what filter fld; do
      local j line rounds=""
      j="$(median <<<"${V[$pattern:$key:jdk]//x/}")"
      line="| $what | $(fmt "$j")"
      for v in $vs; do
        rounds+="${rounds:+; }$(sed 's/^ //; s/ /, /g' <<<"${V[$pattern:$key:$v]}")"
        [ "$v" = jdk ] && continue
        local m
        m="$(median <<<"${V[$pattern:$key:$v]//x/}")"
        line+=" | $(fmt "$m") | $(awk -v a="$m" -v b="$j" 'BEGIN {print (a == "-" || b == "-" || b == 0) ? "-" : sprintf("%.2f×", a / b)}')"
      done
      echo "$line | $rounds |"
    done < <(figures "$pattern")
    local t=""
    for v in $vs; do t+="${t:+, }$v: ${T[$pattern:$v]:--}"; done
    [ "$pattern" = wakeup ] || echo "transport: $t"
  done
  echo
  echo "×: variant/JDK; above 1 is ahead for MB/s and round trips/s, behind for µs. x: a failed run."
}

fmt() { awk -v x="$1" 'BEGIN {if (x == "-") print "-"; else if (x >= 100) printf "%.0f", x; else printf "%.2f", x}'; }

main() {
  hadronio_setup
  cd "$HADRONIO_ROOT"
  command -v taskset >/dev/null || die "taskset (util-linux) is needed"
  local p
  for p in $PATTERNS; do [[ "$p" =~ ^(handoff|dispatch|bulk|wakeup|connections|fetch|upload)$ ]] || die "unknown pattern '$p'"; done
  if [ "$SKIP_BUILD" != 1 ]; then
    note "building (./mvnw -B -ntp -q package -DskipTests) ..."
    ./mvnw -B -ntp -q package -DskipTests || die "build failed"
  fi
  [ -f "$APP_JAR" ] || die "$APP_JAR missing; build first"
  mkdir -p "$LOG_DIR"
  local commit load0 round order v
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo '+dirty')"
  note "commit $commit, logs in $LOG_DIR"
  START=$SECONDS
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  for ((round = 1; round <= RUNS; round++)); do
    for p in $PATTERNS; do
      order="$(variants "$p")"
      [ $((round % 2)) = 1 ] || order="$(tr ' ' '\n' <<<"$order" | tac | tr '\n' ' ')"
      for v in $order; do
        run "$p" "$v" "r$round-$p-$v"
        { echo "round=$round pattern=$p variant=$v status=$STATUS load=$(cut -d' ' -f1 /proc/loadavg)"
          [ -z "$LINES" ] || sed 's/^/  /' <<<"$LINES"; } >>"$LOG_DIR/results.txt"
        record "$p" "$v"
      done
    done
    note "round $round/$RUNS done ($((SECONDS - START)) s)"
  done
  {
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $("$JAVA_HOME/bin/java" -version 2>&1 | head -n1)"
    print_table
    echo "load average (1/5/15 min) before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg); $((SECONDS - START)) s"
  } | tee -a "$LOG_DIR/table.md"
}

main "$@"
