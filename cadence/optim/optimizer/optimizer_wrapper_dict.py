"""``OptimWrapperDict``: several named optimizer wrappers (e.g. a GAN's two)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from torch import Tensor, nn

from ...model.wrappers.utils import unwrap_model
from ...registry import OPTIM_WRAPPERS
from ...utils import did_you_mean
from .optimizer_wrapper import OptimWrapper

_PER_WRAPPER_ATTRS = frozenset(
    {"inner_count", "max_counts", "accumulative_counts", "optimizer", "loss_scaler"}
)


def _per_wrapper(method: str) -> NoReturn:
    raise NotImplementedError(
        f"OptimWrapperDict cannot tell which optimizer `{method}` is meant for: `{method}` "
        f"should be called by each optimizer wrapper separately, e.g. "
        f"optim_wrapper['generator'].{method}(...)"
    )


class OptimWrapperDictTypeError(TypeError, AssertionError):
    """A value of an :class:`OptimWrapperDict` that is not an optimizer wrapper (a
    ``TypeError``, and an ``AssertionError`` as mmengine's check is an ``assert``)."""


@OPTIM_WRAPPERS.register_module()
class OptimWrapperDict(OptimWrapper):
    """Named :class:`OptimWrapper` objects trained together, saved and logged as one.

    ``optim_wrapper['generator'].update_params(loss)`` updates one of them;
    ``update_params``, ``backward``, ``step`` and ``optim_context`` on the dict
    itself raise ``NotImplementedError``. Learning rates, momenta, log values
    and state dicts are keyed by the wrapper's name (``'generator.lr'``).
    """

    def __init__(self, **optim_wrappers: OptimWrapper) -> None:
        for name, wrapper in optim_wrappers.items():
            if not isinstance(wrapper, OptimWrapper):
                raise OptimWrapperDictTypeError(
                    f"OptimWrapperDict values must be OptimWrapper instances, got "
                    f"{name}={type(wrapper).__name__} (`OptimWrapperDict` only accept "
                    "OptimWrapper instances)"
                )
        self.optim_wrappers: dict[str, OptimWrapper] = dict(optim_wrappers)

    # ------------------------------------------------ container protocol
    def __getitem__(self, key: str) -> OptimWrapper:
        try:
            return self.optim_wrappers[key]
        except KeyError:
            raise KeyError(
                f"OptimWrapperDict has no wrapper named {key!r}; it has "
                f"{', '.join(map(repr, self.optim_wrappers)) or 'none'}."
                f"{did_you_mean(str(key), self.optim_wrappers)}"
            ) from None

    def __contains__(self, key: object) -> bool:
        return key in self.optim_wrappers

    def __len__(self) -> int:
        return len(self.optim_wrappers)

    def __iter__(self) -> Iterator[str]:
        return iter(self.optim_wrappers)

    def keys(self) -> Iterator[str]:
        """The wrapper names."""
        yield from self.optim_wrappers.keys()

    def values(self) -> Iterator[OptimWrapper]:
        """The wrappers."""
        yield from self.optim_wrappers.values()

    def items(self) -> Iterator[tuple[str, OptimWrapper]]:
        """``(name, wrapper)`` pairs."""
        yield from self.optim_wrappers.items()

    # ------------------------------------------------ updating (per wrapper)
    def update_params(
        self,
        loss: Tensor,
        step_kwargs: dict[str, Any] | None = None,
        zero_kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Not supported: call ``update_params`` on one wrapper."""
        _per_wrapper("update_params")

    def backward(self, loss: Tensor, **kwargs: Any) -> None:
        """Not supported: each wrapper may scale its loss differently."""
        _per_wrapper("backward")

    def step(self, **kwargs: Any) -> None:
        """Not supported: call ``step`` on one wrapper."""
        _per_wrapper("step")

    def zero_grad(self, **kwargs: Any) -> None:
        """Zero the gradients of every wrapper."""
        for wrapper in self.optim_wrappers.values():
            wrapper.zero_grad(**kwargs)

    @contextmanager
    def optim_context(self, model: nn.Module) -> Iterator[None]:
        """Not supported: enter ``optim_context`` of one wrapper."""
        _per_wrapper("optim_context")
        yield  # pragma: no cover

    def should_update(self) -> bool:
        """Not supported: ask one wrapper."""
        _per_wrapper("should_update")

    def should_sync(self) -> bool:
        """Not supported: ask one wrapper."""
        _per_wrapper("should_sync")

    def scale_loss(self, loss: Tensor) -> Tensor:
        """Not supported: ask one wrapper."""
        _per_wrapper("scale_loss")

    def initialize_count_status(self, model: nn.Module, init_counts: int, max_counts: int) -> None:
        """Set the iteration counters of every wrapper (``model`` is used only for warnings)."""
        for name, wrapper in self.optim_wrappers.items():
            owner = unwrap_model(model)
            sub = getattr(owner, name, None)
            target = sub if isinstance(sub, nn.Module) else model
            wrapper.initialize_count_status(target, init_counts, max_counts)

    # ------------------------------------------------ reading and state
    @property
    def param_groups(self) -> dict[str, list[dict[str, Any]]]:  # type: ignore[override]
        """``{name: that wrapper's param_groups}``."""
        return {name: w.param_groups for name, w in self.optim_wrappers.items()}

    @property
    def defaults(self) -> dict[str, dict[str, Any]]:
        """``{name: that wrapper's optimizer defaults}``."""
        return {name: w.defaults for name, w in self.optim_wrappers.items()}

    def get_lr(self) -> dict[str, list[float]]:
        """``{'<name>.lr': [...]}`` (and ``'<name>.base_lr'``) for every wrapper."""
        return {
            f"{name}.{key}": value
            for name, wrapper in self.optim_wrappers.items()
            for key, value in wrapper.get_lr().items()
        }

    def get_momentum(self) -> dict[str, list[float]]:
        """``{'<name>.momentum': [...]}`` for every wrapper."""
        return {
            f"{name}.momentum": wrapper.get_momentum()["momentum"]
            for name, wrapper in self.optim_wrappers.items()
        }

    def pop_log_vars(self) -> dict[str, Tensor]:
        """Every wrapper's log values, keyed ``'<name>.<key>'`` (e.g. ``'gen.grad_norm'``)."""
        result: dict[str, Tensor] = {}
        for name, wrapper in self.optim_wrappers.items():
            for key, value in wrapper.pop_log_vars().items():
                result[f"{name}.{key}"] = value
        return result

    def state_dict(self) -> dict[str, Any]:
        """``{name: that wrapper's state_dict()}``."""
        return {name: w.state_dict() for name, w in self.optim_wrappers.items()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load each named state into the wrapper of that name."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        for name in state_dict:
            if name not in self.optim_wrappers:
                raise KeyError(
                    f"state_dict has an entry {name!r} but OptimWrapperDict has only "
                    f"{', '.join(map(repr, self.optim_wrappers))}."
                    f"{did_you_mean(str(name), self.optim_wrappers)}"
                )
        for name, state in state_dict.items():
            self.optim_wrappers[name].load_state_dict(state)

    def __getattr__(self, name: str) -> Any:
        # Counters such as inner_count belong to each wrapper; say so instead of
        # a bare "no attribute" (still an AttributeError, so hasattr() is False).
        if name in _PER_WRAPPER_ATTRS:
            raise AttributeError(
                f"OptimWrapperDict has no single {name}; read it from one wrapper, "
                f"e.g. optim_wrapper['generator'].{name}"
            )
        raise AttributeError(f"'OptimWrapperDict' object has no attribute {name!r}")

    def __repr__(self) -> str:
        return "\n".join(f"name: {name}\n{w!r}" for name, w in self.optim_wrappers.items())


def accumulation_pending(optim_wrapper: Any) -> bool:
    """Whether ``optim_wrapper`` (or one wrapper of an :class:`OptimWrapperDict`) holds
    gradients of an accumulation window that its last ``backward`` did not close."""
    wrappers = getattr(optim_wrapper, "optim_wrappers", None)
    for wrapper in wrappers.values() if isinstance(wrappers, dict) else [optim_wrapper]:
        should_update = getattr(wrapper, "should_update", None)
        if callable(should_update) and not should_update():
            return True
    return False
