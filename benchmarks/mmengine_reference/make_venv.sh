#!/usr/bin/env bash
# A venv with the real mmengine 0.10.7 (and the CPU torch the package index serves), for
# recording reference numbers and checkpoints: never install cadence into it.
#   benchmarks/mmengine_reference/make_venv.sh [VENV_DIR]   (default /tmp/mmengine-0.10.7)
set -euo pipefail
venv="${1:-/tmp/mmengine-0.10.7}"
python -m venv "$venv"
"$venv/bin/pip" install -q torch==2.13.0 mmengine==0.10.7 numpy
"$venv/bin/python" -c "import mmengine, torch; print('mmengine', mmengine.__version__, 'torch', torch.__version__)"
