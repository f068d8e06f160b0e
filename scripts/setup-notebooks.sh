#!/usr/bin/env bash
# Installs what the Jupyter notebooks under notebooks/jupyter need, writing nothing outside this checkout
# except Debian packages (only when it has to install Jupyter) and Maven's local repository (~/.m2):
#
#   1. Jupyter: an existing one is used when it works (`nbconvert --version`), whatever installed it (pip,
#      conda, Debian): `jupyter` on PATH, `python3 -m jupyter`, `python3 -m nbconvert`, then `jupyter` in the
#      usual places ($CONDA_PREFIX/bin, ~/.local/bin, ~/miniforge3/bin, ~/miniconda3/bin, ~/anaconda3/bin,
#      /opt/conda/bin, /usr/local/bin, /usr/bin; SPARKGPU_JUPYTER_LOCATIONS replaces this list). SPARKGPU_NBCONVERT
#      names the command to use instead (e.g. "/opt/venv/bin/jupyter nbconvert"). Only when none works, the
#      Debian packages jupyter-nbconvert, jupyter-client and python3-nbclient (plus jupyter-notebook with
#      --with-notebook) are installed with apt-get, when it can (apt-get present, and root or passwordless sudo);
#      otherwise the script fails and prints the exact command that installs them.
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
# Usage: scripts/setup-notebooks.sh [--with-notebook] [--check | --plan | --nbconvert]
#   --with-notebook  also the Jupyter Notebook UI (a Jupyter counts as found only when `jupyter notebook` works)
#   --check          install nothing; exit 0 when everything is in place, else 1 with what is missing
#   --plan           install nothing; print how Jupyter would be provided ("use: CMD" or "apt: CMD"), or fail
#                    with the command to run (the decision of step 1 alone)
#   --nbconvert      print the nbconvert command found (what notebooks/jupyter.sh runs), or fail as --plan does
# Environment: MVN (default mvn), SPARKGPU_MVN_ARGS (extra Maven flags, e.g. -o), SPARKGPU_NBCONVERT,
#   SPARKGPU_JUPYTER_LOCATIONS (see step 1)
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
WITH_NOTEBOOK=0
MODE=install
for arg in "$@"; do
  case "$arg" in
    --with-notebook) PACKAGES+=(jupyter-notebook); WITH_NOTEBOOK=1 ;;
    --check) MODE=check ;;
    --plan) MODE=plan ;;
    --nbconvert) MODE=nbconvert ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup-notebooks: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "setup-notebooks: $*" >&2; }
die() { say "$*"; exit 1; }

# --- step 1: which Jupyter -------------------------------------------------------------------------------------

# works CMD...: true when "CMD --version" runs (and, with --with-notebook, the jupyter command's "notebook").
works() {
  "$@" --version >/dev/null 2>&1 || return 1
  if [ "$WITH_NOTEBOOK" = 1 ]; then
    case "$*" in
      *" nbconvert") "${@:1:$#-1}" notebook --version >/dev/null 2>&1 || return 1 ;;
      *) return 1 ;;  # python3 -m nbconvert alone has no notebook UI
    esac
  fi
}

# find_nbconvert: prints the first working nbconvert command (words separated by spaces), else returns 1.
find_nbconvert() {
  if [ -n "${SPARKGPU_NBCONVERT:-}" ]; then
    # shellcheck disable=SC2086
    works $SPARKGPU_NBCONVERT && { echo "$SPARKGPU_NBCONVERT"; return 0; }
    say "SPARKGPU_NBCONVERT='$SPARKGPU_NBCONVERT' does not run ('$SPARKGPU_NBCONVERT --version' fails)"
    return 1
  fi
  local dir
  if command -v jupyter >/dev/null 2>&1 && works jupyter nbconvert; then echo "jupyter nbconvert"; return 0; fi
  if command -v python3 >/dev/null 2>&1; then
    if works python3 -m jupyter nbconvert; then echo "python3 -m jupyter nbconvert"; return 0; fi
    if works python3 -m nbconvert; then echo "python3 -m nbconvert"; return 0; fi
  fi
  for dir in ${SPARKGPU_JUPYTER_LOCATIONS-${CONDA_PREFIX:+$CONDA_PREFIX/bin} $HOME/.local/bin $HOME/miniforge3/bin \
      $HOME/miniconda3/bin $HOME/anaconda3/bin /opt/conda/bin /usr/local/bin /usr/bin}; do
    if [ -x "$dir/jupyter" ] && works "$dir/jupyter" nbconvert; then echo "$dir/jupyter nbconvert"; return 0; fi
  done
  return 1
}

# apt_prefix: prints "" (root) or "sudo -n " when apt-get can install here, else returns 1.
apt_prefix() {
  command -v apt-get >/dev/null 2>&1 || return 1
  if [ "$(id -u)" = 0 ]; then echo ""; return 0; fi
  command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1 && { echo "sudo -n "; return 0; }
  return 1
}

APT_INSTALL="apt-get install -y --no-install-recommends ${PACKAGES[*]}"

# install_hint: the exact command that installs Jupyter here, for the message of a failure.
install_hint() {
  if command -v apt-get >/dev/null 2>&1; then
    echo "sudo $APT_INSTALL"
  elif [ "$WITH_NOTEBOOK" = 1 ]; then
    echo "python3 -m pip install --user nbconvert nbclient jupyter_client notebook"
  else
    echo "python3 -m pip install --user nbconvert nbclient jupyter_client"
  fi
}

# plan: "use: CMD" when a Jupyter works, "apt: CMD" when apt-get can install one; else fails with the command.
plan() {
  local found prefix
  if found="$(find_nbconvert)"; then
    echo "use: $found"
  elif prefix="$(apt_prefix)"; then
    echo "apt: $prefix$APT_INSTALL"
  else
    die "no working Jupyter nbconvert found (tried: jupyter on PATH, python3 -m jupyter, python3 -m nbconvert," \
      "the usual install folders) and apt-get cannot install one here (needs apt-get and root or passwordless" \
      "sudo). Install it with:  $(install_hint)  (or set SPARKGPU_NBCONVERT to your nbconvert command)"
  fi
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
  local problems=() found
  found="$(find_nbconvert)" || problems+=("no working Jupyter nbconvert (see scripts/setup-notebooks.sh --plan)")
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
  say "ready (nbconvert: $found; kernel '$KERNEL_NAME' in $DATA_DIR)"
}

case "$MODE" in
  check) check; exit $? ;;
  plan) plan; exit 0 ;;
  nbconvert)
    find_nbconvert && exit 0
    PLAN="$(plan)" || exit 1  # plan said which command installs it
    die "no working Jupyter nbconvert found; run scripts/setup-notebooks.sh (it would run: ${PLAN#apt: })" ;;
esac

# 1. Jupyter: an existing one, else Debian packages when apt-get can install them, else fail with the command
PLAN="$(plan)"
case "$PLAN" in
  "use: "*) say "using Jupyter: ${PLAN#use: }" ;;
  "apt: "*)
    INSTALL="${PLAN#apt: }"
    say "no working Jupyter found; installing Debian packages: $INSTALL"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    ${INSTALL%%apt-get *}apt-get update -q >&2 || die "apt-get update failed"
    # shellcheck disable=SC2086
    $INSTALL >&2 || die "'$INSTALL' failed"
    FOUND="$(find_nbconvert)" || die "no working Jupyter nbconvert after '$INSTALL'"
    say "using Jupyter: $FOUND"
    ;;
esac
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
