#!/usr/bin/env bash
# Where a process's resident memory lies: /proc/PID/smaps grouped by what a mapping is, KiB.
#   java heap     the mappings inside the Java heap's reserved range (jcmd PID GC.heap_info)
#   anon          other anonymous memory: malloc arenas (the JVM's, UCX's), metaspace, code cache, stacks
#   anon huge     of all anonymous memory, what lies in transparent huge pages (AnonHugePages)
#   sysv / posix  UCX's shared-memory segments (SYSV, /dev/shm/ucx_*), this process's and its peers'
#   libucx        libucp, libuct, libucs, libucm and UCX's transport modules
#   jvm files     libjvm.so, the CDS archive (classes.jsa), lib/modules
#   other files   every other file mapping (libc, libjli, jars, ...)
# Used for docs/benchmarks/memory.md:
#   scripts/smaps-groups.sh PID          # one line: group=KiB ...
#   scripts/smaps-groups.sh -v PID       # and the ten largest mappings
#   scripts/smaps-groups.sh -r PID       # only the heap's range, for HEAP_RANGE (repeated calls need no jcmd)
set -euo pipefail
JAVA_HOME="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
verbose=0
[ "${1:-}" = -v ] && { verbose=1; shift; }
[ $# -eq 1 ] || [ "${1:-}" = -r ] || { echo "usage: scripts/smaps-groups.sh [-v|-r] PID" >&2; exit 2; }
pid="${2:-$1}"
# the heap's reserved range: the lowest and highest address GC.heap_info names, 16 hex digits each
# (HEAP_RANGE="0x... 0x..." skips asking the JVM: what -r printed before)
[ "${1:-}" = -r ] && { "$JAVA_HOME/bin/jcmd" "$2" GC.heap_info 2>/dev/null | grep -o '0x[0-9a-f]\{16\}' | sort | sed -n '1p;$p' | tr '\n' ' '; exit 0; }
range="${HEAP_RANGE:-$("$JAVA_HOME/bin/jcmd" "$pid" GC.heap_info 2>/dev/null | grep -o '0x[0-9a-f]\{16\}' | sort | sed -n '1p;$p' | tr '\n' ' ' || true)}"
awk -v lo="${range%% *}" -v hi="$(echo "$range" | awk '{print $2}')" -v verbose="$verbose" '
function pad(a) { return substr("0000000000000000", 1, 16 - length(a)) a }
function group(name, start) {
  if (name ~ /^\/SYSV/) return "sysv"
  if (name ~ /^\/dev\/shm\/ucx/) return "posix"
  if (name ~ /libuc[pstm]|\/ucx\/libuct_/) return "libucx"
  if (name ~ /libjvm\.so|classes.*\.jsa|\/lib\/modules$/) return "jvm_files"
  if (name == "" || name ~ /^\[(heap|stack|anon)/) {
    if (lo != "" && pad(start) >= substr(lo, 3) && pad(start) < substr(hi, 3)) return "java_heap"
    return "anon"
  }
  return "other_files"
}
/^[0-9a-f]+-[0-9a-f]+ / {
  split($1, r, "-"); name = ""; for (i = 6; i <= NF; i++) name = name (i > 6 ? " " : "") $i
  cur = group(name, r[1]); label = $1 " " name; next
}
/^Rss:/ { rss[cur] += $2; total += $2; if (verbose) big[label] += $2 }
/^AnonHugePages:/ { huge += $2 }
END {
  printf "total=%d", total
  n = split("java_heap anon sysv posix libucx jvm_files other_files", g, " ")
  for (i = 1; i <= n; i++) printf " %s=%d", g[i], rss[g[i]]
  printf " anon_huge=%d\n", huge
  if (verbose) for (l in big) if (big[l] >= 1024) printf "%8d %s\n", big[l], l | "sort -rn | head -n 10"
}' "/proc/$pid/smaps"
