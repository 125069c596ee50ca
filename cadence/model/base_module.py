"""BaseModule: an ``nn.Module`` whose weights are initialised from ``init_cfg``.

Also mmengine's containers with their own ``init_cfg``: :class:`Sequential`,
:class:`ModuleList` and :class:`ModuleDict`.
"""

from __future__ import annotations

import copy
import logging
from abc import ABCMeta
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from torch import nn

from ..logging import print_log
from .weight_init import initialize
from .wrappers import is_model_wrapper

#: ``init_cfg``: one initializer config, a list of them, or None.
InitCfg = dict[str, Any] | list[dict[str, Any]] | None


def _is_pretrained(cfg: dict[str, Any]) -> bool:
    kind = cfg.get("type")
    return kind == "Pretrained" or getattr(kind, "__name__", None) == "PretrainedInit"


class BaseModule(nn.Module, metaclass=ABCMeta):
    """``nn.Module`` with ``init_cfg`` and :meth:`init_weights` (mmengine's contract).

    Args:
        init_cfg: a dict or list of dicts for :func:`~cadence.model.weight_init.initialize`.
    """

    def __init__(self, init_cfg: dict[str, Any] | list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self._is_init = False
        self.init_cfg = copy.deepcopy(init_cfg)

    @property
    def is_init(self) -> bool:
        """Whether :meth:`init_weights` has run."""
        return self._is_init

    @is_init.setter
    def is_init(self, value: bool) -> None:
        self._is_init = value

    def init_weights(self) -> None:
        """Apply ``init_cfg``, then the children's ``init_weights``, then ``Pretrained`` configs.

        Children initialise after their parent, so a child's own ``init_cfg``
        wins over the parent's; a ``Pretrained`` config of this module is
        applied last and overwrites both.
        """
        if self._is_init:
            print_log(
                f"init_weights of {type(self).__name__} has been called more than once",
                logger="current",
                level=logging.WARNING,
            )
            return
        cfgs: list[dict[str, Any]] = []
        if self.init_cfg:
            cfgs = [self.init_cfg] if isinstance(self.init_cfg, dict) else list(self.init_cfg)
        pretrained = [cfg for cfg in cfgs if _is_pretrained(cfg)]
        others = [cfg for cfg in cfgs if not _is_pretrained(cfg)]
        if others:
            print_log(
                f"initialize {type(self).__name__} with init_cfg {others}",
                logger="current",
                level=logging.DEBUG,
            )
            initialize(self, others)
        for child in self.children():
            target: Any = child
            if is_model_wrapper(child) and not hasattr(child, "init_weights"):
                target = child.module  # e.g. a DDP-wrapped sub-model: initialise what it wraps
            child_init = getattr(target, "init_weights", None)
            if callable(child_init) and not getattr(target, "is_init", False):
                child_init()
        if pretrained:
            initialize(self, pretrained)
        self._is_init = True

    def __repr__(self) -> str:
        text = super().__repr__()
        return f"{text}\ninit_cfg={self.init_cfg}" if self.init_cfg else text


class Sequential(BaseModule, nn.Sequential):
    """``nn.Sequential`` with its own ``init_cfg``: its layers initialise apart from the parent's.

    ``Sequential(conv, relu, init_cfg=dict(type='Constant', layer='Conv2d', val=1))``.
    """

    def __init__(self, *args: nn.Module, init_cfg: InitCfg = None) -> None:
        BaseModule.__init__(self, init_cfg)  # nn.Module set up once, through the MRO
        layers = args[0].items() if len(args) == 1 and isinstance(args[0], OrderedDict) else None
        for name, layer in layers if layers is not None else enumerate(args):
            self.add_module(str(name), layer)


class ModuleList(BaseModule, nn.ModuleList):
    """``nn.ModuleList`` with its own ``init_cfg`` for the modules it holds."""

    def __init__(
        self, modules: Iterable[nn.Module] | None = None, init_cfg: InitCfg = None
    ) -> None:
        BaseModule.__init__(self, init_cfg)
        if modules is not None:
            self.extend(modules)


class ModuleDict(BaseModule, nn.ModuleDict):
    """``nn.ModuleDict`` with its own ``init_cfg`` for the modules it holds."""

    def __init__(
        self,
        modules: Mapping[str, nn.Module] | None = None,
        init_cfg: InitCfg = None,
    ) -> None:
        BaseModule.__init__(self, init_cfg)
        if modules is not None:
            self.update(modules)
