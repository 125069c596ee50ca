"""The base of every parameter scheduler: a step counter, an active window and state.

A scheduler owns one hyper-parameter (``param_name``: ``'lr'``, ``'momentum'``,
...) of every parameter group of an optimizer. Each :meth:`_ParamScheduler.step`
advances a global step counter; only steps in ``[begin, end)`` change the
value. Most schedules are *chained*: the new value is computed from the value
currently in the group, so several schedulers on the same parameter compose
multiplicatively, exactly as in mmengine. The value a group had before any
scheduler touched it is kept in the group as ``initial_<param_name>``.
"""

from __future__ import annotations

import copy
import inspect
import logging
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from torch.optim import Optimizer

from ...utils import did_you_mean

#: The ``end`` of a scheduler that never stops (mmengine's value).
INF = int(1e9)

#: A ``torch.optim.Optimizer`` or a wrapper whose ``.optimizer`` is one.
OptimizerLike = Any

_logger = logging.getLogger("cadence.optim.scheduler")

#: torch's explanation of the order of ``optimizer.step()`` and ``scheduler.step()``.
_ORDER_DOC = "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"


class SchedulerAssertionError(ValueError, AssertionError):
    """A scheduler argument rejected by a check that mmengine makes with ``assert``.

    It is a ``ValueError`` (a wrong value) and also an ``AssertionError``, so
    ``except AssertionError`` written against mmengine still catches it.
    """


def raw_optimizer(optimizer: OptimizerLike) -> Any:
    """Return the torch optimizer inside ``optimizer`` (itself when it is one)."""
    if isinstance(optimizer, Optimizer):
        return optimizer
    inner = getattr(optimizer, "optimizer", None)
    if isinstance(inner, Optimizer) or isinstance(getattr(inner, "param_groups", None), list):
        return inner
    raise TypeError(
        "a parameter scheduler needs a torch.optim.Optimizer or an optimizer wrapper whose "
        f".optimizer is one, got {type(optimizer).__name__} (the optimizer should be an "
        "Optimizer or an OptimWrapper)"
    )


def param_groups_owner(optimizer: OptimizerLike) -> Any:
    """Return the object whose ``param_groups`` a scheduler updates.

    A wrapper's own ``param_groups`` are used when it has them (mmengine's
    ``OptimWrapper`` appends a pseudo group holding the base settings), else
    those of the optimizer inside it.
    """
    inner = raw_optimizer(optimizer)
    if inner is optimizer:
        return optimizer
    try:
        groups = optimizer.param_groups
    except AttributeError:
        return inner
    return optimizer if isinstance(groups, list) else inner


#: Attribute a torch optimizer gets: how many times its ``step`` has run since a scheduler
#: was last attached (counted by a step post-hook, so ``optimizer.step`` itself is not
#: replaced; each new scheduler restarts the count, as mmengine's does).
_STEP_COUNT = "_cadence_steps_taken"


def _count_step(optimizer: Any, args: Any, kwargs: Any) -> None:
    setattr(optimizer, _STEP_COUNT, getattr(optimizer, _STEP_COUNT, 0) + 1)


def count_optimizer_steps(optimizer: Any) -> None:
    """Make the torch optimizer inside ``optimizer`` count its steps from 0 again (the
    post-hook is registered once per optimizer)."""
    try:
        inner = raw_optimizer(optimizer)
    except TypeError:
        return
    register = getattr(inner, "register_step_post_hook", None)
    if register is None:
        return
    if not hasattr(inner, _STEP_COUNT):
        register(_count_step)
    setattr(inner, _STEP_COUNT, 0)


def _stepped_before(optimizer: Any) -> bool:
    """Whether the optimizer stepped, or its wrapper ran a backward (an accumulation window
    that has not closed yet steps later, which is no misuse)."""
    try:
        inner = raw_optimizer(optimizer)
    except TypeError:
        return True
    if getattr(inner, _STEP_COUNT, 1) > 0:
        return True
    return bool(getattr(optimizer, "inner_count", 0))


def _scale(value: Any, factor: float) -> Any:
    if isinstance(value, (list, tuple)):
        return [v * factor for v in value]
    return value * factor


class _ParamScheduler:
    """Base class: schedules ``param_name`` of every parameter group.

    Args:
        optimizer: a ``torch.optim.Optimizer`` or a wrapper exposing ``.optimizer``.
        param_name: the key to schedule in each parameter group, e.g. ``'lr'``.
        begin: first step (inclusive) at which the value is updated.
        end: step (exclusive) after which the value is left alone.
        last_step: index of the last step taken; ``-1`` starts fresh. Resuming
            with another value needs ``initial_<param_name>`` in the groups.
        by_epoch: whether the caller steps it once per epoch (else per iteration).
        verbose: log every value change.

    Subclasses implement :meth:`_get_value`. Construction takes the first step.
    """

    #: True for schedulers whose ``step`` takes the validation metrics.
    need_val_args: ClassVar[bool] = False
    #: Constructor arguments measured in steps, scaled by :meth:`build_iter_from_epoch`.
    epoch_valued_args: ClassVar[tuple[str, ...]] = ()
    #: Attributes that are not part of :meth:`state_dict`.
    _not_state: ClassVar[frozenset[str]] = frozenset({"optimizer", "_owner"})
    #: Keys that mmengine's state dicts carry and that this class rebuilds itself.
    _foreign_state: ClassVar[frozenset[str]] = frozenset({"anneal_func"})

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self._attach(optimizer, param_name, begin, end, last_step, by_epoch, verbose)
        count_optimizer_steps(optimizer)
        self._global_step = -1
        self.step()

    def _attach(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        begin: int,
        end: int,
        last_step: int,
        by_epoch: bool,
        verbose: bool,
    ) -> None:
        """Validate the common arguments and record the initial values."""
        name = type(self).__name__
        self.optimizer = optimizer
        self._owner = param_groups_owner(optimizer)
        if not isinstance(param_name, str):
            raise TypeError(f"{name}: param_name must be a str, got {type(param_name).__name__}")
        if end <= begin:
            raise ValueError(
                f"{name}: end should be larger than begin, got begin={begin}, end={end}"
            )
        if isinstance(last_step, bool) or not isinstance(last_step, int) or last_step < -1:
            raise SchedulerAssertionError(
                f"{name}: last_step must be an int >= -1, got {last_step!r}"
            )
        initial = f"initial_{param_name}"
        groups = self._owner.param_groups
        for index, group in enumerate(groups):
            if last_step == -1:
                if param_name not in group:
                    keys = [k for k in group if k != "params"]
                    raise KeyError(
                        f"{name}: param_groups[{index}] has no '{param_name}' to schedule."
                        f"{did_you_mean(param_name, keys)}"
                    )
                group.setdefault(initial, group[param_name])
            elif initial not in group:
                raise KeyError(
                    f"{name}: param '{initial}' is not specified in param_groups[{index}]; "
                    f"resuming with last_step={last_step} needs it (load the optimizer "
                    "state first)"
                )
        self.param_name = param_name
        self.begin = begin
        self.end = end
        self.by_epoch = by_epoch
        self.verbose = verbose
        self.last_step = last_step
        self.base_values = [group[initial] for group in groups]
        self._last_value = [group[param_name] for group in groups]

    # ------------------------------------------------------------- stepping
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # step() writes values inline unless a subclass customises _write
        cls._plain_write = cls._write is _ParamScheduler._write

    _plain_write: ClassVar[bool] = True

    def step(self) -> None:
        """Advance one step; inside ``[begin, end)`` write the new values.

        Warns (as torch and mmengine do) when the first step after construction
        comes before any ``optimizer.step()`` since construction: the first value
        of the schedule would then be skipped.
        """
        if self._global_step == 0 and not _stepped_before(self.optimizer):
            warnings.warn(
                f"{type(self).__name__}.step() was called before optimizer.step(): call "
                "optimizer.step() first, then scheduler.step(), or the first value of the "
                "schedule is skipped (if optimizer.step was replaced after the scheduler was "
                f"built, make sure the replacement calls the original); see {_ORDER_DOC}",
                UserWarning,
                stacklevel=2,
            )
        self._global_step += 1
        groups = self._owner.param_groups
        name = self.param_name
        if self.begin <= self._global_step < self.end:
            self.last_step += 1
            values = self._get_value()
            if self._plain_write and not self.verbose:
                for group, value in zip(groups, values):
                    group[name] = value
            else:
                for index, (group, value) in enumerate(zip(groups, values)):
                    self._write(group, index, value)
        self._last_value = [group[name] for group in groups]

    def _get_value(self) -> list[Any]:
        """Return the value of each parameter group for step ``self.last_step``."""
        raise NotImplementedError(f"{type(self).__name__} must implement _get_value()")

    def _current_values(self) -> list[Any]:
        name = self.param_name
        return [group[name] for group in self._owner.param_groups]

    def _write(self, group: dict[str, Any], index: int, value: Any) -> None:
        """Store ``value`` in one parameter group."""
        group[self.param_name] = value
        if self.verbose:
            self.print_value(True, index, value)

    def print_value(self, is_verbose: bool, group: int, value: float) -> None:
        """Log the new value of parameter group ``group`` when ``is_verbose``."""
        if is_verbose:
            _logger.info(
                "%s: %s of param group %d set to %.4e",
                type(self).__name__,
                self.param_name,
                group,
                value,
            )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(param_name={self.param_name!r}, begin={self.begin}, "
            f"end={self.end}, by_epoch={self.by_epoch}, last_step={self.last_step})"
        )

    def get_last_value(self) -> list[Any]:
        """Return the value of each parameter group after the last step."""
        return self._last_value

    # ---------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """Return everything needed to continue exactly (not the optimizer)."""
        return {
            key: copy.deepcopy(value)
            for key, value in self.__dict__.items()
            if key not in self._not_state
        }

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (also accepts mmengine's)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"{type(self).__name__}.load_state_dict expects a dict, "
                f"got {type(state_dict).__name__}"
            )
        known = {key for key in self.__dict__ if key not in self._not_state}
        unknown = [key for key in state_dict if key not in known and key not in self._foreign_state]
        if unknown:
            hints = "".join(did_you_mean(key, known) for key in unknown)
            raise KeyError(
                f"{type(self).__name__}.load_state_dict: unexpected key(s) "
                f"{', '.join(repr(k) for k in unknown)} (is this the state of another "
                f"scheduler?).{hints}"
            )
        for key, value in state_dict.items():
            if key in known:
                setattr(self, key, copy.deepcopy(value))

    # ------------------------------------------------------------- building
    @classmethod
    def build_iter_from_epoch(
        cls,
        *args: Any,
        begin: float = 0,
        end: float = INF,
        by_epoch: bool = True,
        epoch_length: int | None = None,
        **kwargs: Any,
    ) -> _ParamScheduler:
        """Build an iteration-based scheduler from epoch-based arguments.

        ``begin``/``end`` and the arguments named in :attr:`epoch_valued_args`
        are multiplied by ``epoch_length`` (iterations per epoch).
        """
        if not by_epoch:
            raise ValueError(
                f"{cls.__name__}: only an epoch-based scheduler (by_epoch=True) can be "
                "converted to iteration-based"
            )
        if epoch_length is None or epoch_length <= 0:
            raise SchedulerAssertionError(
                f"{cls.__name__}: epoch_length must be a positive number of iterations per "
                f"epoch to convert to iteration-based, got {epoch_length!r}"
            )
        for arg in cls.epoch_valued_args:
            if kwargs.get(arg) is not None:
                kwargs[arg] = _scale(kwargs[arg], epoch_length)
        kwargs["begin"] = int(begin * epoch_length)
        kwargs["end"] = end if end == INF else int(end * epoch_length)
        factory: Any = cls
        return factory(*args, by_epoch=False, **kwargs)


class _FixedParamScheduler(_ParamScheduler):
    """Base of the mixins that fix ``param_name`` (LR, momentum families).

    Each concrete subclass exposes the signature of its parameter scheduler
    without ``param_name``, so introspection and error messages show the
    arguments a config may use.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__signature__ = None  # type: ignore[attr-defined]
            return
        for klass in cls.__mro__[1:]:
            if issubclass(klass, _FixedParamScheduler) or "__init__" not in klass.__dict__:
                continue
            sig = inspect.signature(klass.__init__)
            params = [p for p in sig.parameters.values() if p.name not in ("self", "param_name")]
            cls.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
            return


def check_sequence(owner: str, name: str, value: Any) -> list[Any]:
    """Return ``value`` as a list, or raise if it is not a list/tuple."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{owner}: {name} must be a list, got {type(value).__name__} {value!r}")
    return list(value)
