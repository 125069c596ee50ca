"""The interface every optimizer wrapper offers to loops, hooks and schedulers."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any

import torch
from torch.optim import Optimizer

_OPTIMIZER_METHODS = ("step", "zero_grad", "state_dict", "load_state_dict")


def check_optimizer(optimizer: Any) -> None:
    """Raise ``TypeError`` unless ``optimizer`` looks like a ``torch.optim.Optimizer``."""
    if isinstance(optimizer, Optimizer):
        return
    missing = [m for m in _OPTIMIZER_METHODS if not callable(getattr(optimizer, m, None))]
    if missing or not isinstance(getattr(optimizer, "param_groups", None), list):
        raise TypeError(
            "an optimizer wrapper needs a torch.optim.Optimizer (or an object with "
            "param_groups, step, zero_grad, state_dict and load_state_dict), "
            f"got {type(optimizer).__name__}"
        )


class BaseOptimWrapper(metaclass=ABCMeta):
    """Owns an optimizer and exposes its learning rates, momenta and state.

    When the optimizer has several parameter groups, :attr:`param_groups` ends
    with one extra pseudo group (``base_param_settings``) holding the
    optimizer's defaults, as in mmengine: parameter schedulers update it like
    the others, and :meth:`get_lr` reports it as ``'base_lr'``, the scheduled
    learning rate before any per-group multiplier. Code that needs only the
    real groups reads ``optim_wrapper.optimizer.param_groups``.
    """

    def __init__(self, optimizer: Optimizer) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        self.base_param_settings: dict[str, Any] | None = None
        if len(optimizer.param_groups) > 1:
            settings: dict[str, Any] = {"params": torch.tensor([0.0], dtype=torch.float)}
            settings.update(optimizer.defaults)
            self.base_param_settings = settings

    # ------------------------------------------------------------ updating
    @abstractmethod
    def update_params(self, *args: Any, **kwargs: Any) -> None:
        """Back-propagate a loss and update the parameters when it is time."""

    @abstractmethod
    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """Back-propagate ``loss``."""

    @abstractmethod
    def step(self, **kwargs: Any) -> None:
        """Update the parameters from their gradients."""

    @abstractmethod
    def zero_grad(self, **kwargs: Any) -> None:
        """Reset the gradients."""

    # --------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state dict, plus ``base_param_settings`` when present."""
        state = self.optimizer.state_dict()
        if self.base_param_settings is not None:
            state["base_param_settings"] = self.base_param_settings
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the argument is not modified)."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        state = dict(state_dict)
        base = state.pop("base_param_settings", None)
        if base is not None:
            self.base_param_settings = base
        self.optimizer.load_state_dict(state)

    # ------------------------------------------------------------- reading
    @property
    def param_groups(self) -> list[dict[str, Any]]:
        """The optimizer's parameter groups (plus the base pseudo group, see class doc)."""
        if self.base_param_settings is not None:
            return self.optimizer.param_groups + [self.base_param_settings]
        return self.optimizer.param_groups

    @property
    def defaults(self) -> dict[str, Any]:
        """The optimizer's default hyper-parameters."""
        return self.optimizer.defaults

    def get_lr(self) -> dict[str, list[float]]:
        """``{'lr': [lr of each group]}``, plus ``'base_lr'`` when there are several groups."""
        result: dict[str, list[float]] = {}
        base = self.base_param_settings
        if base is not None and "lr" in base:
            result["base_lr"] = [base["lr"]]
        result["lr"] = [group["lr"] for group in self.optimizer.param_groups]
        return result

    def get_momentum(self) -> dict[str, list[float]]:
        """``{'momentum': [...]}``: each group's momentum, ``betas[0]`` for Adam-like, else 0."""
        momentum: list[float] = []
        for group in self.optimizer.param_groups:
            if "momentum" in group:
                momentum.append(group["momentum"])
            elif "betas" in group:
                momentum.append(group["betas"][0])
            else:
                momentum.append(0)
        return {"momentum": momentum}
