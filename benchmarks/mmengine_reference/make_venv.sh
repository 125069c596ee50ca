#!/usr/bin/env bash
# A venv with the real mmengine 0.10.7 (and the CPU torch the package index serves), for
# recording reference numbers and checkpoints: never install cadence into it.
#   benchmarks/mmengine_reference/make_venv.sh [--openmmlab] [VENV_DIR]
#       (default /tmp/mmengine-0.10.7; an existing venv is reused)
# --openmmlab adds the OpenMMLab packages of requirements/openmmlab.txt (--no-deps, as for
# cadence) and the small pure-Python dependencies of setup.cfg's `openmmlab` extra, so the
# same tools/train.py runs on both engines (benchmarks/openmmlab_speed.py).
set -euo pipefail
openmmlab=0
if [[ "${1:-}" == "--openmmlab" ]]; then openmmlab=1; shift; fi
venv="${1:-/tmp/mmengine-0.10.7}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
[[ -x "$venv/bin/python" ]] || python -m venv "$venv"
"$venv/bin/pip" install -q torch==2.13.0 mmengine==0.10.7 numpy
if [[ "$openmmlab" == 1 ]]; then
    "$venv/bin/pip" install -q --no-deps -r "$root/requirements/openmmlab.txt"
    # shellcheck disable=SC2046
    "$venv/bin/pip" install -q $(python -c "import configparser, sys
c = configparser.ConfigParser(); c.read(sys.argv[1])
print(c['options.extras_require']['openmmlab'])" "$root/setup.cfg")
fi
"$venv/bin/python" -c "import mmengine, torch; print('mmengine', mmengine.__version__, 'torch', torch.__version__)"
