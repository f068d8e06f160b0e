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
#   bundle/lib/*.jar             runtime classpath: our jars, JCuda (driver natives only), slf4j-api + simple,
#                                picocli (the benchmarks' options)
#   bundle/lib/test/             spark-gpu tests jar and the JUnit Platform console launcher
#   bundle/BUILD-INFO.txt        commit, date, JDK, modules and jar list
#
# On the GPU host: bundle/bin/run info; bundle/bin/run gpu-tests; bundle/bin/run bench kmeans
# (docs/gpu-bundle.md has the details).
set -euo pipefail

ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
OUTDIR="$ROOT/bundle"
WORK="$ROOT/.bundle-work"
MAX_BYTES="${BUNDLE_MAX_BYTES:-60000000}"
BUILD=1
BUNDLE_NAME=make-gpu-bundle
# shellcheck source=lib/bundle-common.sh
source "$ROOT/scripts/lib/bundle-common.sh"

for arg in "$@"; do
    case "$arg" in
        --no-build) BUILD=0 ;;
        -h | --help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "make-gpu-bundle: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

find_jdk
jdk_version="$JDK_VERSION"

# ---------------------------------------------------------------- build
cd "$ROOT"
if [[ "$BUILD" == 1 ]]; then
    maven_package
fi
find_project_jars

# ---------------------------------------------------------------- third-party jars
rm -rf "$WORK"
mkdir -p "$WORK/deps" "$WORK/natives"
resolve_bundle_deps "$WORK/deps"

# ---------------------------------------------------------------- assemble
step "assembling $OUTDIR"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR/bin" "$OUTDIR/lib/test"
cp "$KERNELS_JAR" "$LIB_JAR" "$JOBS_JAR" "$JCUDA_JAR" "$SLF4J_API" "$SLF4J_SIMPLE" "$PICOCLI_JAR" "$OUTDIR/lib/"
cp "$TESTS_JAR" "$LAUNCHER_JAR" "$OUTDIR/lib/test/"

# We use the driver API only: keep libJCudaDriver and drop the runtime, NVRTC and nvPTX libraries (~25 MB).
driver_only_natives "$NATIVES_JAR" "$WORK/natives" "$OUTDIR/lib" > /dev/null

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
    build_info_header "spark-gpu GPU bundle"
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

echo "bundle: $OUTDIR"
(cd "$OUTDIR" && du -sh jre lib bin | sed 's/^/  /')
check_size "$OUTDIR" "$MAX_BYTES"
