"""TensorBoard backend: event files next to ``scalars.json`` in ``<run>/vis_data``."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

from ..registry import VISBACKENDS
from .image import to_rgb_uint8
from .vis_backend import BaseVisBackend, scalar_number, split_step, writable_dir

_INSTALL_HINT = "pip install tensorboard  (or: pip install 'cadence[tensorboard]')"


@VISBACKENDS.register_module()
class TensorboardVisBackend(BaseVisBackend):
    """Writes scalars, the config (as text) and images to TensorBoard event files.

    ``torch.utils.tensorboard`` is imported on the first write. Event files go
    straight into ``save_dir`` (the Visualizer passes ``<run>/vis_data``), so
    ``tensorboard --logdir <work_dir>`` finds every run. The writer is flushed
    after each call, so the files are complete even when the run never closes
    the backend; calls come once per log interval, not per iteration.

    A resumed run keeps writing into the log dir of the run it continues (its
    :meth:`state_dict` names it), so TensorBoard shows one run; if that directory
    is gone or not writable, the backend warns and writes into ``save_dir``.

    Args:
        save_dir: directory of the event files (created on first write).
        **writer_kwargs: extra keyword arguments of ``SummaryWriter`` (e.g.
            ``filename_suffix``); ``log_dir`` is ``save_dir``.
    """

    state_dir_keys = ("log_dir",)

    def __init__(self, save_dir: str | os.PathLike[str], **writer_kwargs: Any) -> None:
        if "log_dir" in writer_kwargs:
            raise TypeError("TensorboardVisBackend writes to save_dir; do not pass log_dir")
        super().__init__(save_dir)
        self._writer_kwargs = writer_kwargs
        self._writer: Any = None

    def _init_env(self) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            raise ImportError(
                f"TensorboardVisBackend needs the tensorboard package: {_INSTALL_HINT}"
            ) from exc
        os.makedirs(self._save_dir, exist_ok=True)
        self._writer = SummaryWriter(log_dir=self._save_dir, **self._writer_kwargs)

    @property
    def experiment(self) -> Any:
        """The ``torch.utils.tensorboard.SummaryWriter``."""
        self._ensure_env()
        return self._writer

    @property
    def _tensorboard(self) -> Any:  # mmengine's attribute of the writer
        return self._writer

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the config text (``pretty_text`` or ``str``) under the tag ``config``."""
        self._ensure_env()
        text = getattr(config, "pretty_text", None)
        if not isinstance(text, str):
            text = str(config)
        # TensorBoard renders text as Markdown; a fenced block keeps the config verbatim.
        self._writer.add_text("config", f"```python\n{text}\n```")
        self._writer.flush()

    def add_graph(self, model: Any, data_batch: Any = None, **kwargs: Any) -> None:
        """Trace ``model`` on ``data_batch`` (an input tensor or tuple) and record its graph."""
        self._ensure_env()
        self._writer.add_graph(model, data_batch, **kwargs)
        self._writer.flush()

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Record ``image`` (converted to HWC uint8 RGB) under ``name`` at ``step``."""
        rgb = to_rgb_uint8(image)
        self._ensure_env()
        self._writer.add_image(name, rgb, step, dataformats="HWC")
        self._writer.flush()

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one scalar; values that are not single numbers are skipped with a warning."""
        self._ensure_env()
        self._write_scalar(name, value, step)
        self._writer.flush()

    def add_scalars(
        self,
        scalar_dict: dict[str, Any],
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Record each entry as its own tag at ``step`` (a ``"step"`` entry wins).

        ``file_path`` only matters to the local backend.
        """
        values, step = split_step(scalar_dict, step)
        self._ensure_env()
        for name, value in values.items():
            self._write_scalar(name, value, step)
        self._writer.flush()

    def _write_scalar(self, name: str, value: Any, step: int) -> None:
        number = None if isinstance(value, (list, tuple)) else scalar_number(value)
        if number is None:
            warnings.warn(
                f"TensorboardVisBackend: '{name}' is not a single number "
                f"({type(value).__name__}); it is not recorded",
                stacklevel=3,
            )
            return
        self._writer.add_scalar(name, number, step)

    def close(self) -> None:
        """Flush and close the event file (a later write opens a new one)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self._env_ready = False

    def state_dict(self) -> dict[str, Any]:
        """``{'log_dir': ...}``: the directory of the event files, once it exists."""
        if not os.path.isdir(self._save_dir):
            return {}
        return {"log_dir": os.path.abspath(self._save_dir)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Write the next events into ``state['log_dir']`` if it is a writable directory
        (an open event file is closed first); else warn and keep ``save_dir``."""
        log_dir = state.get("log_dir")
        if not isinstance(log_dir, str) or os.path.abspath(log_dir) == os.path.abspath(
            self._save_dir
        ):
            return
        if not writable_dir(log_dir):
            warnings.warn(
                f"TensorboardVisBackend: the log dir of the resumed run, {log_dir}, is gone "
                f"or not writable; the events go to a new one, {self._save_dir}",
                stacklevel=2,
            )
            return
        if self._writer is not None:
            warnings.warn(
                f"TensorboardVisBackend: events were already written to {self._save_dir} "
                f"before the resume; the next ones go to the resumed run's {log_dir}",
                stacklevel=2,
            )
            self.close()
        self._save_dir = log_dir
