"""Visualizer: forwards what the run records (configs, scalars, images) to every backend."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any, TypeVar

from ..logging._rank import process_rank
from ..logging.instances import (
    GlobalInstanceMixin,
    lookup_instance,
    register_instance,
    set_current_instance,
)
from ..registry import VISBACKENDS, VISUALIZERS
from .drawing import DrawingMixin
from .image import to_rgb_uint8
from .vis_backend import BaseVisBackend

BackendCfg = dict[str, Any] | BaseVisBackend
V = TypeVar("V", bound="Visualizer")


class DuplicateBackendError(ValueError, RuntimeError):
    """Two backends of one visualizer have the same name (mmengine raises RuntimeError)."""


@VISUALIZERS.register_module()
class Visualizer(DrawingMixin, GlobalInstanceMixin):
    """Draws on images and sends configs, scalars and images to its backends (rank 0
    only); instances are fetchable by name.

    Drawing (``set_image``, ``draw_bboxes``... ``get_image``, see
    :class:`~cadence.visualization.drawing.DrawingMixin`) uses matplotlib's Agg
    canvas and works on every rank; ``add_*`` record on rank 0 only. Subclasses
    implement :meth:`add_datasample`; an instance of a subclass is also the current
    ``Visualizer`` (``Visualizer.get_current_instance()`` returns it), as in mmengine.

    Its :meth:`state_dict` names the tracker runs its backends write to (W&B and
    MLflow run ids, the TensorBoard log dir); the runner keeps it in every
    checkpoint and restores it on resume before anything is recorded, so a resumed
    run continues the same tracker runs (a run id given in a backend's config wins).

    Args:
        name: instance name; constructing makes it the current visualizer.
        vis_backends: backend configs (``VISBACKENDS``) or instances, one or a list.
            A config may carry ``name`` (default: the class name).
        save_dir: run directory; backends write under ``<save_dir>/vis_data``
            as in mmengine. Backend configs are skipped (with a warning) when
            it is None.
        image: an RGB image to start drawing on (see :meth:`set_image`).
        fig_save_cfg: keyword arguments of the matplotlib figure drawn on
            (default ``frameon=False``).
        fig_show_cfg: keyword arguments of the figure :meth:`show` opens.
    """

    _default_instance_name = "visualizer"

    def __init__(
        self,
        name: str = "visualizer",
        image: Any = None,
        vis_backends: BackendCfg | list[BackendCfg] | None = None,
        save_dir: str | os.PathLike[str] | None = None,
        fig_save_cfg: dict[str, Any] | None = None,
        fig_show_cfg: dict[str, Any] | None = None,
    ) -> None:
        self._init_drawing(fig_save_cfg, fig_show_cfg)
        self._image = None
        self._dataset_meta: dict[str, Any] | None = None
        self._vis_backends: dict[str, BaseVisBackend] = {}
        backends = (
            [vis_backends] if isinstance(vis_backends, (dict, BaseVisBackend)) else vis_backends
        )
        if backends is None:
            backends = []
        if not isinstance(backends, (list, tuple)):
            raise TypeError(
                f"vis_backends must be a backend config dict, a backend, or a list of them; "
                f"got {type(vis_backends).__name__}"
            )
        data_dir = None if save_dir is None else os.path.join(os.fspath(save_dir), "vis_data")
        # directories in the state are kept relative to this (the runner's work dir)
        self._root = None if save_dir is None else os.path.dirname(os.path.abspath(save_dir))
        for index, item in enumerate(backends):
            self._add_backend(index, item, data_dir)
        super().__init__(name)
        if type(self) is not Visualizer:  # a subclass instance is the current Visualizer too
            register_instance(Visualizer, name, self)
        if image is not None:
            self.set_image(image)

    @classmethod
    def get_instance(cls: type[V], name: str, **kwargs: Any) -> V:
        """The instance ``name`` (created with ``kwargs`` if missing), made current for
        its class and for ``Visualizer``."""
        instance = super().get_instance(name, **kwargs)
        if cls is not Visualizer:
            if lookup_instance(Visualizer, name) is not instance:
                register_instance(Visualizer, name, instance)
            set_current_instance(Visualizer, name)
        return instance

    def _add_backend(self, index: int, item: Any, data_dir: str | None) -> None:
        if isinstance(item, dict):
            cfg = dict(item)
            backend_name = cfg.pop("name", None)
            if data_dir is None and "save_dir" not in cfg:
                warnings.warn(
                    f"Visualizer: vis_backends[{index}] ({cfg.get('type')}) is skipped because "
                    "no save_dir was given",
                    stacklevel=3,
                )
                return
            backend = VISBACKENDS.build(cfg, default_args={"save_dir": data_dir})
        elif isinstance(item, BaseVisBackend):
            backend_name, backend = None, item
        else:
            raise TypeError(
                f"vis_backends[{index}] must be a config dict or a BaseVisBackend, got "
                f"{type(item).__name__}"
            )
        backend_name = backend_name or type(backend).__name__
        if backend_name in self._vis_backends:
            raise DuplicateBackendError(
                f"two vis_backends are named '{backend_name}'; give one a different name="
            )
        self._vis_backends[backend_name] = backend

    @property
    def dataset_meta(self) -> dict[str, Any] | None:
        """Dataset meta information (class names, palette) for subclasses that draw."""
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, meta: dict[str, Any] | None) -> None:
        self._dataset_meta = meta

    @property
    def backends(self) -> dict[str, BaseVisBackend]:
        """The backends by name."""
        return self._vis_backends

    def get_backend(self, name: str) -> BaseVisBackend | None:
        """The backend called ``name``, or None."""
        return self._vis_backends.get(name)

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the config in every backend."""
        if process_rank() == 0:
            for backend in self._vis_backends.values():
                backend.add_config(config, **kwargs)

    def add_graph(self, model: Any, data_batch: Any = None, **kwargs: Any) -> None:
        """Record the model graph in every backend that supports it."""
        if process_rank() == 0:
            for backend in self._vis_backends.values():
                backend.add_graph(model, data_batch, **kwargs)

    def add_image(self, name: str, image: Any, step: int = 0) -> None:
        """Record ``image`` in every backend, as an HWC uint8 RGB array.

        ``image`` may be a numpy array (HW, HWC or CHW) or a torch tensor (CHW or
        HWC); floats are read as [0, 1] unless a value exceeds 1 (then [0, 255]).
        """
        if process_rank() != 0:
            return
        rgb = to_rgb_uint8(image)
        for backend in self._vis_backends.values():
            backend.add_image(name, rgb, step)

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one scalar in every backend."""
        if process_rank() == 0:
            for backend in self._vis_backends.values():
                backend.add_scalar(name, value, step, **kwargs)

    def add_scalars(
        self,
        scalar_dict: dict[str, Any],
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Record several scalars in every backend."""
        if process_rank() == 0:
            for backend in self._vis_backends.values():
                backend.add_scalars(scalar_dict, step, file_path, **kwargs)

    def add_datasample(
        self,
        name: str,
        image: Any,
        data_sample: Any = None,
        draw_gt: bool = True,
        draw_pred: bool = True,
        show: bool = False,
        wait_time: float = 0,
        step: int = 0,
    ) -> None:
        """Draw ``data_sample`` (ground truth and/or prediction) on ``image`` and
        record it (``add_image``) or :meth:`show` it. The base class draws nothing:
        task visualizers override this, usually with ``set_image``, ``draw_*``,
        ``get_image`` and ``add_image(name, drawn, step)``."""

    def show(
        self,
        drawn_img: Any = None,
        win_name: str = "image",
        wait_time: float = 0.0,
        continue_key: str = " ",
        backend: str = "matplotlib",
    ) -> Any:
        """Show ``drawn_img`` (default: :meth:`get_image`) in a matplotlib window named
        ``win_name`` for ``wait_time`` seconds (0: until it is closed); return the figure.

        ``continue_key`` is accepted for mmengine compatibility (closing the window or
        the timeout continues). With a non-interactive matplotlib backend (Agg, as on
        servers) nothing is displayed.
        """
        del continue_key
        if backend != "matplotlib":
            raise ValueError(
                f'backend should be "matplotlib" (cadence has no OpenCV window), got {backend!r}'
            )
        import matplotlib.pyplot as plt

        image = self.get_image() if drawn_img is None else drawn_img
        figure = plt.figure(num=win_name, **self.fig_show_cfg)
        figure.clear()
        figure.subplots_adjust(left=0, right=1, bottom=0, top=1)
        axes = figure.add_subplot()
        axes.axis(False)
        axes.imshow(image)
        if plt.get_backend().lower() in ("agg", "pdf", "svg", "ps", "cairo", "template"):
            return figure
        if wait_time > 0:
            plt.show(block=False)
            plt.pause(wait_time)
        else:
            plt.show()
        return figure

    def close(self) -> None:
        """Close every backend."""
        for backend in self._vis_backends.values():
            backend.close()

    def state_dict(self) -> dict[str, Any]:
        """``{'root': ..., 'backends': {name: {'type': class name, **backend state}}}``
        for the backends that write to a tracker run (see ``BaseVisBackend.state_dict``).

        ``root`` is the parent of ``save_dir`` (the work dir under the runner): on
        load, directories stored under it are looked up under the current one first.
        """
        backends = {}
        for name, backend in self._vis_backends.items():
            state = backend.state_dict()
            if state:
                backends[name] = {"type": type(backend).__name__, **state}
        return {"root": self._root, "backends": backends}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Make each backend continue the run ``state`` names for it (same name and type);
        other backends, and every backend on ranks other than 0, are left as they are."""
        if process_rank() != 0 or not isinstance(state, Mapping):
            return
        stored = state.get("backends")
        if not isinstance(stored, Mapping):
            return
        root = state.get("root")
        for name, entry in stored.items():
            backend = self._vis_backends.get(name)
            if backend is None or not isinstance(entry, Mapping):
                continue
            if entry.get("type") != type(backend).__name__:
                continue
            entry = {key: value for key, value in entry.items() if key != "type"}
            for key in backend.state_dir_keys:
                entry[key] = self._relocate(entry.get(key), root)
            backend.load_state_dict(entry)

    def _relocate(self, path: Any, root: Any) -> Any:
        """``path`` (stored under ``root``) under this visualizer's root if it exists there."""
        if not isinstance(path, str) or not isinstance(root, str) or self._root is None:
            return path
        if not (os.path.isabs(path) and os.path.isabs(root)):
            return path
        if os.path.commonpath([root, path]) != root:
            return path
        moved = os.path.join(self._root, os.path.relpath(path, root))
        return moved if os.path.isdir(moved) else path
