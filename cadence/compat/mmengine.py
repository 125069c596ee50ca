"""Door (b) and (c): run or write OpenMMLab code with ``mmengine`` meaning cadence.

``python -m cadence.compat.mmengine SCRIPT [ARGS]`` runs ``SCRIPT`` as ``__main__`` with
``sys.argv == [SCRIPT, *ARGS]`` and the script's folder first on ``sys.path``, as ``python
SCRIPT ARGS`` would, after installing the alias. ``import cadence.compat.mmengine`` at the
top of a script installs the alias for the rest of it.

An import that cadence cannot satisfy (an mmengine module or name it does not provide, or
a downstream package that is not installed) ends a ``-m`` run in one paragraph, exit 2.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

from ..registry import RegistryError
from .alias import AliasConflict, install
from .failures import compiled_mmcv_missing, import_failure

install()

USAGE = "usage: python -m cadence.compat.mmengine SCRIPT [ARGS...]"


def run_script(argv: Sequence[str]) -> int:
    """Run ``argv[0]`` as ``__main__`` with ``argv`` as ``sys.argv``; return the exit code."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if argv else 2
    script = argv[0]
    if not os.path.isfile(script):
        print(f"cadence: error: no such script: {script!r}\n{USAGE}", file=sys.stderr)
        return 2
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except (ImportError, RegistryError) as exc:
        # A registry lookup that failed because its location did not import names it
        # as its cause (mmdet's models importing mmcv.ops without compiled mmcv).
        cause = exc if isinstance(exc, ImportError) else exc.__cause__
        message = import_failure(cause) if isinstance(cause, ImportError) else None
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The ``python -m cadence.compat.mmengine`` entry point."""
    return run_script(list(sys.argv[1:] if argv is None else argv))


__all__ = ["AliasConflict", "compiled_mmcv_missing", "import_failure", "main", "run_script"]

if __name__ == "__main__":
    raise SystemExit(main())
