#!/bin/sh
# Builds hadroNIO's JNI library (hadronio_grant.c) into the provider's classes, for this machine's
# architecture: build.sh JAVA_HOME OUTPUT_DIR OS_ARCH. Without a C compiler it builds nothing and
# says so: the provider then takes the slower route to the same call (NativeGrant's comment).
set -eu
java_home="$1"; out="$2/io/hadronio/native/linux-$3"; src="$(dirname "$0")/hadronio_grant.c"
cc="${CC:-cc}"
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "[WARNING] hadroNIO: no C compiler ($cc): the provider jar goes without its JNI library;" \
       "a JVM's first connect then costs ~0.1 s more (install gcc)" >&2
  exit 0
fi
mkdir -p "$out"
# a compiler that cannot build it (no jni.h, a toolchain problem) leaves the jar without it, as no
# compiler does: the provider still works, and JdkInternalsTest reports the missing library
if ! "$cc" -O2 -s -shared -fPIC -Wall -o "$out/libhadronio_grant.so" \
    -I"$java_home/include" -I"$java_home/include/linux" "$src"; then
  rm -f "$out/libhadronio_grant.so"
  echo "[WARNING] hadroNIO: $cc could not build the JNI library (above); the provider jar goes without it" >&2
fi
