#!/usr/bin/env bash
# Connection set-up side by side: "hadronio blocking benchmark connection" (each client thread
# repeatedly opens a SocketChannel, connects, writes 8 bytes, reads 8 bytes, closes) for every
# server/client provider pair, on 127.0.0.1, server and client pinned to one core each, in
# interleaved rounds; prints one table of medians. A pair that fails (error, wrong provider, or
# longer than RUN_TIMEOUT) is reported as failed with its reason and the run goes on.
# Results are recorded in docs/benchmarks/connections.md.
#
#   scripts/bench-connections.sh                       # 5 rounds, 4 pairs, 1 and 8 clients: ~6 minutes
#   RUNS=3 CLIENTS=8 SKIP_BUILD=1 scripts/bench-connections.sh
#   PAIRS="jdk/jdk hadronio/hadronio" scripts/bench-connections.sh
#   PAIRS="jdk/jdk hadronio/hadronio" JAVA_OPTS=-Dhadronio.upgrade=false scripts/bench-connections.sh
#                                                  # the eager mode (handshake before connect returns)
#
# Environment:
#   RUNS        interleaved rounds (default 5; the table shows medians of the rounds that succeeded)
#   PAIRS       SERVER/CLIENT provider pairs, each jdk or hadronio
#               (default "jdk/jdk hadronio/hadronio hadronio/jdk jdk/hadronio")
#   CLIENTS     client thread counts to run each pair with (default "1 8")
#   WARMUP      warm-up seconds per run (default 5: after 1 s hadroNIO's connect and accept paths were
#               still being compiled on the pinned cores, 13-14k connections/s with one client against
#               16.5-17k after 5 s, while the JDK's stayed at 13.3-14.1k either way; connections.md)
#   DURATION    measured seconds per run (default 2)
#   RUN_TIMEOUT seconds a client may take, and a server may take to start listening, before the run
#               counts as failed (default 60)
#   SERVER_CPU / CLIENT_CPU   cores the two processes are pinned to (default 0 / 1)
#   SKIP_BUILD  1: use the jars already built
#   LOG_DIR     where every process's output is kept (default docs/results/raw/connections-<time>)
#   JAVA_OPTS   extra JVM options for both sides
#   STRICT      1: exit 1 when any run failed (default: report failures, exit 0)
#
# A JVM runs on the JDK's provider with DISABLE_HADRONIO=true, as in scripts/demo.sh: the app then
# does not name hadroNIO as the SelectorProvider. Both sides run the same code.
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

RUNS="${RUNS:-5}"
PAIRS="${PAIRS:-jdk/jdk hadronio/hadronio hadronio/jdk jdk/hadronio}"
CLIENTS="${CLIENTS:-1 8}"
WARMUP="${WARMUP:-5}"
DURATION="${DURATION:-2}"
RUN_TIMEOUT="${RUN_TIMEOUT:-60}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
SKIP_BUILD="${SKIP_BUILD:-0}"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/connections-$(date +%Y%m%d-%H%M%S)}"
JAVA_OPTS="${JAVA_OPTS:-}"
STRICT="${STRICT:-0}"
APP_JAR="$HADRONIO_ROOT/app/target/hadronio-app.jar"

die() { echo "bench-connections: $*" >&2; exit 1; }
note() { echo "bench-connections: $*" >&2; }

# ---- the server of a run is tracked and killed on exit ----------------------------------------

SERVER_PID=""
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    # timeout(1) passes the TERM on to the JVM
    kill "$SERVER_PID" 2>/dev/null || true
    sleep 0.3
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}
trap stop_server EXIT
trap 'echo "bench-connections: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
trap 'echo "bench-connections: interrupted" >&2; exit 130' INT TERM

# (awk, not grep: an empty list must not fail the pipeline)
median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# field LINE KEY: the value of KEY=value in a RESULT line
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# first_error LOG: the first line of LOG that names an exception or a server complaint, shortened and
# without port numbers (so that the same failure in several runs is listed once). Complaints: the
# server's own lines, SLF4J's (Netty's) WARN/ERROR records and java.util.logging's WARNING/SEVERE
# ones (hadroNIO logs through System.Logger, printed by java.util.logging by default)
first_error() {
  grep -m1 -E '^(Caused by: )?[A-Za-z0-9_.$]+(Exception|Error)\b|^server: |WARN |ERROR |^WARNING: |^SEVERE: ' "$1" 2>/dev/null \
    | sed -e 's/^\[[^]]*\] //' -e 's/io\.hadronio\.[A-Za-z.]*\.//' -e 's/\(\/[0-9.]*\):[0-9][0-9]*/\1:PORT/g' \
    | cut -c1-160 || true
}

# ---- one run: one server, one client ----------------------------------------------------------

# run_pair SERVER CLIENT THREADS TAG: sets STATUS (ok or failed), REASON and LINE (the client's RESULT line)
run_pair() {
  local sp="$1" cp="$2" threads="$3" tag="$4" port="" i rc
  local slog="$LOG_DIR/$tag-server.log" clog="$LOG_DIR/$tag-client.log"
  local sdis=false cdis=false
  [ "$sp" = jdk ] && sdis=true
  [ "$cp" = jdk ] && cdis=true
  STATUS=failed REASON="" LINE=""
  : >"$slog"
  local server=(taskset -c "$SERVER_CPU" "$JAVA_HOME/bin/java")
  # shellcheck disable=SC2206
  server+=($JAVA_OPTS -jar "$APP_JAR" blocking benchmark connection -s -a 127.0.0.1:0)
  # the server's own time limit is a backstop; it normally exits on the client's stop request
  DISABLE_HADRONIO=$sdis timeout $((2 * RUN_TIMEOUT + 30)) "${server[@]}" >"$slog" 2>&1 &
  SERVER_PID=$!
  for ((i = 0; i < RUN_TIMEOUT * 20; i++)); do
    port="$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -n1)"
    [ -n "$port" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    REASON="server did not listen within $RUN_TIMEOUT s: $(first_error "$slog")"
    stop_server
    return
  fi
  local client=(taskset -c "$CLIENT_CPU" "$JAVA_HOME/bin/java")
  # shellcheck disable=SC2206
  client+=($JAVA_OPTS -jar "$APP_JAR" blocking benchmark connection -r "127.0.0.1:$port"
           --clients "$threads" --warmup-duration "$WARMUP" --duration "$DURATION")
  printf 'server: DISABLE_HADRONIO=%s %s\nclient: DISABLE_HADRONIO=%s %s\n' "$sdis" "${server[*]}" "$cdis" "${client[*]}" \
    >"$LOG_DIR/$tag-command.txt"
  rc=0
  DISABLE_HADRONIO=$cdis timeout "$RUN_TIMEOUT" "${client[@]}" >"$clog" 2>&1 || rc=$?
  if [ "$rc" = 124 ]; then
    REASON="client took longer than $RUN_TIMEOUT s (killed)"
  elif [ "$rc" != 0 ]; then
    REASON="client exit $rc: $(first_error "$clog")"
  fi
  if [ -n "$REASON" ]; then
    local serr; serr="$(first_error "$slog")"
    [ -n "$serr" ] && REASON="$REASON; server log: ${serr#server: }"
    stop_server
    return
  fi
  # the client sent its stop request: the server exits by itself
  for ((i = 0; i < 300; i++)); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    REASON="server did not exit after the client's stop request (killed)"
    stop_server
    return
  fi
  rc=0; wait "$SERVER_PID" || rc=$?
  SERVER_PID=""
  if [ "$rc" != 0 ]; then
    REASON="server exit $rc: $(first_error "$slog")"
    return
  fi
  LINE="$(grep '^RESULT ' "$clog" | tail -n1 || true)"
  if [ -z "$LINE" ]; then
    REASON="client printed no RESULT line"
  elif [ "$(field "$LINE" provider)" != "$cp" ]; then
    REASON="asked for a $cp client, it reports provider=$(field "$LINE" provider)"
  elif [ "$sp/$cp" = hadronio/hadronio ] && [ "$(field "$LINE" transports)" = kernel-tcp ] \
       && [[ "$JAVA_OPTS" == *hadronio.upgrade=false* ]]; then
    # (in the default upgrade mode a connection shorter than hadronio.upgrade.delay stays on
    # kernel TCP by design: that is what the mode measures)
    REASON="hadroNIO on both sides but the connection went over kernel TCP (fallback)"
  else
    STATUS=ok
  fi
}

# ---- rounds -------------------------------------------------------------------------------------

declare -A V_RATE V_P50 V_P99 V_TRANSPORT V_OK V_FAIL V_REASONS

run_rounds() {
  local round k n pairs=($PAIRS) pair threads key tag
  n=${#pairs[@]}
  for ((round = 1; round <= RUNS; round++)); do
    # each round starts with the next pair, so that drift in the machine's load hits all alike
    for ((k = 0; k < n; k++)); do
      pair="${pairs[$(((k + round - 1) % n))]}"
      for threads in $CLIENTS; do
        key="$pair:$threads"
        tag="r$round-${pair/\//-}-c$threads"
        run_pair "${pair%/*}" "${pair#*/}" "$threads" "$tag"
        echo "round=$round server=${pair%/*} client=${pair#*/} clients=$threads status=$STATUS load=$(cut -d' ' -f1 /proc/loadavg)" \
             "${LINE:-reason=\"$REASON\"}" >>"$LOG_DIR/results.txt"
        if [ "$STATUS" = ok ]; then
          V_OK[$key]=$((${V_OK[$key]:-0} + 1))
          V_RATE[$key]+=" $(field "$LINE" conn_per_s)"
          V_P50[$key]+=" $(field "$LINE" p50_us)"
          V_P99[$key]+=" $(field "$LINE" p99_us)"
          V_TRANSPORT[$key]="$(field "$LINE" transports)"
        else
          V_FAIL[$key]=$((${V_FAIL[$key]:-0} + 1))
          V_RATE[$key]+=" x"
          # each distinct reason once, in the order seen
          case $'\n'"${V_REASONS[$key]:-}"$'\n' in *$'\n'"$REASON"$'\n'*) ;; *) V_REASONS[$key]+="$REASON"$'\n' ;; esac
          note "round $round: $pair, $threads client(s) FAILED: $REASON ($LOG_DIR/$tag-*.log)"
        fi
      done
    done
    note "round $round/$RUNS done"
  done
}

# The most connections per second one client host can open to one server address: the client
# closes first, its TIME_WAIT ports are reused only after net.ipv4.tcp_tw_reuse_delay (1000 ms
# where the file is missing), and connect() takes the even ports of ip_local_port_range. Empty
# when TIME_WAIT reuse is off (then the ports last 60 s and runs this long end in EADDRNOTAVAIL).
port_ceiling() {
  local range lo hi reuse delay
  range="$(cat /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)" || return 0
  read -r lo hi <<<"$range"
  reuse="$(cat /proc/sys/net/ipv4/tcp_tw_reuse 2>/dev/null || echo 0)"
  [ "$reuse" -ge 1 ] 2>/dev/null || return 0
  delay="$(cat /proc/sys/net/ipv4/tcp_tw_reuse_delay 2>/dev/null || echo 1000)"
  awk -v lo="$lo" -v hi="$hi" -v d="$delay" 'BEGIN { if (d > 0) printf "%.0f", (hi - lo + 1) / 2 / (d / 1000) }'
}

# Names the rows whose median is within 3 % of port_ceiling: there the kernel's port reuse, not
# the provider, set the rate (docs/benchmarks/connections.md, "Eight clients measure the kernel's
# port reuse").
port_ceiling_note() {
  local ceiling pair threads rate capped=""
  ceiling="$(port_ceiling)"
  [ -n "$ceiling" ] || return 0
  for pair in $PAIRS; do
    for threads in $CLIENTS; do
      rate="$(median <<<"${V_RATE[$pair:$threads]//x/}")"
      [ "$rate" = "-" ] && continue
      # a local stream (hadronio.local.stream) holds no TCP port: no ceiling
      [ "${V_TRANSPORT[$pair:$threads]:-}" = kernel-unix ] && continue
      if awk -v r="$rate" -v c="$ceiling" 'BEGIN { exit !(r >= 0.97 * c) }'; then
        capped="$capped${capped:+, }$pair with $threads client(s)"
      fi
    done
  done
  [ -n "$capped" ] || return 0
  echo
  echo "at the kernel's port-reuse ceiling (~$ceiling connections/s: the even ports of"
  echo "ip_local_port_range, reused after tcp_tw_reuse_delay): $capped; there the machine sets the rate, not the provider"
}

print_table() {
  local pair threads key rate p50 p99
  echo
  echo "Connection set-up (hadronio blocking benchmark connection), 127.0.0.1, server on core $SERVER_CPU, client on core $CLIENT_CPU"
  echo "each run: ${WARMUP} s warm-up, ${DURATION} s measured; per connection: open, connect, write 8 B, read 8 B, close"
  echo "medians of the successful runs of $RUNS interleaved rounds"
  echo
  # (%10s: the µ takes two bytes and printf counts bytes)
  printf '| %-8s | %-8s | %7s | %9s | %10s | %10s | %-14s | %-10s |\n' server client clients "conn/s" "p50 µs" "p99 µs" runs transport
  printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---------- ---------- --------: ----------: -----------: -----------: ---------------- ------------
  for pair in $PAIRS; do
    for threads in $CLIENTS; do
      key="$pair:$threads"
      rate="$(median <<<"${V_RATE[$key]//x/}")"
      p50="$(median <<<"${V_P50[$key]:-}")"
      p99="$(median <<<"${V_P99[$key]:-}")"
      awk -v s="${pair%/*}" -v c="${pair#*/}" -v n="$threads" -v r="$rate" -v a="$p50" -v b="$p99" \
          -v ok="${V_OK[$key]:-0}" -v f="${V_FAIL[$key]:-0}" -v t="${V_TRANSPORT[$key]:--}" '
        function fmt(x) { return x == "-" ? "-" : x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
        BEGIN {
          runs = f ? ok " ok, " f " FAILED" : ok " ok"
          printf "| %-8s | %-8s | %7s | %9s | %10s | %10s | %-14s | %-10s |\n", s, c, n, fmt(r), fmt(a), fmt(b), runs, t
        }'
    done
  done
  echo
  echo "per round, connections/s (x = failed):"
  for pair in $PAIRS; do
    for threads in $CLIENTS; do
      printf '  %-18s %2s client(s): %s\n' "$pair" "$threads" "${V_RATE[$pair:$threads]# }"
    done
  done
  port_ceiling_note
  local any=0
  for pair in $PAIRS; do
    for threads in $CLIENTS; do
      key="$pair:$threads"
      [ -n "${V_REASONS[$key]:-}" ] || continue
      [ "$any" = 1 ] || { echo; echo "failures (server/client, clients: reason):"; any=1; }
      while IFS= read -r r; do
        [ -n "$r" ] && echo "  $pair, $threads client(s): $r"
      done <<<"${V_REASONS[$key]}"
    done
  done
  echo
}

main() {
  hadronio_setup
  cd "$HADRONIO_ROOT"
  command -v taskset >/dev/null || die "taskset (util-linux) is needed to pin the processes"
  command -v timeout >/dev/null || die "timeout (coreutils) is needed"
  [[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$RUNS'"
  [[ "$RUN_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "RUN_TIMEOUT must be a positive number of seconds, not '$RUN_TIMEOUT'"
  local p t cpus
  for p in $PAIRS; do
    [[ "$p" =~ ^(jdk|hadronio)/(jdk|hadronio)$ ]] || die "PAIRS entry '$p' is not SERVER/CLIENT with jdk or hadronio"
  done
  for t in $CLIENTS; do [[ "$t" =~ ^[1-9][0-9]*$ ]] || die "CLIENTS entry '$t' is not a positive number"; done
  cpus="$(nproc)"
  ((SERVER_CPU < cpus && CLIENT_CPU < cpus)) || die "SERVER_CPU/CLIENT_CPU ($SERVER_CPU/$CLIENT_CPU) must be < $cpus cores"
  if [ "$SKIP_BUILD" != 1 ]; then
    note "building (./mvnw -B -ntp -q package -DskipTests) ..."
    ./mvnw -B -ntp -q package -DskipTests || die "build failed"
  fi
  [ -f "$APP_JAR" ] || die "$APP_JAR missing; build first"
  mkdir -p "$LOG_DIR"
  note "JDK $JAVA_HOME, $(ucx_info -v | sed -n 's/^# Version /UCX /p'), $cpus cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), logs in $LOG_DIR"
  local start=$SECONDS load0
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  run_rounds
  {
    print_table
    echo "load average (1/5/15 min) before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  } | tee -a "$LOG_DIR/table.md"
  note "done in $((SECONDS - start)) s; raw output in $LOG_DIR"
  if [ "$STRICT" = 1 ] && grep -q ' status=failed ' "$LOG_DIR/results.txt"; then
    exit 1
  fi
}

main "$@"
