"""mmengine's ``runner.checkpoint`` helpers, over cadence's inert checkpoint reading.

Downstream models load pretrained weights with ``CheckpointLoader.load_checkpoint(path)``
or ``load_checkpoint(model, path, logger=...)``. :class:`CheckpointLoader` picks a loader
by the path's scheme, as mmengine's does (``register_scheme`` adds one): a local file is
read as every cadence checkpoint is (verified against its manifest when it has one,
never executing code), an ``http(s)://`` URL is downloaded once into torch's hub cache,
``s3://`` and ``pavi://`` files are fetched and read the same inert way. The model-zoo
lookups (``torchvision://``, ``open-mmlab://``, ``mmcls://``) are not provided and say so.
"""

from __future__ import annotations

import io
import logging
import os
import re
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ..checkpoint import CheckpointError, find_latest_checkpoint, load_checkpoint
from ..checkpoint.files import read_checkpoint, safe_torch_load
from ..checkpoint.weights import load_matching
from ..logging import print_log
from ..model.wrappers.utils import is_model_wrapper

Loader = Callable[[str, Any], Any]


class CheckpointPathError(ValueError, AssertionError):
    """A checkpoint path that its loader cannot read (mmengine asserts)."""


def _location(map_location: Any) -> Any:
    return "cpu" if map_location is None else map_location


class CheckpointLoader:
    """Reads a checkpoint with the loader registered for its path's scheme."""

    _schemes: dict[str, Loader] = {}

    @classmethod
    def _register(cls, prefixes: str | Sequence[str], loader: Loader, force: bool) -> None:
        for prefix in [prefixes] if isinstance(prefixes, str) else list(prefixes):
            if prefix in cls._schemes and not force:
                raise KeyError(
                    f"{prefix} is already registered as a loader backend, add "
                    f'"force=True" to replace it (its loader: {cls._schemes[prefix].__name__})'
                )
            cls._schemes[prefix] = loader
        # the longest prefix is tried first ('a/b/c' before 'a/b')
        cls._schemes = dict(sorted(cls._schemes.items(), key=lambda kv: -len(kv[0])))

    @classmethod
    def register_scheme(
        cls, prefixes: str | Sequence[str], loader: Loader | None = None, force: bool = False
    ) -> Any:
        """Read paths starting with ``prefixes`` (regular expressions matched at the start)
        with ``loader(filename, map_location)``; without ``loader``, a decorator."""
        if loader is not None:
            cls._register(prefixes, loader, force)
            return None

        def register(fn: Loader) -> Loader:
            cls._register(prefixes, fn, force)
            return fn

        return register

    @classmethod
    def _get_checkpoint_loader(cls, path: str) -> Loader:
        """The loader of ``path`` (:func:`load_from_local` when no scheme matches)."""
        for prefix, loader in cls._schemes.items():
            if re.match(prefix, path) is not None:
                return loader
        return load_from_local

    @classmethod
    def load_checkpoint(
        cls, filename: str, map_location: Any = None, logger: Any = "current"
    ) -> Any:
        """The checkpoint at ``filename``, read by its scheme's loader."""
        loader = cls._get_checkpoint_loader(filename)
        print_log(f"Loads checkpoint by {loader.__name__[10:]} backend from path: {filename}",
                  logger=logger)  # fmt: skip
        return loader(filename, map_location)


def load_from_local(filename: str, map_location: Any) -> Any:
    """A local file (``~`` expanded), verified when it has a manifest, read inertly."""
    path = os.path.expanduser(filename)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} can not be found.")
    return read_checkpoint(path, _location(map_location))


@CheckpointLoader.register_scheme(prefixes=("http://", "https://"))
def load_from_http(filename: str, map_location: Any = None, model_dir: str | None = None,
                   progress: bool = True) -> Any:  # fmt: skip
    """An ``http(s)://`` file, downloaded once into torch's hub cache (``weights_only``)."""
    return dict(torch.hub.load_state_dict_from_url(
        filename, model_dir=model_dir, map_location=_location(map_location),
        progress=progress, weights_only=True,
    ))  # fmt: skip


@CheckpointLoader.register_scheme(prefixes="pavi://")
def load_from_pavi(filename: str, map_location: Any = None) -> Any:
    """A ``pavi://`` model (needs the ``pavi`` package), downloaded and read inertly."""
    if not filename.startswith("pavi://"):
        raise CheckpointPathError(f"a pavi checkpoint path starts with pavi://, got {filename}")
    try:
        from pavi import modelcloud
    except ImportError as exc:
        raise ImportError("loading a pavi:// checkpoint needs the pavi package") from exc
    model = modelcloud.get(filename[len("pavi://") :])
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, str(model.name))
        model.download(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"pavi did not download {filename} to {path}")
        return safe_torch_load(path, _location(map_location), source=filename)


@CheckpointLoader.register_scheme(prefixes=r"(\S+\:)?s3://")
def load_from_ceph(filename: str, map_location: Any = None,
                   backend_args: Mapping[str, Any] | None = None) -> Any:  # fmt: skip
    """An object-storage file (``s3://``), fetched through :mod:`cadence.fileio`."""
    from .. import fileio

    data = fileio.get(filename, backend_args=dict(backend_args) if backend_args else None)
    return safe_torch_load(io.BytesIO(data), _location(map_location), source=filename)


def _no_model_zoo(filename: str, map_location: Any = None) -> Any:
    scheme = filename.partition("://")[0]
    raise CheckpointError(
        f"checkpoint '{filename}': the '{scheme}://' model-zoo scheme is not provided by "
        f"cadence; download the file and pass its path (or an http(s) URL)"
    )


def load_from_torchvision(filename: str, map_location: Any = None) -> Any:
    """``torchvision://`` and ``modelzoo://`` names: not provided (raises)."""
    return _no_model_zoo(filename, map_location)


def load_from_openmmlab(filename: str, map_location: Any = None) -> Any:
    """``open-mmlab://`` and ``openmmlab://`` names: not provided (raises)."""
    return _no_model_zoo(filename, map_location)


def load_from_mmcls(filename: str, map_location: Any = None) -> Any:
    """``mmcls://`` names: not provided (raises)."""
    return _no_model_zoo(filename, map_location)


CheckpointLoader.register_scheme(("modelzoo://", "torchvision://"), load_from_torchvision)
CheckpointLoader.register_scheme(("open-mmlab://", "openmmlab://"), load_from_openmmlab)
CheckpointLoader.register_scheme("mmcls://", load_from_mmcls)


def _load_checkpoint(filename: str, map_location: Any = None, logger: Any = None) -> Any:
    """mmengine's private name for :meth:`CheckpointLoader.load_checkpoint`."""
    return CheckpointLoader.load_checkpoint(filename, map_location, logger)


def _load_checkpoint_with_prefix(prefix: str, filename: str, map_location: Any = None) -> Any:
    """The weights of ``filename`` under ``prefix`` (``'backbone'``), the prefix removed."""
    checkpoint = _load_checkpoint(filename, map_location)
    state = checkpoint.get("state_dict", checkpoint)
    state = OrderedDict((k[len("module.") :] if k.startswith("module.") else k, v)
                        for k, v in state.items())  # fmt: skip
    prefix = prefix if prefix.endswith(".") else prefix + "."
    picked = OrderedDict((k[len(prefix) :], v) for k, v in state.items() if k.startswith(prefix))
    if not picked:
        raise CheckpointPathError(f"{prefix} is not in the pretrained model {filename}")
    return picked


def load_state_dict(
    module: nn.Module, state_dict: Mapping[str, Any], strict: bool = False, logger: Any = None
) -> None:
    """Load what fits of ``state_dict`` into ``module`` (wrappers looked through); the keys
    and shapes that do not fit are one WARNING (``strict``: a ``RuntimeError``)."""
    report = load_matching(module, state_dict).report()
    if report is None:
        return
    if strict:
        raise RuntimeError(report)
    print_log(report, logger=logger, level=logging.WARNING)


def weights_to_cpu(state_dict: Mapping[str, Any]) -> OrderedDict[str, Any]:
    """A copy of ``state_dict`` with every tensor on the CPU."""
    return OrderedDict((key, value.cpu()) for key, value in state_dict.items())


def get_state_dict(module: nn.Module, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> Any:  # fmt: skip
    """The state dict of ``module`` with every model wrapper in it (at the top or around a
    submodule) looked through, so no ``module.`` appears in the keys."""
    while is_model_wrapper(module):
        module = module.module  # type: ignore[assignment]  # a wrapper holds a module
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    metadata = getattr(destination, "_metadata", None)
    if metadata is not None:
        metadata[prefix[:-1]] = dict(version=module._version)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            get_state_dict(child, destination, f"{prefix}{name}.", keep_vars)
    for hook in module._state_dict_hooks.values():
        result = hook(module, destination, prefix, metadata)
        if result is not None:
            destination = result
    return destination


def save_checkpoint(
    checkpoint: Mapping[str, Any],
    filename: str,
    file_client_args: Mapping[str, Any] | None = None,
    backend_args: Mapping[str, Any] | None = None,
) -> None:
    """Write ``checkpoint`` (a dict of tensors and plain values) to ``filename``, a path
    or a URL. A local file is replaced at once (written beside it, then renamed)."""
    if file_client_args is not None and backend_args is not None:
        raise ValueError("give file_client_args or backend_args, not both")
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    from .. import fileio

    if fileio.is_url(filename):
        args = {k: v for k, v in dict(backend_args or file_client_args or {}).items()
                if k != "backend"}  # fmt: skip
        fileio.put(buffer.getvalue(), filename, backend_args=args or None)
        return
    path = os.path.abspath(os.path.expanduser(filename))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".save-", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buffer.getvalue())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


__all__ = [
    "CheckpointLoader", "find_latest_checkpoint", "get_state_dict", "load_checkpoint",
    "load_from_ceph", "load_from_http", "load_from_local", "load_from_mmcls",
    "load_from_openmmlab", "load_from_pavi", "load_from_torchvision", "load_state_dict",
    "save_checkpoint", "weights_to_cpu",
]  # fmt: skip
