"""Process-wide multiprocessing and thread settings for data loading."""

from __future__ import annotations

import multiprocessing as mp
import os
import platform
import warnings


def set_multi_processing(
    mp_start_method: str = "fork", opencv_num_threads: int = 0, distributed: bool = False
) -> None:
    """Set the multiprocessing start method, OpenCV's thread count and, when distributed, OMP/MKL.

    A start method already set to something else is replaced with a warning
    (Windows keeps its own). OpenCV is configured only when it is installed.
    With ``distributed``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` default to
    ``1`` (with a warning) unless the environment sets them.
    """
    if platform.system() != "Windows":
        current = mp.get_start_method(allow_none=True)
        if current is not None and current != mp_start_method:
            warnings.warn(f"Multi-processing start method `{mp_start_method}` is different from "
                          f"the previous setting `{current}`. It will be force set to "
                          f"`{mp_start_method}`.", stacklevel=2)  # fmt: skip
        mp.set_start_method(mp_start_method, force=True)
    try:
        import cv2
    except ImportError:
        pass
    else:
        cv2.setNumThreads(opencv_num_threads)
    if distributed:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            if var not in os.environ:
                warnings.warn(f"Setting {var} environment variable for each process to be 1 by "
                              "default, to avoid overloading the system; tune it for your "
                              "application.", stacklevel=2)  # fmt: skip
                os.environ[var] = "1"
