#!/usr/bin/env bash
# Builds bundle/: everything needed to run our GPU tests and benchmarks on a bare GPU host that has the
# NVIDIA driver but no JDK, no Maven and no network.
#
# Usage: scripts/make-gpu-bundle.sh [--no-build]
#   --no-build   reuse the jars already under */target (default: mvn -B -q -DskipTests package first)
#
# Needs here: a JDK 17 with jmods (jlink, jdeps; taken from JDK_HOME, else JAVA_HOME, else the javac on
# PATH), Maven, and nvcc for the build (the bundle refuses a native-kernels jar without kernels).
# Environment: MVN (default mvn), MVN_ARGS (extra Maven flags, e.g. -o for offline),
#              BUNDLE_MAX_BYTES (default 60000000: the bundle must travel inside a 64 MiB transfer together
#              with the working tree), BUNDLE_MODULES (override the jlink module list).
#
# Result (bundle/ is gitignored; it is what you carry to the GPU host):
#   bundle/bin/run               entry point: gpu-tests | bench kmeans [args] | info | java ...
#   bundle/jre/                  jlinked Java runtime (only the modules our jars need)
#   bundle/lib/*.jar             runtime classpath: our jars, JCuda (driver natives only), slf4j-api + simple
#   bundle/lib/test/             spark-gpu tests jar and the JUnit Platform console launcher
#   bundle/BUILD-INFO.txt        commit, date, JDK, modules and jar list
#
# On the GPU host: bundle/bin/run info; bundle/bin/run gpu-tests; bundle/bin/run bench kmeans
# (docs/gpu-bundle.md has the details).
set -euo pipefail

ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
OUTDIR="$ROOT/bundle"
WORK="$ROOT/.bundle-work"
MVN="${MVN:-mvn}"
# shellcheck disable=SC2206  # MVN_ARGS is a word list on purpose
MVN_EXTRA=(${MVN_ARGS:-})
MAX_BYTES="${BUNDLE_MAX_BYTES:-60000000}"
BUILD=1

for arg in "$@"; do
    case "$arg" in
        --no-build) BUILD=0 ;;
        -h | --help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "make-gpu-bundle: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

die() {
    echo "make-gpu-bundle: $*" >&2
    exit 1
}
step() {
    echo "== $*"
}

# ---------------------------------------------------------------- JDK
if [[ -n "${JDK_HOME:-}" ]]; then
    JDK="$JDK_HOME"
elif [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/jlink" ]]; then
    JDK="$JAVA_HOME"
else
    javac_path="$(command -v javac || true)"
    [[ -n "$javac_path" ]] || die "no JDK found: set JDK_HOME or JAVA_HOME to a JDK 17 with jmods"
    JDK="$(dirname "$(dirname "$(readlink -f "$javac_path")")")"
fi
[[ -x "$JDK/bin/jlink" && -x "$JDK/bin/jdeps" && -x "$JDK/bin/jar" ]] || die "$JDK has no jlink/jdeps/jar"
[[ -f "$JDK/jmods/java.base.jmod" ]] || die "$JDK has no jmods (on Debian/Ubuntu: apt-get install openjdk-17-jdk-headless)"
jdk_version="$("$JDK/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.version = //p')"
[[ "$jdk_version" == 17* ]] || echo "make-gpu-bundle: warning: bundling Java $jdk_version; the project targets 17" >&2

# ---------------------------------------------------------------- build
cd "$ROOT"
if [[ "$BUILD" == 1 ]]; then
    step "building (mvn -B -q -DskipTests package ${MVN_EXTRA[*]:-})"
    "$MVN" -B -q ${MVN_EXTRA[@]+"${MVN_EXTRA[@]}"} -DskipTests package
fi

one_jar() { # one_jar DIR PATTERN: the single jar matching, or fail
    local matches=()
    shopt -s nullglob
    # shellcheck disable=SC2206
    matches=($1/$2)
    shopt -u nullglob
    local keep=()
    for m in ${matches[@]+"${matches[@]}"}; do
        [[ "$m" == *-sources.jar || "$m" == *-javadoc.jar ]] || keep+=("$m")
    done
    [[ ${#keep[@]} -eq 1 ]] || die "expected one $1/$2, found ${#keep[@]} (run without --no-build, or mvn clean)"
    echo "${keep[0]}"
}
KERNELS_JAR="$(one_jar native-kernels/target 'native-kernels-*[0-9T].jar')"
LIB_JAR="$(one_jar spark-gpu/target 'spark-gpu-*[0-9T].jar')"
TESTS_JAR="$(one_jar spark-gpu/target 'spark-gpu-*-tests.jar')"
JOBS_JAR="$(one_jar spark-jobs/target 'spark-jobs-*[0-9T].jar')"
"$JDK/bin/jar" tf "$KERNELS_JAR" | grep -q '^io/sparkgpu/kernels/kmeans.fatbin$' \
    || die "$KERNELS_JAR has no kernels (built with -DskipNvcc?); rebuild with nvcc on PATH"

# ---------------------------------------------------------------- third-party jars
junit_version="$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' pom.xml | head -1)"
[[ "$junit_version" =~ ^5\.([0-9]+\.[0-9]+.*)$ ]] || die "cannot read a JUnit 5 version from pom.xml (got '$junit_version')"
platform_version="1.${BASH_REMATCH[1]}"
rm -rf "$WORK"
mkdir -p "$WORK/deps" "$WORK/natives"
step "resolving JCuda, slf4j and JUnit console launcher $platform_version"
"$MVN" -B -q ${MVN_EXTRA[@]+"${MVN_EXTRA[@]}"} -f scripts/gpu-bundle/pom.xml dependency:copy-dependencies \
    -DoutputDirectory="$WORK/deps" -DexcludeTransitive=true -Dbundle.junit.platform.version="$platform_version"
JCUDA_JAR="$(one_jar "$WORK/deps" 'jcuda-[0-9]*.jar')"
NATIVES_JAR="$(one_jar "$WORK/deps" 'jcuda-natives-*-linux-x86_64.jar')"
SLF4J_API="$(one_jar "$WORK/deps" 'slf4j-api-*.jar')"
SLF4J_SIMPLE="$(one_jar "$WORK/deps" 'slf4j-simple-*.jar')"
LAUNCHER_JAR="$(one_jar "$WORK/deps" 'junit-platform-console-standalone-*.jar')"

# ---------------------------------------------------------------- assemble
step "assembling $OUTDIR"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR/bin" "$OUTDIR/lib/test"
cp "$KERNELS_JAR" "$LIB_JAR" "$JOBS_JAR" "$JCUDA_JAR" "$SLF4J_API" "$SLF4J_SIMPLE" "$OUTDIR/lib/"
cp "$TESTS_JAR" "$LAUNCHER_JAR" "$OUTDIR/lib/test/"

# We use the driver API only: keep libJCudaDriver and drop the runtime, NVRTC and nvPTX libraries (~25 MB).
(cd "$WORK/natives" && "$JDK/bin/jar" xf "$NATIVES_JAR")
shopt -s nullglob
driver_libs=("$WORK"/natives/lib/libJCudaDriver-*.so)
shopt -u nullglob
[[ ${#driver_libs[@]} -eq 1 ]] || die "no single lib/libJCudaDriver-*.so in $NATIVES_JAR"
natives_name="$(basename "$NATIVES_JAR" .jar)-driver-only.jar"
"$JDK/bin/jar" --create --file "$OUTDIR/lib/$natives_name" -C "$WORK/natives" "lib/$(basename "${driver_libs[0]}")"

# ---------------------------------------------------------------- Java runtime
# Modules jdeps cannot see: jdk.zipfs is the "jar:" file system JUnit uses to scan the tests jar (found
# through a service lookup, so a runtime without it silently finds no test); java.management and
# jdk.unsupported (sun.misc.Unsafe) are common in test code and libraries.
DEFAULT_EXTRA_MODULES="jdk.zipfs,java.management,jdk.unsupported"
if [[ -n "${BUNDLE_MODULES:-}" ]]; then
    modules="$BUNDLE_MODULES"
else
    step "finding the JDK modules the jars need (jdeps)"
    found="$("$JDK/bin/jdeps" --multi-release 17 --ignore-missing-deps --print-module-deps \
        "$OUTDIR"/lib/*.jar "$OUTDIR"/lib/test/*.jar)" || die "jdeps failed; set BUNDLE_MODULES to bypass"
    modules="$(echo "$found,$DEFAULT_EXTRA_MODULES" | tr ',' '\n' | sed '/^$/d' | sort -u)"
    if echo "$modules" | grep -qx 'java.desktop'; then
        echo "make-gpu-bundle: warning: a jar references java.desktop (AWT/Swing); left out of the runtime" >&2
        modules="$(echo "$modules" | grep -vx 'java.desktop')"
    fi
    modules="$(echo "$modules" | paste -sd, -)"
fi
step "jlink --add-modules $modules"
"$JDK/bin/jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --compress=2 \
    --output "$OUTDIR/jre"

install -m 0755 scripts/gpu-bundle/run "$OUTDIR/bin/run"

{
    echo "spark-gpu GPU bundle"
    echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "java runtime: $jdk_version from $JDK; modules: $modules"
    echo "jars:"
    (cd "$OUTDIR" && find lib -name '*.jar' -printf '  %p %s\n' | sort)
} > "$OUTDIR/BUILD-INFO.txt"

# ---------------------------------------------------------------- smoke test and size
step "smoke test"
"$OUTDIR/bin/run" java -version 2>&1 | sed 's/^/  /'
"$OUTDIR/bin/run" java io.sparkgpu.jobs.bench.KMeansBenchmark --help > /dev/null \
    || die "the bundled runtime cannot start the benchmark"
# Test discovery must scan the tests jar cleanly (a missing module shows up only as a logged warning).
if ! discovery="$(OUT="$WORK/reports" "$OUTDIR/bin/run" gpu-tests --include-tag no-such-tag-smoke-test 2>&1)"; then
    echo "$discovery" >&2
    die "the bundled JUnit launcher failed"
fi
if grep -qiE 'error scanning|exception' <<< "$discovery"; then
    echo "$discovery" | head -20 >&2
    die "the bundled JUnit launcher could not scan the tests jar"
fi
echo "  java starts, benchmark loads, JUnit scans the tests jar"
rm -rf "$WORK"

bytes="$(du -sb "$OUTDIR" | cut -f1)"
echo "bundle: $OUTDIR"
(cd "$OUTDIR" && du -sh jre lib bin | sed 's/^/  /')
awk -v b="$bytes" -v m="$MAX_BYTES" 'BEGIN { printf "bundle size: %d bytes = %.1f MB = %.1f MiB (limit %.1f MB)\n", b, b/1e6, b/1048576, m/1e6 }'
if (( bytes > MAX_BYTES )); then
    die "bundle is $bytes bytes, over the limit of $MAX_BYTES"
fi
