#!/usr/bin/env bash
# Builds spark-bundle/: Spark with our GPU code for a bare GPU host (NVIDIA driver, no JDK, no Maven, no
# network), small enough to travel with the repository in one 64 MiB transfer.
#
# Usage: scripts/make-spark-gpu-bundle.sh [--no-build] [--retrace] [--no-selftest]
#   --no-build     reuse the jars under */target (default: mvn -B -q -DskipTests package first)
#   --retrace      record new class-load traces of the entry points and rewrite the committed keep-list
#                  (scripts/spark-bundle/keep-list.txt) and JDK module list (jdk-modules.txt); needed after a
#                  dependency change (the build fails and says so). Commit the rewritten lists.
#   --no-selftest  skip running the entry points on the trimmed bundle (not for bundles you hand out)
#
# Result (spark-bundle/ is gitignored; carry the directory to the GPU host):
#   spark-bundle/run                         entry point: spark-gpu-tests | bench-e2e [args] | info | java ...
#   spark-bundle/spark-gpu-runtime.tar.xz    xz archive of spark-gpu-runtime/: a jlinked Java 17 (compress=0),
#                                            jars/ (ours whole, JCuda with the driver natives only, Spark's
#                                            class path trimmed by the keep-list, all stored uncompressed),
#                                            conf/, jvm-options.txt; it doubles as SPARK_HOME
#   spark-bundle/BUILD-INFO.txt              commit, sizes, modules, jar list
#
# Steps: Maven build; the full runtime class path (spark-jobs/target/classpath.txt with our jars, JCuda's
# driver natives, the tests jar and the JUnit console launcher); with --retrace, the entry points run on it
# under -Xlog:class+load (driver and executor JVMs) and TrimJars derives the keep-list; TrimJars trims and
# re-packs; jlink; tar + xz; then the self-test unpacks the archive with spark-bundle/run and runs the traced
# entry points again on the trimmed bundle (CPU backend), failing on any error or missing class.
#
# Environment: MVN, MVN_ARGS (e.g. -o), JDK_HOME/JAVA_HOME (a JDK 17 with jmods), SPARK_BUNDLE_MAX_BYTES
# (default 62914560 = 60 MiB; the bundle and the tracked tree together must also stay under the 64 MiB a device
# call carries), SPARK_BUNDLE_GENCODE (default "-gencode=arch=compute_90,code=sm_90": the bundle's kernels are
# rebuilt by nvcc for the device kinds it travels to, Hopper H100/H200, instead of the artifact's sm_80 + sm_90 +
# PTX fatbins, which cost ~1 MiB more compressed; empty: keep the artifact's fatbins), XZ_OPTS (default --lzma2=preset=9e,dict=384MiB: one block whose dictionary
# spans the whole ~350 MB tar, so repeats across jars compress too; 5% smaller than -9's 64 MiB blocks, at
# about 5 minutes of one core to compress and 384 MiB of memory to unpack).
set -euo pipefail

ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
OUTDIR="$ROOT/spark-bundle"
WORK="$ROOT/.spark-bundle-work"
RULES="$ROOT/scripts/spark-bundle/trim-rules.txt"
KEEP="$ROOT/scripts/spark-bundle/keep-list.txt"
MODULES_FILE="$ROOT/scripts/spark-bundle/jdk-modules.txt"
MAX_BYTES="${SPARK_BUNDLE_MAX_BYTES:-62914560}"
BUNDLE_NAME=make-spark-gpu-bundle
BUILD=1
RETRACE=0
SELFTEST=1
# shellcheck source=lib/bundle-common.sh
source "$ROOT/scripts/lib/bundle-common.sh"

for arg in "$@"; do
    case "$arg" in
        --no-build) BUILD=0 ;;
        --retrace) RETRACE=1 ;;
        --no-selftest) SELFTEST=0 ;;
        -h | --help) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$arg' (try --help)" ;;
    esac
done

# Modules no trace shows but a run needs: the "jar:" file system JUnit scans the tests jar with (a service
# lookup: without it no test is found, silently), jdk.incubator.vector (Spark starts executor JVMs with
# --add-modules=jdk.incubator.vector, which fails when the module is missing), and the usual suspects of
# libraries' reflection (sun.misc.Unsafe, JMX, Kerberos configuration of Hadoop's UserGroupInformation).
ALWAYS_MODULES="jdk.zipfs,jdk.incubator.vector,jdk.unsupported,java.management,jdk.management,java.security.jgss,jdk.security.auth"
# Modules the traces show but a run does without (the self-test checks): the CLDR locale provider's metadata
# (jdk.localedata, ~20 MB; English and ROOT locale data are in java.base) and Flight Recorder, which JMX
# only enumerates.
EXCLUDE_MODULES="jdk.localedata,jdk.jfr,jdk.management.jfr"

find_jdk
cd "$ROOT"
if [[ "$BUILD" == 1 ]]; then
    maven_package
fi
find_project_jars
[[ -f spark-jobs/target/classpath.txt && -f spark-jobs/target/jvm-options.txt ]] \
    || die "spark-jobs/target/classpath.txt or jvm-options.txt missing: run without --no-build"
javac_trim() {
    mkdir -p "$WORK/tool"
    "$JDK/bin/javac" -d "$WORK/tool" "$ROOT/scripts/spark-bundle/TrimJars.java"
}
trimjars() {
    "$JDK/bin/java" -cp "$WORK/tool" TrimJars "$@"
}

# ---------------------------------------------------------------- the full (untrimmed) runtime
rm -rf "$WORK"
mkdir -p "$WORK/deps" "$WORK/full/jars" "$WORK/full/conf" "$WORK/full/launcher/target/scala-2.13"
resolve_bundle_deps "$WORK/deps"
step "collecting the runtime class path (spark-jobs/target/classpath.txt, our jars, JCuda driver natives)"
# (the file ends without a newline: '|| -n' keeps its last entry, which a plain read loop silently dropped)
tr ':' '\n' < spark-jobs/target/classpath.txt | while IFS= read -r entry || [[ -n "$entry" ]]; do
    [[ -z "$entry" ]] && continue
    case "$(basename "$entry")" in
        jcuda-natives-*) continue ;; # replaced by the driver-only natives below
        *.jar) ;;
        *) die "classpath.txt entry is not a jar: $entry" ;;
    esac
    [[ -f "$entry" ]] || die "classpath.txt names a missing jar: $entry"
    [[ ! -e "$WORK/full/jars/$(basename "$entry")" ]] || die "two jars named $(basename "$entry") on the class path"
    cp "$entry" "$WORK/full/jars/"
done
cp "$KERNELS_JAR" "$LIB_JAR" "$JOBS_JAR" "$TESTS_JAR" "$LAUNCHER_JAR" "$JCUDA_JAR" "$WORK/full/jars/"
driver_only_natives "$NATIVES_JAR" "$WORK/natives" "$WORK/full/jars" > /dev/null
cp conf/log4j2.properties "$WORK/full/conf/"
cp spark-jobs/target/jvm-options.txt "$WORK/full/jvm-options.txt"
ln -s "$JDK" "$WORK/full/jre"
echo "untrimmed runtime (tracing only)" > "$WORK/full/BUILD-INFO.txt"
echo "  $(find "$WORK/full/jars" -name '*.jar' | wc -l) jars, $(du -sm "$WORK/full/jars" | cut -f1) MiB"
javac_trim

# ---------------------------------------------------------------- entry points (traced and self-tested)
# run_entry_points RUN LOGDIR: every command the bundle is meant to run, at small sizes and on the CPU: the
# Spark-level GPU tests as a dry run (backend cpu, fake GPU address), the end-to-end benchmark on local[2]
# and on local-cluster with a fake GPU resource, the isotonic, t-SNE (plain and Spark trainer, both modes)
# scan and ingest benchmarks, and info. Fails on a non-zero status (info may exit 1 for
# "no GPU") or a missing class anywhere in the output.
run_entry_points() {
    local run="$1" logs="$2" rc
    mkdir -p "$logs"
    echo "  spark-gpu-tests (dry run: backend cpu, fake GPU address 0)"
    JAVA_OPTS="-Xmx4g -Dsparkgpu.test.gpuDryRun=true" OUT="$logs" "$run" spark-gpu-tests --fail-if-no-tests \
        > "$logs/spark-gpu-tests.log" 2>&1 || { tail -60 "$logs/spark-gpu-tests.log" >&2; die "spark-gpu-tests failed (log: $logs/spark-gpu-tests.log)"; }
    grep -q '\[ *[1-9][0-9]* tests successful *\]' "$logs/spark-gpu-tests.log" \
        || die "spark-gpu-tests ran no test successfully (log: $logs/spark-gpu-tests.log)"
    echo "  bench-e2e on local[2] (k-means in one barrier stage of 2 tasks, isotonic, scan, t-SNE)"
    JAVA_OPTS="-Xmx4g -Dspark.sparkgpu.kmeans.mode=single-stage -Dspark.sparkgpu.fit.gpuTasks=2" "$run" bench-e2e --n 30000 --d 8 --k 5 --iters 3 --cores 2 --partitions 12 \
        --warmup-n 3000 --gpu-backend auto --iso-n 30000 --scan-grid 12 --scan-replicas 9 \
        --tsne-n 600 --tsne-d 10 --tsne-iters 30 \
        > "$logs/bench-local.log" 2>&1 \
        || { tail -60 "$logs/bench-local.log" >&2; die "bench-e2e on local[2] failed (log: $logs/bench-local.log)"; }
    echo "  bench-e2e on local-cluster, fake GPU resource (k-means one job per pass, isotonic range path)"
    JAVA_OPTS="-Xmx2g -Dspark.sparkgpu.kmeans.mode=job-per-pass -Dspark.sparkgpu.isotonic.localRows=0" "$run" bench-e2e --n 30000 --d 8 --k 5 --iters 3 --cores 2 --partitions 12 \
        --warmup-n 3000 --gpu-backend auto --tasks-per-gpu 2 --gpu-addresses 0 --executor-memory 2048 \
        --iso-n 30000 --scan-grid 12 --scan-replicas 9 --tsne-n 600 --tsne-d 10 --tsne-iters 30 \
        > "$logs/bench-cluster.log" 2>&1 \
        || { tail -60 "$logs/bench-cluster.log" >&2; die "bench-e2e on local-cluster failed (log: $logs/bench-cluster.log)"; }
    echo "  bench isotonic (our Spark job and MLlib's on local[2])"
    JAVA_OPTS="-Xmx4g" "$run" bench isotonic --n 20000 --small-n 4096 --threads 2 --reps 1 \
        > "$logs/bench-isotonic.log" 2>&1 \
        || { tail -60 "$logs/bench-isotonic.log" >&2; die "bench isotonic failed (log: $logs/bench-isotonic.log)"; }
    echo "  bench tsne (plain run, then the Spark trainer in single and distributed mode on local[2], PCA start)"
    JAVA_OPTS="-Xmx4g" "$run" bench tsne --cases blobs:3000x10 --backends cpu --cpu-max-n 100000 --spark 2 \
        --spark-init pca --max-iter 30 --error-sample 200 --quality-sample 200 --grid-max 40 \
        > "$logs/bench-tsne.log" 2>&1 \
        || { tail -60 "$logs/bench-tsne.log" >&2; die "bench tsne failed (log: $logs/bench-tsne.log)"; }
    echo "  bench scan"
    JAVA_OPTS="-Xmx4g" "$run" bench scan --grids 1d:1000,2d:16 --replicas 9 --threads 2 \
        > "$logs/bench-scan.log" 2>&1 \
        || { tail -60 "$logs/bench-scan.log" >&2; die "bench scan failed (log: $logs/bench-scan.log)"; }
    echo "  bench ingest (Row path vs FeatureIngest on local[2]; upload rows skip without a GPU)"
    JAVA_OPTS="-Xmx4g" "$run" bench ingest --n 20000 --d 8 --cores 2 --reps 1 \
        > "$logs/bench-ingest.log" 2>&1 \
        || { tail -60 "$logs/bench-ingest.log" >&2; die "bench ingest failed (log: $logs/bench-ingest.log)"; }
    echo "  bench sort-df (GpuSort vs orderBy on local[2]: sampling, SQL exchange, permutation; int and long keys)"
    JAVA_OPTS="-Xmx4g" "$run" bench sort-df --n 20000 --range 65536 --key int --cores 2 --partitions 4 --reps 1 --impls ours-cpu,spark,ours-within-cpu,spark-within \
        > "$logs/bench-sort-df.log" 2>&1 \
        || { tail -60 "$logs/bench-sort-df.log" >&2; die "bench sort-df failed (log: $logs/bench-sort-df.log)"; }
    JAVA_OPTS="-Xmx4g" "$run" bench sort-df --n 20000 --range 4294967296 --key long --cores 2 --partitions 4 --reps 1 --impls ours-cpu,spark \
        > "$logs/bench-sort-df-long.log" 2>&1 \
        || { tail -60 "$logs/bench-sort-df-long.log" >&2; die "bench sort-df (long) failed (log: $logs/bench-sort-df-long.log)"; }
    echo "  bench spline (CPU twin, GpuMonotoneCdf vs approxQuantile, quantile partitioner vs repartitionByRange)"
    JAVA_OPTS="-Xmx4g" "$run" bench spline --n 3000 --queries 20000 --backends cpu --cdf-rows 20000 --partitions 4 \
        --reps 1 > "$logs/bench-spline.log" 2>&1 \
        || { tail -60 "$logs/bench-spline.log" >&2; die "bench spline failed (log: $logs/bench-spline.log)"; }
    echo "  info"
    rc=0
    "$run" info > "$logs/info.log" 2>&1 || rc=$?
    [[ $rc -le 1 ]] || { cat "$logs/info.log" >&2; die "info failed with status $rc"; }
    if grep -lE 'NoClassDefFoundError|ClassNotFoundException|NoSuchMethodError|ServiceConfigurationError' \
        "$logs"/*.log > "$logs/missing-classes.txt" 2>/dev/null; then
        grep -hE -B2 -A5 'NoClassDefFoundError|ClassNotFoundException|NoSuchMethodError|ServiceConfigurationError' \
            "$logs"/*.log | head -40 >&2
        die "a class was missing in $(tr '\n' ' ' < "$logs/missing-classes.txt")"
    fi
}

if [[ "$RETRACE" == 1 || ! -f "$KEEP" || ! -f "$MODULES_FILE" ]]; then
    [[ "$RETRACE" == 1 ]] || echo "$BUNDLE_NAME: no committed keep-list: tracing" >&2
    step "tracing the entry points on the untrimmed runtime (-Xlog:class+load, driver and executors)"
    rm -rf "$WORK/traces"
    # the untrimmed runtime holds the JDK (a symbolic link), so the traces see every module a run loads
    SPARKGPU_RUNTIME="$WORK/full" SPARKGPU_TRACE_DIR="$WORK/traces" \
        run_entry_points "$ROOT/scripts/spark-bundle/run" "$WORK/trace-logs"
    step "deriving the keep-list and the JDK modules from $(find "$WORK/traces" -name '*.log' | wc -l) traces"
    trimjars keeplist --traces "$WORK/traces" --jars "$WORK/full/jars" --rules "$RULES" --out "$KEEP"
    {
        echo "# JDK modules the traced entry points loaded classes from (scripts/make-spark-gpu-bundle.sh --retrace)."
        trimjars modules --traces "$WORK/traces"
    } > "$MODULES_FILE"
    echo "  wrote $KEEP and $MODULES_FILE: review and commit them"
fi

# ---------------------------------------------------------------- the trimmed runtime
RT="$WORK/stage/spark-gpu-runtime"
mkdir -p "$RT/conf" "$RT/launcher/target/scala-2.13"
step "trimming the jars by $KEEP"
trimjars trim --keep "$KEEP" --jars "$WORK/full/jars" --out "$RT/jars"
GENCODE="${SPARK_BUNDLE_GENCODE--gencode=arch=compute_90,code=sm_90}"
if [[ -n "$GENCODE" ]]; then
    step "kernels for the bundle: nvcc $GENCODE (the Maven artifact keeps sm_80, sm_90 and PTX)"
    rm -rf "$WORK/fatbins" && mkdir -p "$WORK/fatbins"
    for cu in "$ROOT"/native-kernels/src/main/cuda/*.cu; do
        # shellcheck disable=SC2086  # GENCODE is a word list on purpose
        nvcc --fatbin -O3 --fmad=false $GENCODE -I"$ROOT/native-kernels/src/main/cuda/include" --threads 0 \
            -o "$WORK/fatbins/$(basename "${cu%.cu}").fatbin" "$cu" &
    done
    wait
    python3 - "$WORK/fatbins" "$RT"/jars/native-kernels-*.jar <<'PY'
import os, sys, zipfile
fat, jar = sys.argv[1], sys.argv[2]
tmp = jar + ".tmp"
with zipfile.ZipFile(jar) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
    replaced = 0
    for info in src.infolist():
        name = info.filename
        base = os.path.basename(name)
        if name.endswith(".fatbin") and os.path.exists(os.path.join(fat, base)):
            dst.write(os.path.join(fat, base), name)
            replaced += 1
        else:
            dst.writestr(info, src.read(name))
if replaced != len([f for f in os.listdir(fat) if f.endswith(".fatbin")]):
    sys.exit("native-kernels jar: replaced %d fatbins, built %d" % (replaced, len(os.listdir(fat))))
os.replace(tmp, jar)
print("  replaced %d fatbins in %s" % (replaced, os.path.basename(jar)))
PY
fi
cp "$WORK/full/conf/log4j2.properties" "$RT/conf/"
cp "$WORK/full/jvm-options.txt" "$RT/jvm-options.txt"
modules="$( (grep -v '^#' "$MODULES_FILE"; echo "$ALWAYS_MODULES" | tr ',' '\n') | sed '/^$/d' | sort -u \
    | grep -vxF -f <(echo "$EXCLUDE_MODULES" | tr ',' '\n') | paste -sd, -)"
step "jlink --compress=0 --add-modules $modules"
"$JDK/bin/jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --compress=0 \
    --output "$RT/jre"
if command -v strip > /dev/null 2>&1; then
    # the JDK's shared libraries carry their symbol tables (libjvm.so: 24 MB, 20 MB stripped)
    find "$RT/jre" -name '*.so' -exec strip --strip-unneeded {} +
fi
BUILD_ID="$(git -C "$ROOT" rev-parse --short=10 HEAD 2>/dev/null || echo nogit)-$(date -u +%Y%m%d%H%M%S)"
{
    build_info_header "spark-gpu Spark bundle (spark-gpu-runtime)"
    echo "build id: $BUILD_ID"
    echo "kernels: ${GENCODE:-as built by Maven (sm_80, sm_90, PTX)}"
    echo "java runtime: $JDK_VERSION from $JDK, jlink --compress=0; modules: $modules"
    echo "keep-list: scripts/spark-bundle/keep-list.txt ($(grep -c ' drop$' "$KEEP") jars dropped, $(grep -c ' packages ' "$KEEP") trimmed by package)"
    echo "jars (stored, bytes):"
    (cd "$RT" && find jars -name '*.jar' -printf '  %p %s\n' | sort)
} > "$RT/BUILD-INFO.txt"
echo "  runtime: jre $(du -sm "$RT/jre" | cut -f1) MiB, jars $(du -sm "$RT/jars" | cut -f1) MiB ($(find "$RT/jars" -name '*.jar' | wc -l) jars)"

# ---------------------------------------------------------------- archive
step "archiving (tar | xz ${XZ_OPTS:---lzma2=preset=9e,dict=384MiB} -T0)"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
t0="$(date +%s)"
# shellcheck disable=SC2086  # XZ_OPTS is a word list on purpose
(cd "$WORK/stage" && tar --sort=name --mtime='2000-01-01 00:00:00Z' --owner=0 --group=0 --numeric-owner \
    -cf - spark-gpu-runtime) | xz ${XZ_OPTS:---lzma2=preset=9e,dict=384MiB} -T0 -c > "$OUTDIR/spark-gpu-runtime.tar.xz"
echo "  $(du -sm "$OUTDIR/spark-gpu-runtime.tar.xz" | cut -f1) MiB in $(( $(date +%s) - t0 )) s"
sed "s/@BUILD_ID@/$BUILD_ID/" scripts/spark-bundle/run > "$OUTDIR/run"
chmod 0755 "$OUTDIR/run"
cp "$RT/BUILD-INFO.txt" "$OUTDIR/BUILD-INFO.txt"
check_size "$OUTDIR" "$MAX_BYTES"

# ---------------------------------------------------------------- self-test of the trimmed bundle
if [[ "$SELFTEST" == 1 ]]; then
    step "self-test: unpack with spark-bundle/run and run the entry points on the trimmed bundle (CPU)"
    rm -rf "$WORK/unpacked"
    SPARKGPU_RUNTIME_DIR="$WORK/unpacked" "$OUTDIR/run" java -version 2>&1 | sed 's/^/    /'
    SPARKGPU_RUNTIME_DIR="$WORK/unpacked" run_entry_points "$OUTDIR/run" "$WORK/selftest-logs"
    echo "  self-test passed"
    sed -n '/^| implementation/,/^$/p' "$WORK/selftest-logs/bench-local.log" | sed 's/^/    /'
fi
check_size "$OUTDIR" "$MAX_BYTES"
tree_bytes="$(git -C "$ROOT" ls-files -z | (cd "$ROOT" && xargs -0 du -cb 2>/dev/null) | tail -1 | cut -f1)"
bundle_bytes="$(du -sb "$OUTDIR" | cut -f1)"
echo "  with the tracked tree ($tree_bytes bytes): $((tree_bytes + bundle_bytes)) of the 67108864 bytes a device call carries"
(( tree_bytes + bundle_bytes < 67108864 - 524288 )) \
    || die "the bundle and the tracked tree together ($((tree_bytes + bundle_bytes)) bytes) leave less than 512 KiB of the 64 MiB a device call carries"
echo "spark bundle: $OUTDIR (run: spark-bundle/run spark-gpu-tests | bench-e2e | info | java)"
