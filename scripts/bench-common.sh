# shellcheck shell=bash
# What the side-by-side benchmark scripts (bench-apps.sh, bench-patterns.sh) share: starting a
# pinned "hadronio" JVM on one provider, stopping every JVM they started, medians and RESULT
# fields. Sourced after the script set APP_JAR, BASELINE_JAR, JAVA_OPTS, LOG_DIR and RUN_TIMEOUT.

# the JVMs started so far (java_bg), stopped by stop_all
PIDS=()

# stop_all: TERM to every JVM started (timeout(1) passes it on), then KILL what is left after 2 s
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  PIDS=()
}

# median of the numbers on stdin ("-" when there are none)
median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# field LINE KEY: the value of KEY=value in a RESULT line
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# java_bg PROVIDER CPU LOG ARGS...: starts "hadronio ARGS" on PROVIDER (jdk, hadronio, before)
# pinned to CPU, output to LOG, the command line in $LOG_DIR/commands.txt; sets PID
java_bg() {
  local provider="$1" cpu="$2" log="$3" dis=false jar="$APP_JAR"
  shift 3
  [ "$provider" = jdk ] && dis=true
  [ "$provider" = before ] && jar="$BASELINE_JAR"
  # there before the caller reads it (the redirection below happens in the child)
  : >"$log"
  # shellcheck disable=SC2086
  echo "DISABLE_HADRONIO=$dis taskset -c $cpu java $JAVA_OPTS -jar $jar $*" >>"$LOG_DIR/commands.txt"
  # shellcheck disable=SC2086
  DISABLE_HADRONIO=$dis timeout "$RUN_TIMEOUT" taskset -c "$cpu" "$JAVA_HOME/bin/java" $JAVA_OPTS -jar "$jar" "$@" \
    >"$log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
}
