# shellcheck shell=bash
# Sourced by the README's commands: finds a JDK >= 22 and makes sure UCX and a C compiler are installed.
# Exports JAVA_HOME and PATH; exits with a message saying what to install when it cannot.

HADRONIO_MIN_JDK=22
HADRONIO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Prints the feature version (e.g. 25) of the JDK at $1, or nothing if it is not a JDK.
hadronio_jdk_version() {
  local home="$1"
  [ -x "$home/bin/java" ] && [ -x "$home/bin/javac" ] || return 0
  "$home/bin/java" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
}

# JAVA_HOME if it qualifies, else the newest qualifying JDK under /usr/lib/jvm.
hadronio_find_jdk() {
  local v
  if [ -n "${JAVA_HOME:-}" ]; then
    v="$(hadronio_jdk_version "$JAVA_HOME")"
    if [ -n "$v" ] && [ "$v" -ge "$HADRONIO_MIN_JDK" ]; then
      echo "$JAVA_HOME"; return 0
    fi
  fi
  local best="" best_v=0 d
  for d in /usr/lib/jvm/*; do
    [ -d "$d" ] || continue
    v="$(hadronio_jdk_version "$d")"
    if [ -n "$v" ] && [ "$v" -ge "$HADRONIO_MIN_JDK" ] && [ "$v" -gt "$best_v" ]; then
      best="$d"; best_v="$v"
    fi
  done
  [ -n "$best" ] && echo "$best"
}

hadronio_require_jdk() {
  local jdk
  jdk="$(hadronio_find_jdk)"
  if [ -z "$jdk" ]; then
    cat >&2 <<MSG
hadroNIO needs a JDK >= $HADRONIO_MIN_JDK (java.lang.foreign is final from 22 on), and none was found
(JAVA_HOME=${JAVA_HOME:-unset}; looked in /usr/lib/jvm/*).
Install one, e.g. Temurin 25 (https://adoptium.net) or Debian's openjdk-25-jdk where available,
or point JAVA_HOME at it.
MSG
    exit 1
  fi
  export JAVA_HOME="$jdk"
  export PATH="$JAVA_HOME/bin:$PATH"
  # Maven's own libraries use sun.misc.Unsafe; JDK 24+ warns about it unless told otherwise
  if [ "$(hadronio_jdk_version "$jdk")" -ge 24 ]; then
    case " ${MAVEN_OPTS:-} " in *sun-misc-unsafe*) ;; *) export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow";; esac
  fi
}

# True when the UCX runtime, tools and headers are all there.
hadronio_ucx_present() {
  { [ -e /usr/lib/x86_64-linux-gnu/libucp.so.0 ] || [ -e /usr/lib/aarch64-linux-gnu/libucp.so.0 ] \
      || ldconfig -p 2>/dev/null | grep -q 'libucp\.so\.0'; } \
    && command -v ucx_perftest >/dev/null 2>&1 \
    && [ -e /usr/include/ucp/api/ucp.h ]
}

# hadronio_apt_install WHAT PACKAGES...: installs PACKAGES with apt-get when run as root, else says
# which command would (WHAT names them in the messages); exits when it cannot.
hadronio_apt_install() {
  local what="$1"; shift
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "hadroNIO: installing $what ($*) with apt-get ..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq "$@" >&2 || {
      echo "hadroNIO: 'apt-get install $*' failed; install $what and retry." >&2; exit 1; }
  else
    cat >&2 <<MSG
hadroNIO needs $what. Install it as root:
    sudo apt-get update && sudo apt-get install -y $*
MSG
    exit 1
  fi
}

hadronio_require_ucx() {
  hadronio_ucx_present && return 0
  hadronio_apt_install "UCX >= 1.13 (runtime, tools and headers)" libucx0 ucx-utils libucx-dev
}

# A C compiler builds the provider's JNI library (provider/src/main/c); without one the build goes
# on without it, and a JVM's first connect costs ~0.1 s more.
hadronio_require_cc() {
  command -v "${CC:-cc}" >/dev/null 2>&1 && return 0
  hadronio_apt_install "a C compiler (for the provider's JNI library)" gcc
}

hadronio_setup() {
  hadronio_require_jdk
  hadronio_require_ucx
  hadronio_require_cc
}
