"""mmengine's ``runner.checkpoint`` helpers, over cadence's inert checkpoint reading.

Downstream models load pretrained weights with ``CheckpointLoader.load_checkpoint(path)``
or ``load_checkpoint(model, path, logger=...)``. A local file is read as every cadence
checkpoint is (verified against its manifest when it has one, never executing code);
an ``http(s)://`` URL is downloaded once into torch's hub cache and read with
``weights_only=True``. Other model-zoo schemes (``torchvision://``, ``open-mmlab://``...)
are not provided and say so.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ..checkpoint import CheckpointError, find_latest_checkpoint, load_checkpoint
from ..checkpoint.files import read_checkpoint
from ..model.wrappers.utils import unwrap_model

_URL_PREFIXES = ("http://", "https://")


class CheckpointLoader:
    """Reads a checkpoint from a local path or an ``http(s)://`` URL (see the module doc)."""

    @classmethod
    def load_checkpoint(
        cls, filename: str, map_location: Any = None, logger: Any = "current"
    ) -> dict[str, Any]:
        """The checkpoint dict at ``filename``."""
        location = "cpu" if map_location is None else map_location
        if filename.startswith(_URL_PREFIXES):
            loaded = torch.hub.load_state_dict_from_url(
                filename, map_location=location, weights_only=True
            )
            return dict(loaded)
        scheme, sep, _ = filename.partition("://")
        if sep:
            raise CheckpointError(
                f"checkpoint '{filename}': the '{scheme}://' model-zoo scheme is not provided "
                f"by cadence; download the file and pass its path (or an http(s) URL)"
            )
        return read_checkpoint(filename, location)


def _load_checkpoint(filename: str, map_location: Any = None, logger: Any = None) -> Any:
    """mmengine's private name for :meth:`CheckpointLoader.load_checkpoint`."""
    return CheckpointLoader.load_checkpoint(filename, map_location, logger)


def load_state_dict(
    module: nn.Module, state_dict: Mapping[str, Any], strict: bool = False, logger: Any = None
) -> None:
    """Load ``state_dict`` into ``module`` (unwrapped); mismatched keys warn unless strict."""
    from ..checkpoint.weights import load_state_dict_into

    load_state_dict_into(unwrap_model(module), {"state_dict": state_dict}, strict, ())


def weights_to_cpu(state_dict: Mapping[str, Any]) -> OrderedDict[str, Any]:
    """A copy of ``state_dict`` with every tensor on the CPU."""
    return OrderedDict((key, value.cpu()) for key, value in state_dict.items())


def get_state_dict(module: nn.Module, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> Any:  # fmt: skip
    """The state dict of ``module`` with any model wrapper taken off first."""
    return unwrap_model(module).state_dict(
        destination=destination, prefix=prefix, keep_vars=keep_vars
    )


__all__ = [
    "CheckpointLoader", "find_latest_checkpoint", "get_state_dict", "load_checkpoint",
    "load_state_dict", "weights_to_cpu",
]  # fmt: skip
