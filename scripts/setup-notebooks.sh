#!/usr/bin/env bash
# Installs what the Jupyter notebooks under notebooks/jupyter need, writing nothing outside this checkout
# except Debian packages and Maven's local repository (~/.m2, where Maven keeps what it downloads):
#
#   1. Debian packages: jupyter-nbconvert, jupyter-client, python3-nbclient (what `jupyter nbconvert --execute`
#      needs), plus jupyter-notebook with --with-notebook (the browser UI). Installed only when missing;
#      `apt-get update` runs first only when a package has to be installed.
#   2. The Java kernel, io.github.padreati:rapaio-jupyter-kernel, fetched from Maven Central with
#      `mvn dependency:copy` into notebooks/.kernel/ (gitignored).
#   3. The kernelspec "sparkgpu-java" in the project-local Jupyter data directory notebooks/.jupyter/data
#      (gitignored). Its kernel.json runs notebooks/kernel/start-kernel.sh, which starts the rapaio kernel
#      with Spark's JVM options and the project's classpath (see that script).
#
# We write kernel.json ourselves instead of running the kernel's own installer (`java -jar <jar> -i -auto`),
# because that installer only knows the per-user and system-wide Jupyter directories
# (~/.local/share/jupyter/kernels, /usr/local/share/jupyter/kernels). The kernel.json we write has the same
# fields and the same RJK_* variables as the installer's.
#
# Usage: scripts/setup-notebooks.sh [--with-notebook] [--check]
#   --with-notebook  also install the Jupyter Notebook UI (jupyter-notebook and its ~80 dependencies)
#   --check          install nothing; exit 0 when everything is in place, else 1 with what is missing
# Environment: MVN (default mvn), SPARKGPU_MVN_ARGS (extra Maven flags, e.g. -o)
#
# Afterwards use Jupyter through notebooks/jupyter.sh, which points Jupyter at the project-local directories:
#   notebooks/jupyter.sh notebook notebooks/jupyter      (needs --with-notebook)
#   notebooks/jupyter.sh nbconvert --to notebook --execute --output-dir /tmp/out notebooks/jupyter/kmeans.ipynb
set -euo pipefail

ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
RJK_GROUP=io.github.padreati
RJK_ARTIFACT=rapaio-jupyter-kernel
RJK_VERSION=3.0.1
KERNEL_NAME=sparkgpu-java
KERNEL_DIR="$ROOT/notebooks/.kernel"
KERNEL_JAR="$KERNEL_DIR/$RJK_ARTIFACT-$RJK_VERSION.jar"
DATA_DIR="$ROOT/notebooks/.jupyter/data"
SPEC_DIR="$DATA_DIR/kernels/$KERNEL_NAME"
MVN="${MVN:-mvn}"

PACKAGES=(jupyter-nbconvert jupyter-client python3-nbclient)
CHECK=0
for arg in "$@"; do
  case "$arg" in
    --with-notebook) PACKAGES+=(jupyter-notebook) ;;
    --check) CHECK=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup-notebooks: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "setup-notebooks: $*" >&2; }
die() { say "$*"; exit 1; }

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || echo "$p"
  done
}

# The kernelspec, as JSON. start-kernel.sh reads the classpath and JVM options of the build each time a kernel
# starts, so a rebuild needs no new kernelspec; only moving the checkout does.
kernel_json() {
  python3 - "$ROOT" "$KERNEL_JAR" "$KERNEL_NAME" "$RJK_VERSION" <<'PY'
import json, sys
root, jar, name, version = sys.argv[1:5]
spec = {
    "argv": ["bash", root + "/notebooks/kernel/start-kernel.sh", "{connection_file}"],
    "display_name": "Java (spark-gpu, rapaio %s)" % version,
    "language": "java",
    "interrupt_mode": "message",
    "env": {
        "SPARKGPU_ROOT": root,
        "SPARKGPU_KERNEL_JAR": jar,
        # the rapaio kernel's own settings, as its installer writes them
        "RJK_TIMEOUT_MILLIS": "-1",
        "RJK_COMPILER_OPTIONS": "",
        "RJK_INIT_SCRIPT": "",
        "RJK_MIMA_CACHE": root + "/notebooks/.kernel/mima_cache",
    },
}
print(json.dumps(spec, indent=2))
PY
}

check() {
  local problems=() miss
  miss="$(missing_packages)"
  [ -z "$miss" ] || problems+=("Debian packages not installed: $(echo $miss)")
  if [ -z "$miss" ] && ! jupyter nbconvert --version >/dev/null 2>&1; then
    problems+=("'jupyter nbconvert --version' fails")
  fi
  command -v java >/dev/null 2>&1 || problems+=("java is not on PATH")
  [ -f "$KERNEL_JAR" ] || problems+=("kernel jar missing: $KERNEL_JAR")
  if [ ! -f "$SPEC_DIR/kernel.json" ]; then
    problems+=("kernelspec missing: $SPEC_DIR/kernel.json")
  elif ! command -v python3 >/dev/null 2>&1 || [ "$(kernel_json)" != "$(cat "$SPEC_DIR/kernel.json")" ]; then
    problems+=("kernelspec out of date: $SPEC_DIR/kernel.json")
  fi
  if [ ${#problems[@]} -gt 0 ]; then
    printf 'setup-notebooks: not ready: %s\n' "${problems[@]}" >&2
    return 1
  fi
  say "ready (kernel '$KERNEL_NAME' in $DATA_DIR)"
}

if [ "$CHECK" = 1 ]; then
  check
  exit $?
fi

# 1. Debian packages
MISSING="$(missing_packages)"
if [ -n "$MISSING" ]; then
  command -v apt-get >/dev/null 2>&1 \
    || die "apt-get not found; install these packages (or their equivalents) by hand: $(echo $MISSING)"
  SUDO=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null \
      || die "installing $(echo $MISSING) needs root: run 'sudo apt-get install --no-install-recommends $(echo $MISSING)' or this script as root"
    SUDO=(sudo -n)
  fi
  say "installing Debian packages: $(echo $MISSING)"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q >&2 || die "apt-get update failed"
  # shellcheck disable=SC2086
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends $MISSING >&2 \
    || die "apt-get install $(echo $MISSING) failed"
fi
command -v jupyter >/dev/null 2>&1 || die "jupyter is still not on PATH after installing ${PACKAGES[*]}"
command -v python3 >/dev/null 2>&1 || die "python3 is not on PATH"

# 2. the kernel jar, from Maven Central through the ordinary Maven client
if [ ! -f "$KERNEL_JAR" ]; then
  command -v "$MVN" >/dev/null 2>&1 || die "Maven ($MVN) is needed to fetch $RJK_GROUP:$RJK_ARTIFACT:$RJK_VERSION"
  mkdir -p "$KERNEL_DIR"
  say "fetching $RJK_GROUP:$RJK_ARTIFACT:$RJK_VERSION into ${KERNEL_DIR#"$ROOT"/}"
  # -N: run on the parent pom only (its pluginManagement pins maven-dependency-plugin), not once per module
  # shellcheck disable=SC2086
  "$MVN" -B -q -N -f "$ROOT/pom.xml" ${SPARKGPU_MVN_ARGS:-} dependency:copy \
      "-Dartifact=$RJK_GROUP:$RJK_ARTIFACT:$RJK_VERSION" "-DoutputDirectory=$KERNEL_DIR" 2>&1 \
      | sed 's/\x1b\[0m//g' >&2 \
    || die "could not fetch $RJK_GROUP:$RJK_ARTIFACT:$RJK_VERSION with Maven"
  [ -f "$KERNEL_JAR" ] || die "Maven ran but $KERNEL_JAR is missing"
fi

# 3. the kernelspec, in the project-local data directory only
mkdir -p "$SPEC_DIR" "$ROOT/notebooks/.jupyter/runtime"
kernel_json > "$SPEC_DIR/kernel.json"
say "kernelspec '$KERNEL_NAME' written to ${SPEC_DIR#"$ROOT"/}/kernel.json"

check
