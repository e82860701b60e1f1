#!/usr/bin/env bash
# Real applications side by side ("never slower than the JDK", issue 10): each runs unmodified
# library code in separate JVMs on 127.0.0.1, once with every JVM on the JDK's provider
# (DISABLE_HADRONIO=true) and once on hadroNIO, in interleaved rounds (JDK, hadroNIO, hadroNIO, JDK,
# ...), fully JIT-compiled, pinned with taskset; prints one table of medians over the rounds.
#
#   grpc     gRPC-java 1.85 (Netty transport, NIO): "hadronio grpc benchmark", unary calls of SIZE
#            bytes on one channel: calls/s with GRPC_IN_FLIGHT in flight (async stub), then one at
#            a time (blocking stub) with p50/p99
#   jetty    Jetty 12 server + HttpClient, HTTP/1.1 keep-alive: "hadronio jetty benchmark", GETs
#            answered with SIZE bytes: requests/s with JETTY_IN_FLIGHT in flight (async API), then one
#            at a time (blocking API) with p50/p99
#   tomcat   embedded Tomcat 11, its NIO.2 connector (Http11Nio2Protocol), and Jetty's HttpClient as
#            for jetty: "hadronio tomcat benchmark --protocol nio2", GETs answered with SIZE bytes,
#            requests/s with JETTY_IN_FLIGHT in flight, then one at a time with p50/p99. The JDK's
#            runs use the JDK's SelectorProvider and AsynchronousChannelProvider, hadroNIO's runs
#            both of hadroNIO's (the server names the asynchronous one itself)
#   tomcat-nio  the same with Tomcat's NIO connector (Http11NioProtocol, a Selector)
#   kafka    Kafka 4.1 (a KRaft node: broker and controller in one JVM) and Kafka's producer and consumer:
#            "hadronio kafka benchmark", acks=all records of SIZE bytes: records/s with KAFKA_IN_FLIGHT in
#            flight, then one at a time with p50/p99; then a consumer (Kafka's defaults) reads KAFKA_FETCH_MIB
#            MiB of 64-KiB records from the log 16 times (the first 8 unmeasured; the broker sends the log
#            with FileChannel.transferTo): MB/s
#   jgroups  JGroups 5.5 on TCP_NIO2, 3 member JVMs: "hadronio jgroups benchmark", multicast
#            messages/s received per member (mean of the members), then member 0's sequential
#            RpcDispatcher unicast calls with p50/p99
#
#   scripts/bench-apps.sh                          # 3 rounds of all three, ~14 minutes (2026-11-29: 9.6 min for gRPC and JGroups, 4.5 for Jetty)
#   RUNS=5 APPS="grpc jetty" SKIP_BUILD=1 scripts/bench-apps.sh
#   RUNS=3 APPS="tomcat tomcat-nio" SKIP_BUILD=1 scripts/bench-apps.sh
#   RUNS=3 APPS=kafka SKIP_BUILD=1 scripts/bench-apps.sh
#
# Environment:
#   RUNS            interleaved rounds (default 3; medians of the rounds that succeeded)
#   APPS            which applications (default "grpc jetty jgroups")
#   WARMUP          unmeasured seconds before each measured loop (default 15: with each JVM pinned to one core
#                   the JIT competes with the application, and gRPC ran at 400-850 calls/s for both providers
#                   in its first ~15 s; docs/benchmarks/apps.md)
#   GRPC_WARMUP     gRPC's warm-up instead of WARMUP (default 40: Netty's event-loop method, which inlines gRPC's
#                   and HTTP/2's read path, reached C2 14-19 s into a client's life on either provider, and the
#                   32-in-flight figure after 15 s measured which client's compiler had got there; apps.md)
#   DURATION        measured seconds of each loop (default 5)
#   SIZE            gRPC request/answer and Jetty/Tomcat response bytes (default 64)
#   GRPC_IN_FLIGHT  gRPC calls in flight (default 32)
#   JETTY_IN_FLIGHT Jetty and Tomcat requests in flight (default 16)
#   KAFKA_IN_FLIGHT Kafka records in flight (default 32)
#   KAFKA_FETCH_MIB MiB of the partition the Kafka consumer reads per pass (default 256)
#   JGROUPS_SIZE    JGroups message and RPC argument bytes (default 100)
#   BASELINE_JAR    another hadronio-app.jar, run as provider "before" in every round (an A/B of two builds,
#                   each next to the same JDK runs)
#   JGROUPS_ARGS    more options for "jgroups benchmark", e.g. --platform-threads (default none)
#   TOMCAT_ARGS     more options for the Tomcat servers, e.g. "--max-keep-alive-requests -1" (default none:
#                   Tomcat's defaults, which close a connection after 100 requests)
#   SERVER_CPU / CLIENT_CPU   cores of the server and client JVMs (default 0 / 1)
#   MEMBER_CPUS     cores of the three JGroups members (default "0 1 1": member 0 alone, like a server)
#   RUN_TIMEOUT     seconds a run may take before it counts as failed (default 150)
#   SKIP_BUILD      1: use the jars already built
#   LOG_DIR         where every process's output is kept (default docs/results/raw/apps-<time>)
#   JAVA_OPTS       extra JVM options for every JVM
#   STRICT          1: exit 1 when any run failed (default: report failures, exit 0)
#
# A run fails (reported, not fatal) when a JVM exits non-zero, prints no RESULT line, reports a
# failed call or another provider than asked for, or takes longer than RUN_TIMEOUT.
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh"

RUNS="${RUNS:-3}"
APPS="${APPS:-grpc jetty jgroups}"
WARMUP="${WARMUP:-15}"
GRPC_WARMUP="${GRPC_WARMUP:-40}"
DURATION="${DURATION:-5}"
SIZE="${SIZE:-64}"
GRPC_IN_FLIGHT="${GRPC_IN_FLIGHT:-32}"
JETTY_IN_FLIGHT="${JETTY_IN_FLIGHT:-16}"
JGROUPS_SIZE="${JGROUPS_SIZE:-100}"
KAFKA_IN_FLIGHT="${KAFKA_IN_FLIGHT:-32}"
KAFKA_FETCH_MIB="${KAFKA_FETCH_MIB:-256}"
JGROUPS_ARGS="${JGROUPS_ARGS:-}"
TOMCAT_ARGS="${TOMCAT_ARGS:-}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
MEMBER_CPUS="${MEMBER_CPUS:-0 1 1}"
RUN_TIMEOUT="${RUN_TIMEOUT:-150}"
SKIP_BUILD="${SKIP_BUILD:-0}"
BASELINE_JAR="${BASELINE_JAR:-}"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/apps-$(date +%Y%m%d-%H%M%S)}"
JAVA_OPTS="${JAVA_OPTS:-}"
STRICT="${STRICT:-0}"
APP_JAR="$HADRONIO_ROOT/app/target/hadronio-app.jar"

die() { echo "bench-apps: $*" >&2; exit 1; }
note() { echo "bench-apps: $*" >&2; }

# ---- the JVMs of a run are tracked and killed on exit ---------------------------------------------

trap stop_all EXIT
trap 'echo "bench-apps: interrupted" >&2; exit 130' INT TERM

# (awk, not grep: an empty list must not fail the pipeline)

# field LINE KEY: the value of KEY=value in a RESULT line

# first_error LOG: the first line of LOG that names an exception or an error of ours, shortened
first_error() {
  grep -m1 -E '^(Caused by: )?[A-Za-z0-9_.$]+(Exception|Error)\b|^ERROR |^SEVERE: ' "$1" 2>/dev/null | cut -c1-160 || true
}


# check_lines PROVIDER LINES LOG: REASON for RESULT lines that report failures or another provider
check_lines() {
  local provider="$1" lines="$2" log="$3" l
  [ -n "$lines" ] || { REASON="no RESULT line: $(first_error "$log")"; return; }
  # the older build reports itself as hadroNIO
  [ "$provider" = before ] && provider=hadronio
  while IFS= read -r l; do
    if [ "$(field "$l" provider)" != "$provider" ]; then
      REASON="asked for $provider, the JVM reports provider=$(field "$l" provider) ($log)"; return
    elif [ "$(field "$l" failures)" != 0 ]; then
      REASON="$(field "$l" failures) failed calls/messages ($log)"; return
    fi
  done <<<"$lines"
}

# ---- one run --------------------------------------------------------------------------------------

# command_of APP: the "hadronio" command of APP ("tomcat-nio" is "tomcat" with the NIO connector)
command_of() { [ "$1" = tomcat-nio ] && echo tomcat || echo "$1"; }
warmup_of() { [ "$1" = grpc ] && echo "$GRPC_WARMUP" || echo "$WARMUP"; }

# server_options APP: what the server of APP needs beyond "-s -a -l"
server_options() {
  case "$1" in
    tomcat) echo "--protocol nio2 $TOMCAT_ARGS" ;;
    tomcat-nio) echo "--protocol nio $TOMCAT_ARGS" ;;
  esac
}
# client_options APP: what the client of APP needs beyond "-r -l -i --warmup -d"
client_options() {
  case "$1" in
    kafka) echo "--fetch-mib $KAFKA_FETCH_MIB --fetch-passes 16" ;;
  esac
}

# run_pair APP PROVIDER TAG: a server and a client ("APP benchmark -s" / "-r"); sets STATUS, REASON, LINES
run_pair() {
  local app="$1" provider="$2" tag="$3" port="" i rc in_flight cmd
  local slog="$LOG_DIR/$tag-server.log" clog="$LOG_DIR/$tag-client.log"
  STATUS=failed REASON="" LINES=""
  case "$app" in
    grpc) in_flight="$GRPC_IN_FLIGHT" ;;
    kafka) in_flight="$KAFKA_IN_FLIGHT" ;;
    *) in_flight="$JETTY_IN_FLIGHT" ;;
  esac
  cmd="$(command_of "$app")"
  # shellcheck disable=SC2046
  java_bg "$provider" "$SERVER_CPU" "$slog" "$cmd" benchmark -s -a 127.0.0.1:0 -l "$SIZE" $(server_options "$app")
  local server=$PID
  for ((i = 0; i < 60 * 20; i++)); do
    port="$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -n1 || true)"
    [ -n "$port" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    REASON="server did not listen: $(first_error "$slog")"
    stop_all
    return
  fi
  java_bg "$provider" "$CLIENT_CPU" "$clog" "$cmd" benchmark -r "127.0.0.1:$port" -l "$SIZE" -i "$in_flight" \
    --warmup "$(warmup_of "$app")" -d "$DURATION" $(client_options "$app")
  rc=0; wait "$PID" || rc=$?
  LINES="$(grep '^RESULT ' "$clog" || true)"
  if [ "$rc" = 124 ]; then
    REASON="client took longer than $RUN_TIMEOUT s (killed)"
  elif ! kill -0 "$server" 2>/dev/null; then
    REASON="the server died: $(first_error "$slog")"
  elif [ "$rc" != 0 ] && [ -z "$LINES" ]; then
    REASON="client exit $rc: $(first_error "$clog")"
  else
    check_lines "$provider" "$LINES" "$clog"
    [ -n "$REASON" ] || [ "$rc" = 0 ] || REASON="client exit $rc: $(first_error "$clog")"
  fi
  stop_all
  [ -n "$REASON" ] || STATUS=ok
}

# free_ports: three ports for the JGroups members, below the kernel's ephemeral range (so that no
# outgoing connection holds one), none of them or its +100 (JGroups' FD_SOCK2) in use
free_ports() {
  local low p ports=() taken=" "
  low="$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)"
  while [ "${#ports[@]}" -lt 3 ]; do
    p=$((20000 + RANDOM % (low - 20000 - 200)))
    case "$taken" in *" $p "* | *" $((p + 100)) "* | *" $((p - 100)) "*) continue ;; esac
    if command -v ss >/dev/null && [ -n "$(ss -Htan "( sport = :$p or sport = :$((p + 100)) )" 2>/dev/null)" ]; then
      continue
    fi
    ports+=("$p")
    taken+="$p "
  done
  (IFS=,; echo "${ports[*]}")
}

# run_jgroups PROVIDER TAG: three members; sets STATUS, REASON, LINES
run_jgroups() {
  local provider="$1" tag="$2" m rc pids=() log all
  local -a cpus
  read -r -a cpus <<<"$MEMBER_CPUS"
  STATUS=failed REASON="" LINES=""
  all="$(free_ports)"
  for m in 0 1 2; do
    # shellcheck disable=SC2086
    java_bg "$provider" "${cpus[$m]:-$m}" "$LOG_DIR/$tag-member$m.log" jgroups benchmark -m "$m" -p "$all" \
      -l "$JGROUPS_SIZE" --warmup "$WARMUP" -d "$DURATION" $JGROUPS_ARGS
    pids+=("$PID")
  done
  for m in 0 1 2; do
    log="$LOG_DIR/$tag-member$m.log"
    rc=0; wait "${pids[$m]}" || rc=$?
    LINES+="$(grep '^RESULT ' "$log" || true)"$'\n'
    if [ -n "$REASON" ]; then
      continue
    elif [ "$rc" = 124 ]; then
      REASON="member $m took longer than $RUN_TIMEOUT s (killed)"
    elif [ "$rc" != 0 ] && ! grep -q '^RESULT ' "$log"; then
      REASON="member $m exit $rc: $(first_error "$log")"
    else
      check_lines "$provider" "$(grep '^RESULT ' "$log" || true)" "$log"
      [ -n "$REASON" ] || [ "$rc" = 0 ] || REASON="member $m exit $rc: $(first_error "$log")"
    fi
  done
  LINES="$(awk 'NF' <<<"$LINES")"
  stop_all
  [ -n "$REASON" ] || STATUS=ok
}

# ---- rounds -----------------------------------------------------------------------------------------

# V[app:figure:provider]: the rounds' values in order (x: failed); T[app:provider]: the transports seen
declare -A V T R

# the figures of each application: key, what, RESULT line filter (mode=...), field
figures() {
  case "$1" in
    grpc) echo "conc|unary calls/s, $GRPC_IN_FLIGHT in flight (async stub)|concurrent|per_s
seq|sequential calls/s (blocking stub)|sequential|per_s
p50|sequential p50 µs|sequential|p50_us
p99|sequential p99 µs|sequential|p99_us" ;;
    jetty | tomcat | tomcat-nio) echo "conc|requests/s, $JETTY_IN_FLIGHT in flight (async API)|concurrent|per_s
seq|sequential requests/s (blocking API)|sequential|per_s
p50|sequential p50 µs|sequential|p50_us
p99|sequential p99 µs|sequential|p99_us" ;;
    kafka) echo "conc|acks=all records/s, $KAFKA_IN_FLIGHT in flight|concurrent|per_s
seq|sequential acks=all records/s|sequential|per_s
p50|sequential p50 µs|sequential|p50_us
p99|sequential p99 µs|sequential|p99_us
fetch|consumer fetch MB/s, $KAFKA_FETCH_MIB MiB of 64-KiB records|fetch|mb_s" ;;
    jgroups) echo "mcast|multicast messages/s received per member (mean of 3)|multicast|per_s
seq|sequential RPCs/s (RpcDispatcher, unicast)|rpc|per_s
p50|sequential RPC p50 µs|rpc|p50_us
p99|sequential RPC p99 µs|rpc|p99_us" ;;
  esac
}

record() {
  local app="$1" provider="$2" key what mode fld vals v
  while IFS='|' read -r key what mode fld; do
    if [ "$STATUS" = ok ]; then
      vals="$( (grep " mode=$mode " <<<"$LINES" || true) | while IFS= read -r l; do field "$l" "$fld"; done)"
      # per member figures: the mean of the members
      v="$(awk 'NF {s += $1; n++} END {if (n) printf "%.1f", s / n}' <<<"$vals")"
      V[$app:$key:$provider]+=" ${v:-x}"
    else
      V[$app:$key:$provider]+=" x"
    fi
  done < <(figures "$app")
  if [ "$STATUS" = ok ]; then
    local t
    # every distinct path any JVM of the run reported, over all rounds
    t="$( (grep -o 'transport=[^ ]*' <<<"$LINES" || true) | sed 's/^transport=//')"
    T[$app:$provider]="$(printf '%s\n%s\n' "${T[$app:$provider]:-}" "$t" | awk 'NF' | sort -u)"
  else
    R[$app:$provider]+="$REASON"$'\n'
  fi
}

run_rounds() {
  local round app provider order tag
  for ((round = 1; round <= RUNS; round++)); do
    # JDK first in odd rounds, hadroNIO first in even ones: JDK, hadroNIO, hadroNIO, JDK, ...
    order=$([ $((round % 2)) = 1 ] && echo "jdk hadronio${BASELINE_JAR:+ before}" \
      || echo "${BASELINE_JAR:+before }hadronio jdk")
    for app in $APPS; do
      for provider in $order; do
        tag="r$round-$app-$provider"
        if [ "$app" = jgroups ]; then run_jgroups "$provider" "$tag"; else run_pair "$app" "$provider" "$tag"; fi
        {
          echo "round=$round app=$app provider=$provider status=$STATUS load=$(cut -d' ' -f1 /proc/loadavg)${REASON:+ reason=\"$REASON\"}"
          [ -z "$LINES" ] || sed 's/^/  /' <<<"$LINES"
        } >>"$LOG_DIR/results.txt"
        record "$app" "$provider"
        [ "$STATUS" = ok ] || note "round $round: $app on $provider FAILED: $REASON"
      done
    done
    note "round $round/$RUNS done ($((SECONDS - START)) s)"
  done
}

# paths LIST: the transports of a newline-separated LIST, "a or b", "-" for none
paths() { awk 'NF {out = out (n++ ? " or " : "") $0} END {print n ? out : "-"}' <<<"$1"; }

print_table() {
  local app key what mode fld jdk had
  echo
  echo "Applications side by side on 127.0.0.1, $(nproc) cores; server on core $SERVER_CPU, client on core $CLIENT_CPU" \
       "(JGroups members on cores: $MEMBER_CPUS)"
  echo "each loop: $WARMUP s warm-up (gRPC $GRPC_WARMUP s), $DURATION s measured; medians of $RUNS interleaved rounds (JDK first in odd rounds)"
  echo "gRPC: $SIZE B calls on one channel; Jetty, Tomcat: GET, $SIZE B responses, HTTP/1.1 keep-alive (Jetty's HttpClient); JGroups: 3 members, $JGROUPS_SIZE B messages; Kafka: $SIZE B records, acks=all${JGROUPS_ARGS:+ ($JGROUPS_ARGS)}${TOMCAT_ARGS:+; Tomcat servers: $TOMCAT_ARGS}"
  echo
  if [ -n "$BASELINE_JAR" ]; then
    echo "| app | figure | JDK median | hadroNIO median | hadroNIO/JDK | before median | before/JDK | JDK rounds | hadroNIO rounds | before rounds | transport (JDK; hadroNIO) |"
    echo "|---|---|---:|---:|---:|---:|---:|---|---|---|---|"
  else
    echo "| app | figure | JDK median | hadroNIO median | hadroNIO/JDK | JDK rounds | hadroNIO rounds | transport (JDK; hadroNIO) |"
    echo "|---|---|---:|---:|---:|---|---|---|"
  fi
  local first t
  for app in $APPS; do
    first=1
    while IFS='|' read -r key what mode fld; do
      # the paths once per application
      t=""
      [ "$first" = 1 ] && t="JDK: $(paths "${T[$app:jdk]:-}"); hadroNIO: $(paths "${T[$app:hadronio]:-}")"
      first=0
      jdk="$(median <<<"${V[$app:$key:jdk]//x/}")"
      had="$(median <<<"${V[$app:$key:hadronio]//x/}")"
      bef="-"
      [ -z "$BASELINE_JAR" ] || bef="$(median <<<"${V[$app:$key:before]//x/}")"
      awk -v app="$app" -v what="$what" -v j="$jdk" -v h="$had" -v jr="${V[$app:$key:jdk]# }" \
          -v hr="${V[$app:$key:hadronio]# }" -v t="$t" -v b="$bef" -v br="${V[$app:$key:before]:-}" \
          -v withb="${BASELINE_JAR:+1}" '
        function fmt(x) { return x == "-" ? "-" : x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
        function rounds(s,   n, a, i, out) {
          n = split(s, a, " "); out = ""
          for (i = 1; i <= n; i++) out = out (i > 1 ? ", " : "") (a[i] == "x" ? "x" : fmt(a[i]))
          return out
        }
        BEGIN {
          ratio = (j == "-" || h == "-" || j == 0) ? "-" : sprintf("%.2f×", h / j)
          if (withb) {
            bratio = (j == "-" || b == "-" || j == 0) ? "-" : sprintf("%.2f×", b / j)
            sub(/^ /, "", br)
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", app, what, fmt(j), fmt(h), ratio, fmt(b), bratio, rounds(jr), rounds(hr), rounds(br), t
          } else
          printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", app, what, fmt(j), fmt(h), ratio, rounds(jr), rounds(hr), t
        }'
    done < <(figures "$app")
  done
  echo
  echo "hadroNIO/JDK: above 1 is hadroNIO ahead for rates, behind for latencies (µs). x: a failed run."
  local any=0 p
  for app in $APPS; do
    for p in jdk hadronio ${BASELINE_JAR:+before}; do
      [ -n "${R[$app:$p]:-}" ] || continue
      [ "$any" = 1 ] || { echo; echo "failures:"; any=1; }
      sort -u <<<"${R[$app:$p]}" | awk 'NF' | sed "s/^/  $app on $p: /"
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
  local a cpus
  for a in $APPS; do
    [[ "$a" =~ ^(grpc|jetty|tomcat|tomcat-nio|jgroups|kafka)$ ]] || die "APPS entry '$a' is not grpc, jetty, tomcat, tomcat-nio, jgroups or kafka"
  done
  cpus="$(nproc)"
  ((SERVER_CPU < cpus && CLIENT_CPU < cpus)) || die "SERVER_CPU/CLIENT_CPU ($SERVER_CPU/$CLIENT_CPU) must be < $cpus cores"
  if [ "$SKIP_BUILD" != 1 ]; then
    note "building (./mvnw -B -ntp -q package -DskipTests) ..."
    ./mvnw -B -ntp -q package -DskipTests || die "build failed"
  fi
  [ -f "$APP_JAR" ] || die "$APP_JAR missing; build first"
  mkdir -p "$LOG_DIR"
  local load0 commit
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo '+dirty')"
  note "JDK $JAVA_HOME, $(ucx_info -v | sed -n 's/^# Version /UCX /p'), $cpus cores, commit $commit, logs in $LOG_DIR"
  START=$SECONDS
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  run_rounds
  {
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $(ucx_info -v | sed -n 's/^# Version /UCX /p'), $("$JAVA_HOME/bin/java" -version 2>&1 | head -n1)"
    print_table
    echo "load average (1/5/15 min) before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg); $((SECONDS - START)) s"
  } | tee -a "$LOG_DIR/table.md"
  note "done in $((SECONDS - START)) s; raw output in $LOG_DIR"
  if [ "$STRICT" = 1 ] && grep -q ' status=failed ' "$LOG_DIR/results.txt"; then
    exit 1
  fi
}

main "$@"
