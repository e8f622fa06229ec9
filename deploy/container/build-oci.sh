#!/usr/bin/env bash
# Builds the supervisor's OCI image as an OCI archive (a tar of an OCI image layout), without a container engine:
# umoci writes the layers and the image configuration, skopeo fetches a base image when one is named.
#
# Usage: build-oci.sh IMAGE_DIR OUT_TAR VERSION [BASE]
#   IMAGE_DIR  the jlink runtime image (jlink/target/image); it becomes /opt/supervisor in the image
#   OUT_TAR    the OCI archive to write (for example jlink/target/oci/supervisor.tar); its tag is VERSION
#   VERSION    the image's version (tag and org.opencontainers.image.version)
#   BASE       the base image: "debian-packages" (the default) assembles a minimal base here from Debian's own
#              packages (libc6 and busybox-static, fetched with apt-get download: no registry needed); anything else
#              is a skopeo image reference, for example docker://debian:bookworm-slim or
#              oci-archive:/path/base.tar. The base must provide glibc (the runtime links only libc, libm, libdl,
#              libpthread, librt and the dynamic loader) and a POSIX sh with dirname, ls and sed for bin/supervisor.
#
# The image: the runtime under /opt/supervisor, owned by root and read-only to the process; the process runs as
# the non-root user 65532:65532 ("supervisor"); volumes /var/lib/supervisor (state: the generated CA, the audit log)
# and /opt/supervisor/plugins (drop-in plugins); entrypoint `bin/supervisor run --state-dir /var/lib/supervisor`;
# default arguments listen on all interfaces (proxy 3128, admin 9464); OCI labels version, source, licence, revision.
# Environment: SOURCE_URL, REVISION, LICENSE (SPDX) override the labels' values; KEEP_WORK=1 keeps the work files.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '4,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
image_dir=$(cd "$1" && pwd) out=$2 version=$3 base=${4:-debian-packages}
[ -x "$image_dir/bin/supervisor" ] || { echo "error: $image_dir/bin/supervisor is missing: build the runtime image first (./dev.sh build)" >&2; exit 1; }
for tool in umoci tar; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed (Debian: apt-get install umoci skopeo)" >&2; exit 1; }
done
source_url=${SOURCE_URL:-https://github.com/NVIDIA/OpenShell}
license=${LICENSE:-Apache-2.0}
revision=${REVISION:-$(git -C "$(dirname "$0")" rev-parse HEAD 2>/dev/null || echo unknown)}
uid=65532
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
work=$out.work
rm -rf "$work" "$out"
mkdir -p "$work"
cleanup() { [ "${KEEP_WORK:-0}" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT
layout=$work/layout
# umoci keeps file owners only when it runs as root; otherwise it maps them to the caller (--rootless)
rootless=()
[ "$(id -u)" = 0 ] || rootless=(--rootless)

if [ "$base" = debian-packages ]; then
  echo "==> base: assembled from Debian packages (libc6, busybox-static)"
  mkdir -p "$work/debs" "$work/base"
  (cd "$work/debs" && apt-get download -qq libc6 busybox-static 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  ls "$work"/debs/libc6_*.deb "$work"/debs/busybox-static_*.deb >/dev/null \
    || { echo "error: apt-get download libc6 busybox-static failed (run apt-get update first)" >&2; exit 1; }
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/base"; done
  b=$work/base
  rm -rf "$b/usr/share/doc" "$b/usr/share/man" "$b/usr/share/lintian" "$b/usr/share/locale"
  mkdir -p "$b/bin" "$b/etc" "$b/tmp" "$b/var/lib" "$b/usr/bin" "$b/proc" "$b/dev" "$b/sys"
  chmod 1777 "$b/tmp"
  # the launcher's commands (sh, dirname, ls, sed) and a few for debugging, all from busybox
  for cmd in sh dirname ls sed cat env id ps; do ln -sf busybox "$b/bin/$cmd"; done
  cat > "$b/etc/passwd" <<EOT
root:x:0:0:root:/root:/sbin/nologin
supervisor:x:$uid:$uid:supervisor:/var/lib/supervisor:/sbin/nologin
EOT
  cat > "$b/etc/group" <<EOT
root:x:0:
supervisor:x:$uid:
EOT
  printf 'hosts: files dns\n' > "$b/etc/nsswitch.conf"
  umoci init --layout "$layout"
  umoci new --image "$layout:base"
  umoci unpack "${rootless[@]}" --image "$layout:base" "$work/bundle-base"
  cp -a "$b/." "$work/bundle-base/rootfs/"
  umoci repack --image "$layout:base" --history.created_by "build-oci.sh: libc6 and busybox-static from Debian" \
    "$work/bundle-base"
  rm -rf "$work/bundle-base"
else
  command -v skopeo >/dev/null || { echo "error: skopeo is not installed (Debian: apt-get install skopeo)" >&2; exit 1; }
  echo "==> base: $base"
  skopeo copy --quiet "$base" "oci:$layout:base"
fi

echo "==> layer: the runtime image under /opt/supervisor"
umoci unpack "${rootless[@]}" --image "$layout:base" "$work/bundle"
root=$work/bundle/rootfs
mkdir -p "$root/opt" "$root/var/lib/supervisor"
cp -a "$image_dir" "$root/opt/supervisor"
mkdir -p "$root/opt/supervisor/plugins"
if [ "$(id -u)" = 0 ]; then
  chown -R 0:0 "$root/opt/supervisor"
  chown "$uid:$uid" "$root/var/lib/supervisor"
fi
chmod -R go-w "$root/opt/supervisor"
chmod 0700 "$root/var/lib/supervisor"
# an /etc/passwd entry for the user, when the base has none (getpwuid: the JVM's user.home)
if [ -f "$root/etc/passwd" ] && ! grep -q ":x:$uid:" "$root/etc/passwd"; then
  echo "supervisor:x:$uid:$uid:supervisor:/var/lib/supervisor:/sbin/nologin" >> "$root/etc/passwd"
  [ -f "$root/etc/group" ] && ! grep -q ":x:$uid:" "$root/etc/group" && echo "supervisor:x:$uid:" >> "$root/etc/group"
fi
umoci repack --image "$layout:$version" --history.created_by "build-oci.sh: jlink runtime image" "$work/bundle"

created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
labels=(
  "org.opencontainers.image.title=openshell-supervisor"
  "org.opencontainers.image.description=OpenShell supervisor middleware: egress proxy for AI-agent sandboxes (RFC 0009)"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.source=$source_url"
  "org.opencontainers.image.licenses=$license"
  "org.opencontainers.image.revision=$revision"
  "org.opencontainers.image.created=$created"
)
args=(--image "$layout:$version"
  --clear=config.labels --clear=config.entrypoint --clear=config.cmd --clear=config.volume --clear=config.exposedports
  --config.user "$uid:$uid" --config.workingdir /var/lib/supervisor
  --config.env PATH=/opt/supervisor/bin:/usr/local/bin:/usr/bin:/bin
  --config.entrypoint /opt/supervisor/bin/supervisor --config.entrypoint run
  --config.entrypoint --state-dir --config.entrypoint /var/lib/supervisor
  --config.cmd --listen --config.cmd 0.0.0.0:3128 --config.cmd --admin-listen --config.cmd 0.0.0.0:9464
  --config.volume /var/lib/supervisor --config.volume /opt/supervisor/plugins
  --config.exposedports 3128/tcp --config.exposedports 9464/tcp
  --history.created_by "build-oci.sh: user, entrypoint, volumes, labels")
for l in "${labels[@]}"; do args+=(--config.label "$l" --manifest.annotation "$l"); done
umoci config "${args[@]}"
umoci rm --image "$layout:base"
umoci gc --layout "$layout"
# an OCI archive is a tar of the layout (what skopeo's oci-archive: transport and podman load read)
tar -C "$layout" --sort=name --owner=0 --group=0 --numeric-owner -cf "$out" .
echo "==> OCI archive: $out (tag $version, $(du -h "$out" | cut -f1))"
