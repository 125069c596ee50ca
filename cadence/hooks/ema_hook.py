"""Keep an exponential moving average of the model; validate, test and save with it."""

from __future__ import annotations

import copy
import itertools
import warnings
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ..config.errors import ConfigAssertionError
from ..registry import HOOKS, MODELS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

_PREFIX = "module."


@HOOKS.register_module()
class EMAHook(Hook):
    """Average the model's weights during training (mmengine's ``EMAHook``).

    The averaged model (``ema_type``, built from ``MODELS`` with ``**kwargs``,
    e.g. ``momentum=0.0002``) is updated after every training iteration from
    ``begin_iter`` (or ``begin_epoch``) on; before that it copies the model.
    Validation and testing run with the averaged weights, which are swapped
    back afterwards so training continues with the raw ones.

    Checkpoints follow mmengine's layout: ``state_dict`` holds the *averaged*
    weights (so a plain ``load_from`` evaluates or deploys them) and
    ``ema_state_dict`` holds the raw weights under ``module.<name>`` plus the
    ``steps`` counter. Resuming swaps them back, so training continues exactly.

    Args:
        ema_type: the averaged model's registered name.
        strict_load: load averaged weights strictly.
        begin_iter / begin_epoch: when averaging starts (at most one of them).
        **kwargs: passed to the averaged model.
    """

    priority = "NORMAL"

    def __init__(
        self,
        ema_type: str = "ExponentialMovingAverage",
        strict_load: bool = False,
        begin_iter: int = 0,
        begin_epoch: int = 0,
        **kwargs: Any,
    ) -> None:
        # mmengine asserts these four: ConfigAssertionError is also an AssertionError
        if begin_iter and begin_epoch:
            raise ConfigAssertionError(
                "EMAHook: set begin_iter or begin_epoch, not both (`begin_iter` and "
                "`begin_epoch` should not be both set)"
            )
        for name, value in (("begin_iter", begin_iter), ("begin_epoch", begin_epoch)):
            if value < 0:
                raise ConfigAssertionError(f"EMAHook: `{name}` must be >= 0, got {value}")
        self.strict_load = strict_load
        self.ema_cfg = dict(type=ema_type, **kwargs)
        self.begin_iter = begin_iter
        self.begin_epoch = begin_epoch
        self.enabled_by_epoch = begin_epoch > 0
        self.src_model: nn.Module | None = None
        self.ema_model: Any = None

    # ------------------------------------------------------------- stages
    def before_run(self, runner: RunnerProtocol) -> None:
        """Build the averaged model from the (unwrapped) model, once per model."""
        model = runner.strategy.unwrap(runner.model)
        if self.src_model is model and self.ema_model is not None:
            return  # a test after training keeps the average trained so far
        self.src_model = model
        self.ema_model = MODELS.build(
            self.ema_cfg, default_args=dict(model=model), key_path="custom_hooks.EMAHook"
        )

    def before_train(self, runner: RunnerProtocol) -> None:
        """Check that averaging starts within the training."""
        if self.enabled_by_epoch and self.begin_epoch > runner.max_epochs:
            raise ConfigAssertionError(
                f"EMAHook.begin_epoch={self.begin_epoch} is after the last epoch "
                f"({runner.max_epochs})"
            )
        if not self.enabled_by_epoch and self.begin_iter > runner.max_iters:
            raise ConfigAssertionError(
                f"EMAHook.begin_iter={self.begin_iter} is after the last iteration "
                f"({runner.max_iters})"
            )

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Fold the new weights into the average (or copy them before it starts)."""
        if self._started(runner):
            self.ema_model.update_parameters(self.src_model)
        else:
            with torch.no_grad():
                source = self._model.state_dict()
                for key, value in self.ema_model.module.state_dict().items():
                    value.copy_(source[key])

    def before_val_epoch(self, runner: RunnerProtocol) -> None:
        """Validate with the averaged weights."""
        self._swap_parameters()

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        """Put the raw weights back."""
        self._swap_parameters()

    def before_test_epoch(self, runner: RunnerProtocol) -> None:
        """Test with the averaged weights."""
        self._swap_parameters()

    def after_test_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        """Put the raw weights back."""
        self._swap_parameters()

    def before_save_checkpoint(self, runner: RunnerProtocol, checkpoint: dict[str, Any]) -> None:
        """Save the averaged weights as ``state_dict`` and the raw ones in ``ema_state_dict``."""
        checkpoint["ema_state_dict"] = _to_cpu(self.ema_model.state_dict())
        if "state_dict" not in checkpoint:  # the strategy adds it later: add it here, swapped
            strategy = runner.strategy
            full = getattr(strategy, "model_state_dict", None)
            state = full(runner.model) if callable(full) else self._model.state_dict()
            checkpoint["state_dict"] = _to_cpu(state)
        _swap_state_dicts(checkpoint)

    def after_load_checkpoint(self, runner: RunnerProtocol, checkpoint: dict[str, Any]) -> None:
        """Restore the average; when resuming, give the model back its raw weights."""
        resuming = bool(runner.resuming)
        if "ema_state_dict" in checkpoint and resuming:
            _swap_state_dicts(checkpoint)  # now state_dict: raw weights, ema: averaged
            self.ema_model.load_state_dict(checkpoint["ema_state_dict"], strict=self.strict_load)
            # the strategy loaded the averaged weights into the model: undo that
            self._model.load_state_dict(checkpoint["state_dict"], strict=False)
            return
        if resuming:
            warnings.warn(
                "EMAHook: the checkpoint has no 'ema_state_dict'; the average starts from "
                "its 'state_dict'",
                stacklevel=2,
            )
        state = checkpoint.get("state_dict", checkpoint)
        self.ema_model.module.load_state_dict(copy.deepcopy(state), strict=self.strict_load)

    # ------------------------------------------------------------ helpers
    @property
    def _model(self) -> nn.Module:
        if self.src_model is None:
            raise RuntimeError("EMAHook: no model yet (before_run has not been called)")
        return self.src_model

    def _started(self, runner: RunnerProtocol) -> bool:
        if self.enabled_by_epoch:
            return runner.epoch + 1 >= self.begin_epoch
        return runner.iter + 1 >= self.begin_iter

    @torch.no_grad()
    def _swap_parameters(self) -> None:
        """Exchange the values of the model's and the average's (parameters, maybe buffers)."""
        if self.ema_model is None:
            return
        ema, src = self.ema_model.module, self._model
        if self.ema_model.update_buffers:
            mine = list(itertools.chain(ema.parameters(), ema.buffers()))
            theirs = list(itertools.chain(src.parameters(), src.buffers()))
        else:
            mine, theirs = list(ema.parameters()), list(src.parameters())
        for a, s in zip(mine, theirs):
            held = a.detach().clone()
            a.copy_(s)
            s.copy_(held)


def _swap_state_dicts(checkpoint: dict[str, Any]) -> None:
    """Exchange ``state_dict[k]`` and ``ema_state_dict['module.' + k]`` for every ``k``."""
    model_state = checkpoint["state_dict"]
    ema_state = checkpoint["ema_state_dict"]
    for key in list(ema_state):
        if key.startswith(_PREFIX) and key[len(_PREFIX) :] in model_state:
            name = key[len(_PREFIX) :]
            ema_state[key], model_state[name] = model_state[name], ema_state[key]


def _to_cpu(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v.detach().cpu() if isinstance(v, torch.Tensor) else v for k, v in state.items()}


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(EMAHook)
