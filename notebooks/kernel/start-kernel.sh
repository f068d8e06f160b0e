#!/usr/bin/env bash
# Starts the rapaio Java kernel for a Jupyter notebook of this project (the kernelspec "sparkgpu-java" that
# scripts/setup-notebooks.sh writes runs this with the connection file as its argument).
#
# The kernel runs notebook cells with JShell inside its own JVM, so that JVM is where Spark runs:
#   * main class: KernelLauncher.java (Java source-file mode), which starts the kernel like its own MainApp plus
#     a watchdog for a start-up hang of the kernel's shell channel that we saw in about one start in five
#     (see there).
#   * java.util.logging: notebooks/kernel/conf/logging.properties (see there why), first on the classpath.
#   * JVM options: Spark's --add-opens list from spark-jobs/target/jvm-options.txt (written by `mvn package`),
#     headless AWT for the XChart plots, conf/log4j2.properties for quiet logging, then SPARKGPU_JAVA_OPTS.
#   * classpath: the spark-jobs jar plus spark-jobs/target/classpath.txt (our module jars, Spark, Scala,
#     Hadoop, XChart, JCuda), twice:
#       - on the JVM's own classpath (-cp, ahead of the kernel jar), so that Spark and our classes are loaded by
#         the system class loader. Spark finds data sources (Parquet, CSV), codegen and ML readers through the
#         thread's context class loader, which is the system class loader in the threads that run cells; with
#         the jars only in JShell's class loader, whole-stage codegen fails and model save/load breaks.
#       - in RJK_CLASSPATH (';'-separated), which the rapaio kernel hands to JShell's compiler (and class
#         loader, whose parent is the system loader, so the classes are the same).
#     A notebook can add more jars with `%jars <path>` (JShell only: fine for plain libraries, not for
#     anything Spark must load by name).
# Both files are read at every kernel start, so rebuilding the project needs no new kernelspec.
#
# Environment (kernel.json sets the first two): SPARKGPU_ROOT, SPARKGPU_KERNEL_JAR, SPARKGPU_JAVA_OPTS,
# JAVA_HOME, SPARK_LOCAL_IP (default 127.0.0.1).
set -euo pipefail

die() { echo "sparkgpu kernel: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: $0 CONNECTION_FILE"
ROOT="${SPARKGPU_ROOT:-$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)}"
TARGET="$ROOT/spark-jobs/target"
CP_FILE="$TARGET/classpath.txt"
OPTS_FILE="$TARGET/jvm-options.txt"
KERNEL_JAR="${SPARKGPU_KERNEL_JAR:-}"
[ -n "$KERNEL_JAR" ] && [ -f "$KERNEL_JAR" ] \
  || die "kernel jar '${KERNEL_JAR}' not found; run scripts/setup-notebooks.sh"

JOBS_JAR=""
for j in "$TARGET"/spark-jobs-*.jar; do
  case "$j" in *-spark-submit.jar|*-sources.jar|*-javadoc.jar|*-tests.jar) continue ;; esac
  [ -f "$j" ] && JOBS_JAR="$j" && break
done
[ -n "$JOBS_JAR" ] && [ -f "$CP_FILE" ] && [ -f "$OPTS_FILE" ] \
  || die "the project is not built ($TARGET has no spark-jobs jar, classpath.txt or jvm-options.txt); run: (cd '$ROOT' && mvn -B -DskipTests package) (add -DskipNvcc without CUDA)"

# shellcheck source=../../scripts/lib/classpath.sh
. "$ROOT/scripts/lib/classpath.sh"
CLASS_PATH="$(sparkgpu_classpath "$ROOT" "$CP_FILE")" \
  || die "the class path in $CP_FILE names missing jars; rebuild: (cd '$ROOT' && mvn -B -DskipTests package) (add -DskipNvcc without CUDA)"
CLASSPATH_ENTRIES="$JOBS_JAR:$CLASS_PATH"
export RJK_CLASSPATH="${CLASSPATH_ENTRIES//:/;}"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"

if [ -n "${JAVA_HOME:-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi

# shellcheck disable=SC2046,SC2086
exec "$JAVA" $(cat "$OPTS_FILE") \
  -Djava.awt.headless=true \
  -Dlog4j2.configurationFile="$ROOT/conf/log4j2.properties" \
  -Dspark.ui.enabled=false \
  ${SPARKGPU_JAVA_OPTS:-} \
  -cp "$ROOT/notebooks/kernel/conf:$CLASSPATH_ENTRIES:$KERNEL_JAR" \
  "$ROOT/notebooks/kernel/KernelLauncher.java" "$1"
