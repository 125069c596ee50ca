"""One paragraph for an import that a door cannot satisfy (no side effects on import)."""

from __future__ import annotations

import os
import traceback

MMCV_EXT = "mmcv._ext"


def compiled_mmcv_missing(exc: ImportError) -> str:
    """The paragraph for ``mmcv.ops`` imported where only mmcv-lite (no compiled ops) is."""
    frames = traceback.extract_tb(exc.__traceback__)
    ops = [f for f in frames if "/mmcv/ops/" in f.filename.replace(os.sep, "/")
           and not f.filename.endswith("__init__.py")]  # fmt: skip
    op = f"mmcv.ops.{os.path.splitext(os.path.basename(ops[-1].filename))[0]}" if ops else ""
    outside = [f for f in frames if "importlib" not in f.filename
               and "/mmcv/" not in f.filename.replace(os.sep, "/")
               and "/cadence/" not in f.filename.replace(os.sep, "/")]  # fmt: skip
    where = ""
    if outside:
        frame = outside[-1]
        line = f" (`{frame.line}`)" if frame.line else ""
        where = f" at {frame.filename}:{frame.lineno}{line}"
    first = f"; the first op module to load it was {op}" if op else ""
    return (
        f"cadence: error: the import{where} needs mmcv's compiled ops (module {MMCV_EXT}"
        f"{first}), which mmcv-lite does not have. mmsegmentation and mmdetection import "
        f"mmcv.ops, and models using ops such as nms, RoIAlign, DeformConv2d or "
        f"MultiScaleDeformableAttention need them: replace mmcv-lite by an mmcv build with "
        f"ops for your torch (`pip uninstall mmcv-lite`, then `pip install mmcv==2.1.0` from "
        f"OpenMMLab's wheel index for your torch and CUDA, or build it with MMCV_WITH_OPS=1); "
        f"see docs/openmmlab.md."
    )


def import_failure(exc: ImportError) -> str | None:
    """One paragraph for an import the alias cannot satisfy, or None when it is not one.

    It names the import, the file and line of the user's code that made it, and what to
    install or read; ``None`` for an ImportError raised by something else.
    """
    missing = exc.name or ""
    text = str(exc)
    if missing == MMCV_EXT:
        return compiled_mmcv_missing(exc)
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


def compiled_mmcv_absent() -> bool:
    """Whether mmcv is installed without its compiled ops (mmcv-lite)."""
    import importlib.util
    import sys

    if MMCV_EXT in sys.modules:
        return False
    try:
        return importlib.util.find_spec("mmcv") is not None and (
            importlib.util.find_spec(MMCV_EXT) is None
        )
    except (ImportError, ValueError):
        return False
