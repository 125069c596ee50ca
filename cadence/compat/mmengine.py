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
import traceback
from collections.abc import Sequence

from .alias import AliasConflict, install

install()

USAGE = "usage: python -m cadence.compat.mmengine SCRIPT [ARGS...]"


def import_failure(exc: ImportError) -> str | None:
    """One paragraph for an import the alias cannot satisfy, or None when it is not one.

    It names the import, the file and line of the user's code that made it, and what to
    install or read; ``None`` for an ImportError raised by something else.
    """
    missing = exc.name or ""
    text = str(exc)
    from_cadence = "cadence" in text or missing.split(".")[0] in ("mmengine", "cadence")
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if "importlib" not in f.filename and "/cadence/" not in f.filename]
    where = f" (imported at {user[-1].filename}:{user[-1].lineno})" if user else ""
    if from_cadence:
        advice = (
            "cadence implements mmengine's API at 0.10.7 but not this part of it; "
            "docs/mmengine_module_status.md lists what is provided"
        )
        return f"cadence: error: {text}{where}. {advice}."
    if isinstance(exc, ModuleNotFoundError) and missing:
        package = missing.split(".")[0]
        return (
            f"cadence: error: {text}{where}. The script needs the package '{package}', which "
            f"is not installed; install it (for OpenMMLab packages see docs/openmmlab.md)."
        )
    return None


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
    except ImportError as exc:
        message = import_failure(exc)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The ``python -m cadence.compat.mmengine`` entry point."""
    return run_script(list(sys.argv[1:] if argv is None else argv))


__all__ = ["AliasConflict", "import_failure", "main", "run_script"]

if __name__ == "__main__":
    raise SystemExit(main())
