#!/usr/bin/env bash
# Runs io.sparkgpu.jobs.bench.IsotonicBenchmark on this machine with Spark on the classpath, so the table
# also has MLlib's IsotonicRegression (the GPU bundle has no Spark). The GPU rows work too where this
# machine has a GPU.
#
# Usage: scripts/bench-isotonic-local.sh [--no-build] [benchmark options, e.g. --n 1e6 --small-n 4096 --impls cpu1,cpuN,mllib]
# Environment: JAVA (default: java on PATH), JAVA_OPTS (default -Xmx12g), MVN (default mvn),
#              MVN_ARGS (extra Maven flags, e.g. -o).
set -euo pipefail

ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
cd "$ROOT"
MVN="${MVN:-mvn}"
# shellcheck disable=SC2206
MVN_EXTRA=(${MVN_ARGS:-})
if [[ "${1:-}" == "--no-build" ]]; then
    shift
else
    "$MVN" -B -q ${MVN_EXTRA[@]+"${MVN_EXTRA[@]}"} -DskipTests package
fi
cpfile="$(mktemp)"
# Spark and the other provided/test dependencies of spark-jobs. Our own modules come first on the class
# path below, from this checkout's target/classes, never from ~/.m2.
"$MVN" -B -q ${MVN_EXTRA[@]+"${MVN_EXTRA[@]}"} -pl spark-jobs dependency:build-classpath \
    -Dmdep.outputFile="$cpfile" -Dmdep.includeScope=test
deps="$(cat "$cpfile")"
rm -f "$cpfile"
opens="$(sed -n 's:.*<spark.jvm.opens>\(.*\)</spark.jvm.opens>.*:\1:p' pom.xml)"
[[ -n "$opens" ]] || { echo "bench-isotonic-local: no spark.jvm.opens in pom.xml" >&2; exit 1; }
export SPARK_LOCAL_IP=127.0.0.1
export SPARKGPU_BENCH_COMMAND="scripts/bench-isotonic-local.sh $*"
# shellcheck disable=SC2086  # word lists on purpose
exec "${JAVA:-java}" $opens ${JAVA_OPTS:--Xmx12g} \
    -cp "spark-jobs/target/classes:spark-gpu/target/classes:native-kernels/target/classes:$deps" \
    io.sparkgpu.jobs.bench.IsotonicBenchmark "$@"
