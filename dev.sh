#!/usr/bin/env bash
# Developer entry point: finds a JDK >= 21 (the machine default may be older), then builds, tests or demos.
#   ./dev.sh demo      build the runtime image (tests skipped) and run the main job (supervisor demo)
#   ./dev.sh test      run the whole test suite (unit, property, integration)
#   ./dev.sh build     build the runtime image only (jlink/target/image)
#   ./dev.sh container [--base REF]  build the image, then its OCI archive jlink/target/oci/supervisor.tar (umoci;
#                      REF: a skopeo base image reference, default assembled from Debian packages; docs/deployment.md)
#   ./dev.sh goldens   rewrite module-info-docs/*.describe.txt from the built JARs (review the diff!)
#   ./dev.sh mvn ARGS  run the Maven wrapper with the JDK found
set -euo pipefail
cd "$(dirname "$0")"
JAVA_HOME=$(scripts/find-jdk.sh) || exit 1
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"
mvn=(./mvnw -B -ntp)
image=jlink/target/image

build_image() {
  echo "==> building the runtime image with $JAVA_HOME (tests skipped; ./dev.sh test runs them)"
  "${mvn[@]}" -q -DskipTests -Dmaven.test.skip.exec=true package "$@"
  echo "==> image ready: $image/bin/supervisor"
}

cmd=${1:-help}
[ $# -gt 0 ] && shift
case "$cmd" in
  demo)
    build_image
    echo "==> $image/bin/supervisor demo"
    "$image/bin/supervisor" demo
    ;;
  test)
    echo "==> running the whole test suite with $JAVA_HOME"
    "${mvn[@]}" verify "$@"
    ;;
  build)
    build_image "$@"
    ;;
  container)
    base=()
    if [ "${1:-}" = --base ]; then
      [ $# -ge 2 ] || { echo "usage: ./dev.sh container [--base REF] [MAVEN ARGS]" >&2; exit 2; }
      base=("-Dcontainer.base=$2")
      shift 2
    fi
    # the tools deploy/container/build-oci.sh runs: checked before a build that would fail only after minutes
    tools=(umoci tar)
    case "${base[0]:-}" in
      ""|-Dcontainer.base=debian-packages) tools+=(apt-get dpkg-deb) ;;
      *) tools+=(skopeo) ;;
    esac
    for tool in "${tools[@]}"; do
      command -v "$tool" >/dev/null 2>&1 || {
        echo "error: $tool is not installed; ./dev.sh container needs ${tools[*]} (Debian: apt-get install umoci skopeo)" >&2
        exit 1
      }
    done
    build_image -Pcontainer ${base[@]+"${base[@]}"} "$@"
    echo "==> OCI archive: jlink/target/oci/supervisor.tar (skopeo inspect oci-archive:jlink/target/oci/supervisor.tar)"
    ;;
  goldens)
    "${mvn[@]}" -q verify -Dgoldens.update=true -Dit.test=ModuleDescriptorGoldenIT -Dtest=none \
      -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false "$@"
    git status --short module-info-docs
    ;;
  mvn)
    "${mvn[@]}" "$@"
    ;;
  help|-h|--help)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    ;;
  *)
    echo "unknown command: $cmd (try ./dev.sh help)" >&2
    exit 2
    ;;
esac
