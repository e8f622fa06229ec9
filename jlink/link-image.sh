#!/usr/bin/env bash
# Links the runtime image: every module in MODULES_DIR (explicit modules only; automatic ones were given a
# descriptor by moditect first), rooted at the CLI, the built-ins and the JSON provider.
# Usage: link-image.sh JDK_HOME MODULES_DIR OUTPUT_DIR ROOT_MODULES(comma-separated)
set -euo pipefail
jdk=$1 mods=$2 out=$3 roots=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
"$jdk/bin/jlink" \
  --module-path "$mods" \
  --add-modules "$roots" \
  --output "$out" \
  --strip-debug --no-header-files --no-man-pages \
  --ignore-signing-information \
  --generate-cds-archive \
  --vm=server
cp "$here/src/bin/supervisor" "$out/bin/supervisor"
chmod +x "$out/bin/supervisor"
mkdir -p "$out/plugins"
cat > "$out/plugins/README.txt" <<'EOT'
Drop third-party middleware plugin JARs (or directories of JARs, one per plugin) here.
Each is loaded into its own module layer at start-up; `bin/supervisor plugins` lists what loaded.
EOT
echo "runtime image: $out ($(du -sh "$out" | cut -f1)); modules: $("$out/bin/java" --list-modules | wc -l)"
