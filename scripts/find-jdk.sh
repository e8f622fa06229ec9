#!/usr/bin/env bash
# Prints the home of the newest JDK >= 21 on this machine, or fails with a clear message.
# Looks at $JAVA_HOME, `java` on the PATH, then the usual JVM directories.
# Usage: JAVA_HOME=$(scripts/find-jdk.sh) || exit 1
set -u
min=21

version_of() { # $1 = JDK home; prints the feature version (e.g. 25) or nothing
  local rel="$1/release" v
  if [ -r "$rel" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$rel" | head -n1)
    [ "$v" = "1" ] && v=8
  fi
  if [ -z "${v:-}" ] && [ -x "$1/bin/java" ]; then
    v=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n1)
  fi
  printf '%s' "${v:-}"
}

candidates=()
[ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
if command -v java >/dev/null 2>&1; then
  j=$(readlink -f "$(command -v java)")
  candidates+=("${j%/bin/java}")
fi
# SUPERVISOR_JDK_SEARCH (colon-separated directories whose children are JDK homes) replaces the usual places.
if [ -n "${SUPERVISOR_JDK_SEARCH:-}" ]; then
  IFS=: read -r -a roots <<< "$SUPERVISOR_JDK_SEARCH"
  globs=()
  for r in "${roots[@]}"; do globs+=("$r"/*); done
else
  globs=(/usr/lib/jvm/* /usr/java/* /opt/java/* /opt/jdk* /opt/*jdk* /usr/local/*jdk* \
         "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/* /Library/Java/JavaVirtualMachines/*/Contents/Home)
fi
for d in "${globs[@]}"; do
  [ -d "$d" ] && candidates+=("$d")
done

best="" best_v=0
for c in "${candidates[@]}"; do
  [ -x "$c/bin/java" ] && [ -x "$c/bin/javac" ] && [ -x "$c/bin/jlink" ] || continue
  v=$(version_of "$c")
  [ -n "$v" ] || continue
  if [ "$v" -ge "$min" ] && [ "$v" -gt "$best_v" ]; then
    best=$(readlink -f "$c"); best_v=$v
  fi
done

if [ -z "$best" ]; then
  {
    echo "error: no JDK $min or newer found (the supervisor needs one: Helidon 4 requires Java $min+)."
    echo "  looked at: \$JAVA_HOME, java on the PATH, ${SUPERVISOR_JDK_SEARCH:-/usr/lib/jvm, /usr/java, /opt, ~/.sdkman, ~/.jdks}"
    echo "  install one (for example: apt-get install openjdk-21-jdk-headless) or set JAVA_HOME to it."
  } >&2
  exit 1
fi
printf '%s\n' "$best"
