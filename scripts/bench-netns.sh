#!/usr/bin/env bash
# Blocking NIO across a real network path on this machine: two network namespaces ("hosts")
# joined by a veth pair, UCX restricted to tcp over the veth (no shared memory, no RDMA between
# hosts). Runs 'hadronio blocking benchmark' side by side, interleaved, in three variants:
#   jdk           the JDK's provider on both hosts
#   hadronio      hadroNIO on both hosts (the other host is in hadronio.remote.networks): UCX would
#                 only use tcp, so the connection carries its bytes over the kernel's TCP
#                 (hadronio.kernel.tcp=true, the default)
#   hadronio-ucx  the same with hadronio.kernel.tcp=false: UCX's tcp transport carries the bytes
# and prints medians per variant and the ratios against the JDK (issue 10's targets: 64 KiB
# streaming >= 0.95x the JDK, 8-byte round trip <= 1.1x the JDK). Needs root (ip netns).
#
#   scripts/bench-netns.sh
#   RUNS=7 CASES=stream SKIP_BUILD=1 scripts/bench-netns.sh
#
# Environment:
#   RUNS        interleaved rounds (default 5; the table shows medians)
#   VARIANTS    default "jdk hadronio hadronio-ucx"
#   CASES       lat8 (8-byte round trip) and/or stream (64 KiB writes); default both
#   SERVER_CPU / CLIENT_CPU   cores the two processes are pinned to (default 0 / 1)
#   SKIP_BUILD  1: use the jars already built
#   LOG_DIR     where every process's output is kept (default docs/results/raw/netns-<time>)
#   JAVA_OPTS   extra JVM options for both sides
set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

RUNS="${RUNS:-5}"
VARIANTS="${VARIANTS:-jdk hadronio hadronio-ucx}"
CASES="${CASES:-lat8 stream}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
SKIP_BUILD="${SKIP_BUILD:-0}"
LOG_DIR="${LOG_DIR:-$HADRONIO_ROOT/docs/results/raw/netns-$(date +%Y%m%d-%H%M%S)}"
JAVA_OPTS="${JAVA_OPTS:-}"
APP_JAR="$HADRONIO_ROOT/app/target/hadronio-app.jar"
NS_A="hnb-a-$$" NS_B="hnb-b-$$" VETH_A="hnba$(($$ % 100000))" VETH_B="hnbb$(($$ % 100000))"
ADDR_A=10.231.79.1 ADDR_B=10.231.79.2 NET=10.231.79.0/24

die() { echo "bench-netns: $*" >&2; exit 1; }
note() { echo "bench-netns: $*" >&2; }

SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -9 "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo "bench-netns: interrupted" >&2; exit 130' INT TERM

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

make_hosts() {
  ip netns add "$NS_A"
  ip netns add "$NS_B"
  ip link add "$VETH_A" type veth peer name "$VETH_B"
  ip link set "$VETH_A" netns "$NS_A"
  ip link set "$VETH_B" netns "$NS_B"
  ip -n "$NS_A" addr add "$ADDR_A/24" dev "$VETH_A"
  ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B"
  local ns
  for ns in "$NS_A:$VETH_A" "$NS_B:$VETH_B"; do
    ip -n "${ns%%:*}" link set lo up
    ip -n "${ns%%:*}" link set "${ns##*:}" up
  done
}

# case_args CASE -> "SUBCOMMAND CLIENT_ARGS..." (as scripts/demo.sh's blocking cases)
case_args() {
  case "$1" in
    lat8)   echo "latency -l 8 -m 20000 -t 20000" ;;
    stream) echo "throughput -l 65536 -m 30000 -t 10000" ;;
    *) return 1 ;;
  esac
}

# jvm VARIANT NS DEVICE: the java command line (before -jar's arguments) of one side
jvm() {
  local v="$1" ns="$2" dev="$3" cpu="$4"
  local cmd=(ip netns exec "$ns" env "DISABLE_HADRONIO=$([ "$v" = jdk ] && echo true || echo false)"
             "UCX_TLS=tcp" "UCX_NET_DEVICES=$dev" taskset -c "$cpu" "$JAVA_HOME/bin/java")
  # shellcheck disable=SC2206
  cmd+=($JAVA_OPTS)
  if [ "$v" != jdk ]; then
    cmd+=("-Dhadronio.ucx.TLS=tcp" "-Dhadronio.ucx.NET_DEVICES=$dev" "-Dhadronio.remote.networks=$NET")
    [ "$v" = hadronio-ucx ] && cmd+=("-Dhadronio.kernel.tcp=false")
  fi
  echo "${cmd[@]}"
}

# run VARIANT CASE TAG: sets LINE to the client's RESULT line
run() {
  local v="$1" c="$2" tag="$3" sub args port="" i
  read -r sub args <<<"$(case_args "$c")"
  local slog="$LOG_DIR/$tag-server.log" clog="$LOG_DIR/$tag-client.log"
  : >"$slog"
  # shellcheck disable=SC2046
  $(jvm "$v" "$NS_A" "$VETH_A" "$SERVER_CPU") -jar "$APP_JAR" blocking benchmark "$sub" -s -a "$ADDR_A:0" >"$slog" 2>&1 &
  SERVER_PID=$!
  for ((i = 0; i < 1200; i++)); do
    port="$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$slog" | head -n1)"
    [ -n "$port" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  [ -n "$port" ] || { tail -n 20 "$slog" >&2; die "$tag: server did not listen"; }
  local client
  client="$(jvm "$v" "$NS_B" "$VETH_B" "$CLIENT_CPU") -jar $APP_JAR blocking benchmark $sub -r $ADDR_A:$port $args"
  echo "$client" >"$LOG_DIR/$tag-command.txt"
  # shellcheck disable=SC2086
  timeout 300 $client >"$clog" 2>&1 || { tail -n 20 "$clog" >&2; die "$tag: client failed"; }
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  LINE="$(grep '^RESULT ' "$clog" | tail -n1)" || die "$tag: no RESULT line"
}

main() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
  hadronio_setup
  cd "$HADRONIO_ROOT"
  if [ "$SKIP_BUILD" != 1 ]; then
    note "building (./mvnw -B -ntp -q package -DskipTests) ..."
    ./mvnw -B -ntp -q package -DskipTests || die "build failed"
  fi
  mkdir -p "$LOG_DIR"
  make_hosts
  note "JDK $JAVA_HOME, UCX on tcp over $VETH_A/$VETH_B, logs in $LOG_DIR"
  local load0 round k c v vs=($VARIANTS) n
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  n=${#vs[@]}
  declare -A VAL TR
  for ((round = 1; round <= RUNS; round++)); do
    for c in $CASES; do
      for ((k = 0; k < n; k++)); do
        # each round starts with the next variant
        v="${vs[$(((k + round - 1) % n))]}"
        run "$v" "$c" "r$round-$c-$v"
        echo "round=$round case=$c variant=$v load=$(cut -d' ' -f1 /proc/loadavg) $LINE" >>"$LOG_DIR/results.txt"
        TR[$c:$v]="$(field "$LINE" transports)"
        if [ "$c" = lat8 ]; then
          VAL[$c:$v:p50]+=" $(field "$LINE" p50_us)"
          VAL[$c:$v:p99]+=" $(field "$LINE" p99_us)"
          VAL[$c:$v:avg]+=" $(field "$LINE" avg_us)"
        else
          VAL[$c:$v:mbps]+=" $(field "$LINE" mb_per_s)"
        fi
      done
    done
    note "round $round/$RUNS done"
  done
  {
    echo
    echo "Blocking NIO across two network namespaces (veth, UCX_TLS=tcp), server on core $SERVER_CPU, client on core $CLIENT_CPU"
    echo "medians of $RUNS interleaved rounds; ratio = variant / jdk"
    echo
    printf '| %-12s | %-24s | %10s | %7s | %-12s |\n' variant measurement median ratio transport
    printf '|%s|%s|%s|%s|%s|\n' -------------- -------------------------- -----------: --------: --------------
    for c in $CASES; do
      local ms
      [ "$c" = lat8 ] && ms="p50 p99 avg" || ms="mbps"
      for m in $ms; do
        local j; j="$(median <<<"${VAL[$c:jdk:$m]:-}")"
        for v in $VARIANTS; do
          local x label; x="$(median <<<"${VAL[$c:$v:$m]:-}")"
          case "$m" in
            p50) label="round trip 8 B p50 (µs)" ;; p99) label="round trip 8 B p99 (µs)" ;;
            avg) label="round trip 8 B avg (µs)" ;; mbps) label="streaming 64 KiB (MB/s)" ;;
          esac
          awk -v v="$v" -v l="$label" -v x="$x" -v j="$j" -v t="${TR[$c:$v]:-?}" \
            'BEGIN { pad = index(l, "µ") ? 25 : 24; printf "| %-12s | %-" pad "s | %10.1f | %7.2f | %-12s |\n", v, l, x, (j > 0 ? x / j : 0), t }'
        done
      done
    done
    echo
    echo "per round:"
    for c in $CASES; do
      for v in $VARIANTS; do
        if [ "$c" = lat8 ]; then echo "  $c $v p50:${VAL[$c:$v:p50]}"; else echo "  $c $v MB/s:${VAL[$c:$v:mbps]}"; fi
      done
    done
    echo
    echo "load average before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  } | tee "$LOG_DIR/summary.txt"
}

main "$@"
