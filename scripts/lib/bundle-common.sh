# shellcheck shell=bash
# Shared pieces of the bundle builders (scripts/make-gpu-bundle.sh, scripts/make-spark-gpu-bundle.sh).
# Source it after setting BUNDLE_NAME (used in messages) and ROOT (the repository root); it defines
# functions only, plus MVN and MVN_EXTRA from the environment (MVN, MVN_ARGS).

MVN="${MVN:-mvn}"
# shellcheck disable=SC2206  # MVN_ARGS is a word list on purpose
MVN_EXTRA=(${MVN_ARGS:-})

die() {
    echo "${BUNDLE_NAME:-bundle}: $*" >&2
    exit 1
}

step() {
    echo "== $*"
}

# find_jdk: sets JDK (a JDK with jlink, jdeps, jar and jmods; JDK_HOME, else JAVA_HOME, else the javac on
# PATH) and JDK_VERSION.
find_jdk() {
    if [[ -n "${JDK_HOME:-}" ]]; then
        JDK="$JDK_HOME"
    elif [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/jlink" ]]; then
        JDK="$JAVA_HOME"
    else
        local javac_path
        javac_path="$(command -v javac || true)"
        [[ -n "$javac_path" ]] || die "no JDK found: set JDK_HOME or JAVA_HOME to a JDK 17 with jmods"
        JDK="$(dirname "$(dirname "$(readlink -f "$javac_path")")")"
    fi
    [[ -x "$JDK/bin/jlink" && -x "$JDK/bin/jdeps" && -x "$JDK/bin/jar" ]] || die "$JDK has no jlink/jdeps/jar"
    [[ -f "$JDK/jmods/java.base.jmod" ]] || die "$JDK has no jmods (on Debian/Ubuntu: apt-get install openjdk-17-jdk-headless)"
    JDK_VERSION="$("$JDK/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.version = //p')"
    [[ "$JDK_VERSION" == 17* ]] || echo "${BUNDLE_NAME:-bundle}: warning: bundling Java $JDK_VERSION; the project targets 17" >&2
}

# maven_package: the reactor build, tests skipped.
maven_package() {
    step "building (mvn -B -q -DskipTests package ${MVN_EXTRA[*]:-})"
    (cd "$ROOT" && "$MVN" -B -q ${MVN_EXTRA[@]+"${MVN_EXTRA[@]}"} -DskipTests package)
}

# one_jar DIR PATTERN: the single jar matching (sources and javadoc jars ignored), or fail.
one_jar() {
    local matches=() keep=() m
    shopt -s nullglob
    # shellcheck disable=SC2206
    matches=($1/$2)
    shopt -u nullglob
    for m in ${matches[@]+"${matches[@]}"}; do
        [[ "$m" == *-sources.jar || "$m" == *-javadoc.jar ]] || keep+=("$m")
    done
    [[ ${#keep[@]} -eq 1 ]] || die "expected one $1/$2, found ${#keep[@]} (rebuild, or mvn clean)"
    echo "${keep[0]}"
}

# find_project_jars: sets KERNELS_JAR, LIB_JAR, TESTS_JAR, JOBS_JAR (under */target) and fails when the
# kernels jar was built without nvcc.
find_project_jars() {
    KERNELS_JAR="$(one_jar "$ROOT/native-kernels/target" 'native-kernels-*[0-9T].jar')"
    LIB_JAR="$(one_jar "$ROOT/spark-gpu/target" 'spark-gpu-*[0-9T].jar')"
    TESTS_JAR="$(one_jar "$ROOT/spark-gpu/target" 'spark-gpu-*-tests.jar')"
    JOBS_JAR="$(one_jar "$ROOT/spark-jobs/target" 'spark-jobs-*[0-9T].jar')"
    "$JDK/bin/jar" tf "$KERNELS_JAR" | grep -q '^io/sparkgpu/kernels/kmeans.fatbin$' \
        || die "$KERNELS_JAR has no kernels (built with -DskipNvcc?); rebuild with nvcc on PATH"
}

# resolve_bundle_deps DIR: copies JCuda, its Linux natives, slf4j-api/-simple, picocli (the benchmarks' options)
# and the JUnit console launcher (scripts/gpu-bundle/pom.xml, versions from the root pom) into DIR; sets
# JCUDA_JAR, NATIVES_JAR, SLF4J_API, SLF4J_SIMPLE, PICOCLI_JAR, LAUNCHER_JAR.
resolve_bundle_deps() {
    local dir="$1" junit_version platform_version
    junit_version="$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' "$ROOT/pom.xml" | head -1)"
    [[ "$junit_version" =~ ^5\.([0-9]+\.[0-9]+.*)$ ]] || die "cannot read a JUnit 5 version from pom.xml (got '$junit_version')"
    platform_version="1.${BASH_REMATCH[1]}"
    mkdir -p "$dir"
    step "resolving JCuda, slf4j and JUnit console launcher $platform_version"
    "$MVN" -B -q ${MVN_EXTRA[@]+"${MVN_EXTRA[@]}"} -f "$ROOT/scripts/gpu-bundle/pom.xml" dependency:copy-dependencies \
        -DoutputDirectory="$dir" -DexcludeTransitive=true -Dbundle.junit.platform.version="$platform_version"
    JCUDA_JAR="$(one_jar "$dir" 'jcuda-[0-9]*.jar')"
    NATIVES_JAR="$(one_jar "$dir" 'jcuda-natives-*-linux-x86_64.jar')"
    SLF4J_API="$(one_jar "$dir" 'slf4j-api-*.jar')"
    SLF4J_SIMPLE="$(one_jar "$dir" 'slf4j-simple-*.jar')"
    PICOCLI_JAR="$(one_jar "$dir" 'picocli-*.jar')"
    LAUNCHER_JAR="$(one_jar "$dir" 'junit-platform-console-standalone-*.jar')"
}

# driver_only_natives NATIVES_JAR SCRATCH OUTDIR: writes OUTDIR/<natives>-driver-only.jar holding only
# JCuda's driver-API library (we use nothing else: the runtime, NVRTC and nvPTX libraries are ~25 MB) and
# prints its path.
driver_only_natives() {
    local natives_jar="$1" scratch="$2" outdir="$3" libs=() name
    rm -rf "$scratch"
    mkdir -p "$scratch"
    (cd "$scratch" && "$JDK/bin/jar" xf "$natives_jar")
    shopt -s nullglob
    libs=("$scratch"/lib/libJCudaDriver-*.so)
    shopt -u nullglob
    [[ ${#libs[@]} -eq 1 ]] || die "no single lib/libJCudaDriver-*.so in $natives_jar"
    name="$(basename "$natives_jar" .jar)-driver-only.jar"
    "$JDK/bin/jar" --create --file "$outdir/$name" -C "$scratch" "lib/$(basename "${libs[0]}")"
    echo "$outdir/$name"
}

# check_size PATH MAX_BYTES: prints the size of PATH (file or directory) and fails above MAX_BYTES.
check_size() {
    local path="$1" max="$2" bytes
    bytes="$(du -sb "$path" | cut -f1)"
    awk -v b="$bytes" -v m="$max" -v p="$path" 'BEGIN { printf "size of %s: %d bytes = %.1f MB = %.1f MiB (limit %.1f MB = %.1f MiB)\n", p, b, b/1e6, b/1048576, m/1e6, m/1048576 }'
    if (( bytes > max )); then
        die "$path is $bytes bytes, over the limit of $max"
    fi
}

# build_info_header TITLE: the first lines of a BUILD-INFO.txt.
build_info_header() {
    echo "$1"
    echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
}
