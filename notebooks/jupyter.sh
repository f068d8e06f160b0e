#!/usr/bin/env bash
# Runs `jupyter "$@"` with the project-local Jupyter directories that scripts/setup-notebooks.sh fills:
#
#   notebooks/jupyter.sh notebook notebooks/jupyter        open the notebooks in the browser UI
#   notebooks/jupyter.sh kernelspec list                   shows the kernel "sparkgpu-java"
#   notebooks/jupyter.sh nbconvert --to notebook --execute --output-dir /tmp/out notebooks/jupyter/kmeans.ipynb
#
# JUPYTER_PATH and JUPYTER_DATA_DIR point at notebooks/.jupyter/data (kernelspecs, notebook trust database),
# JUPYTER_RUNTIME_DIR at notebooks/.jupyter/runtime (kernel connection files). Your Jupyter configuration
# (~/.jupyter) is still read. The same variables can be exported by hand instead of using this script.
# The jupyter command is the one scripts/setup-notebooks.sh finds (see its --help: an existing pip, conda or
# Debian Jupyter, or SPARKGPU_NBCONVERT).
set -euo pipefail

ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
export JUPYTER_DATA_DIR="$ROOT/notebooks/.jupyter/data"
export JUPYTER_PATH="$JUPYTER_DATA_DIR${JUPYTER_PATH:+:$JUPYTER_PATH}"
export JUPYTER_RUNTIME_DIR="$ROOT/notebooks/.jupyter/runtime"

if [ ! -f "$JUPYTER_DATA_DIR/kernels/sparkgpu-java/kernel.json" ]; then
  echo "notebooks/jupyter.sh: the kernel is not installed; run scripts/setup-notebooks.sh first" >&2
  exit 1
fi
mkdir -p "$JUPYTER_RUNTIME_DIR"
# The Jupyter that scripts/setup-notebooks.sh found (pip, conda or Debian; SPARKGPU_NBCONVERT overrides it)
NBCONVERT="$(bash "$ROOT/scripts/setup-notebooks.sh" --nbconvert)" || exit 1
if [ "${1:-}" = nbconvert ]; then
  shift
  # shellcheck disable=SC2086
  exec $NBCONVERT "$@"
fi
case "$NBCONVERT" in
  *" -m nbconvert") JUPYTER=(jupyter) ;;  # nbconvert alone: other subcommands need jupyter on PATH
  *) read -r -a JUPYTER <<< "${NBCONVERT% nbconvert}" ;;
esac
exec "${JUPYTER[@]}" "$@"
