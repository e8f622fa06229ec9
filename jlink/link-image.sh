#!/usr/bin/env bash
# Links the runtime image: every module in MODULES_DIR (explicit modules only; automatic ones were given a
# descriptor by moditect first), rooted at the CLI, the built-ins and the JSON provider.
# Then, on JDK 25 and later, trains the image's AOT cache (lib/supervisor.aot; JEP 483/514) with src/aot/
# AotTraining.java: `bin/supervisor run` serving a few thousand proxied requests. A failed training run fails the
# build: it is also a smoke test of the image, and an image without its cache would silently miss the start-up target.
# AOT=false (Maven: -Dimage.aot=false) or an older JDK links the image without a cache. Training files go to WORK_DIR (under target/).
# The plugin SDK goes to lib/sdk/: the SPI JAR, its standalone POM (SDK_DIR, from src/sdk), its sources and Javadoc JARs,
# for `supervisor sdk install`.
# Signature files of signed JARs (BouncyCastle, Eclipse Collections) are left out of the modules jlink reads: jlink drops
# them anyway (--ignore-signing-information) and would otherwise warn once per JAR.
# Usage: link-image.sh JDK_HOME MODULES_DIR OUTPUT_DIR ROOT_MODULES(comma-separated) [AOT(true|false) WORK_DIR [SDK_DIR VERSION]]
set -euo pipefail
jdk=$1 mods=$2 out=$3 roots=$4 aot=${5:-true} work=${6:-$3.aot-training} sdk=${7:-} version=${8:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
"$jdk/bin/java" "$here/src/build/StripSignatures.java" "$mods"
# --compress=zip-6: the class files in lib/modules are deflated (129 MB -> 49 MB of entries); a class is inflated once,
# when it is first loaded, and the classes start-up loads come from the AOT cache instead. zip-9 saves 0.15 MB of the
# 51.4 (measured; docs/BENCHMARKS.md, "Image size"), not worth the longer link.
# The default CDS archives (--generate-cds-archive, 30 MB for two of them) are made only for an image without an AOT
# cache: the cache holds the same JDK classes and more, and a JVM running with it never maps them.
cds=()
feature_jdk=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
if [ "$aot" != true ] || [ "${feature_jdk:-0}" -lt 25 ]; then
  cds=(--generate-cds-archive)
fi
"$jdk/bin/jlink" \
  --module-path "$mods" \
  --add-modules "$roots" \
  --output "$out" \
  --strip-debug --no-header-files --no-man-pages \
  --compress=zip-6 \
  --ignore-signing-information \
  ${cds[@]+"${cds[@]}"} \
  --vm=server
# libjvm.so without its symbol table (.symtab, 5 MB of the 30): the dynamic symbols stay, so the JVM still runs and
# links as before; only a crash report (hs_err) then names JVM frames by offset (libjvm.so+0x...), which the same
# JDK build's unstripped libjvm.so resolves (so do NMT's detail reports and native profilers). The CDS archive of an
# image without AOT cache still maps (it checks the JVM's version string, not the library). Skipped, with a note,
# where binutils' strip is missing.
if [ ! -f "$out/lib/server/libjvm.so" ]; then
  : # not a Linux image: nothing to strip
elif command -v strip >/dev/null 2>&1; then
  strip --strip-unneeded "$out/lib/server/libjvm.so"
else
  echo "note: strip (binutils) not found; lib/server/libjvm.so keeps its symbol table (5 MB)"
fi
# Security providers: the image lists the JDK's first five (SUN, SunRsaSign, SunEC, SunJSSE, SunJCE; all in java.base
# from JDK 22 on), which serve every key, certificate, signature and TLS operation the supervisor makes. The JDK's
# list goes on with providers of modules the image does not link (SunPKCS11, XMLDSig, ...) and JdkLDAP (LDAP certificate stores, never used here); a
# JCA lookup that the first five do not answer then loads those by ServiceLoader, which instantiates every Provider
# service in the image on the way: BouncyCastle's two (860 classes; 2.5 MB of the AOT cache). An operator who needs
# another provider adds it with -Djava.security.properties=FILE (docs/operators.md).
security="$out/conf/security/java.security"
if [ -f "$security" ]; then
  awk '!/^security\.provider\.[0-9]+=/ || /^security\.provider\.[1-5]=(SUN|SunRsaSign|SunEC|SunJSSE|SunJCE)$/' \
    "$security" > "$security.tmp" && mv "$security.tmp" "$security"
  if [ "$(grep -c '^security\.provider\.' "$security")" != 5 ]; then
    echo "error: $security does not list security.provider.1-5 as SUN, SunRsaSign, SunEC, SunJSSE, SunJCE" >&2
    exit 1
  fi
fi
cp "$here/src/bin/supervisor" "$out/bin/supervisor"
chmod +x "$out/bin/supervisor"
mkdir -p "$out/plugins"
cat > "$out/plugins/README.txt" <<'EOT'
Drop third-party middleware plugin JARs (or directories of JARs, one per plugin) here.
Each is loaded into its own module layer at start-up, and only when the gateway configuration pins it with the
SHA-256 of its bytes: `bin/supervisor plugins --plugins DIR --pin` prints the entries to paste
([[openshell.supervisor.plugin_pins]]); an unpinned or changed entry is refused before any of its code runs.
`bin/supervisor plugins` lists what loaded and why anything was refused. `bin/supervisor new plugin DIR` generates a
plugin project that builds reproducibly (a rebuild keeps its pin); see docs/plugin-authors.md.
EOT
if [ -n "$sdk" ]; then
  mkdir -p "$out/lib/sdk"
  cp "$mods/middleware-spi-$version.jar" "$out/lib/sdk/middleware-spi-$version.jar"
  cp "$sdk/middleware-spi.pom" "$out/lib/sdk/middleware-spi-$version.pom"
  # its sources and Javadoc (the exported package only), as Maven's -sources and -javadoc JARs, so that an IDE shows
  # the SPI's documentation to a plugin author
  spisrc="$here/../modules/middleware-spi/src/main/java"
  docs=$(mktemp -d)
  "$jdk/bin/jar" --create --date=2026-01-01T00:00:00Z --file "$out/lib/sdk/middleware-spi-$version-sources.jar" \
    -C "$spisrc" .
  # --no-fonts (JDK 23+): the web fonts are most of the JAR's size, and browsers have their own
  nofonts=$("$jdk/bin/javadoc" --help 2>&1 | grep -q -- '--no-fonts' && echo --no-fonts || true)
  "$jdk/bin/javadoc" -quiet -Xdoclint:none $nofonts --module-path "$mods:$(dirname "$mods")/sdk-deps" \
    --module-source-path "dev.openshell.middleware.spi=$spisrc" --module dev.openshell.middleware.spi \
    -d "$docs/api" -windowtitle "OpenShell supervisor middleware SPI $version" >"$docs/javadoc.log" 2>&1 \
    || { cat "$docs/javadoc.log" >&2; exit 1; }
  "$jdk/bin/jar" --create --date=2026-01-01T00:00:00Z --file "$out/lib/sdk/middleware-spi-$version-javadoc.jar" \
    -C "$docs/api" .
  rm -rf "$docs"
  cat > "$out/lib/sdk/README.txt" <<EOT
The middleware SPI for plugin authors: build a plugin against it from outside this repository.
  bin/supervisor sdk install        puts them (JAR, POM, sources, Javadoc) into ~/.m2/repository (--maven-repo DIR for another)
or, with Maven:
  mvn install:install-file -Dfile=middleware-spi-$version.jar -DpomFile=middleware-spi-$version.pom \
    -Dsources=middleware-spi-$version-sources.jar -Djavadoc=middleware-spi-$version-javadoc.jar
Then depend on dev.openshell.supervisor:middleware-spi:$version (scope provided); see docs/plugin-authors.md.
EOT
fi
echo "runtime image: $out ($(du -sh "$out" | cut -f1)); modules: $("$out/bin/java" --list-modules | wc -l)"

feature=$(sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$out/release")
if [ "$aot" != true ]; then
  echo "AOT cache: skipped (image.aot=$aot)"
elif [ "${feature:-0}" -lt 25 ]; then
  echo "AOT cache: skipped (the image's Java is $feature; the one-step AOT cache needs 25 or later)"
else
  rm -rf "$work"
  mkdir -p "$work"
  started=$SECONDS
  # AotTraining bounds itself (watchdog: 300 s); the supervisor it trains is the image's own bin/supervisor
  if ! "$jdk/bin/java" "$here/src/aot/AotTraining.java" "$out" "$out/lib/supervisor.aot" "$work"; then
    rm -f "$out/lib/supervisor.aot"
    echo "error: the AOT training run failed (its files: $work); -Dimage.aot=false builds the image without a cache" >&2
    exit 1
  fi
  # the launcher as shipped must use the cache cleanly: AOTMode=on makes the JVM fail rather than skip an unusable
  # cache, and a cached start prints no JVM warning
  if ! warnings=$(SUPERVISOR_JAVA_OPTS="-XX:AOTMode=on" "$out/bin/supervisor" --version 2>&1 >/dev/null) \
      || [ -n "$warnings" ]; then
    rm -f "$out/lib/supervisor.aot"
    echo "error: bin/supervisor cannot use the AOT cache it was trained for: ${warnings:-(no message)}" >&2
    exit 1
  fi
  # Its size (52 MB, 7,000 classes at about 7 KB each) follows the classes the training loads, and the JVM loads every
  # class of an AOT-linked cache when it starts, before main, whether the run needs it or not. Measured against a
  # smaller cache (docs/BENCHMARKS.md, "Image size"): a training of the start and one request makes 47.4 MB (the
  # first requests then load the rest from lib/modules); -XX:-AOTClassLinking 47.8 MB, at 40 % more CPU to ready.
  echo "AOT cache: lib/supervisor.aot ($(du -h "$out/lib/supervisor.aot" | cut -f1)), trained in $((SECONDS - started)) s"
  rm -rf "$work"
fi
