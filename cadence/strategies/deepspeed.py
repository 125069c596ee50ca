"""DeepSpeed (ZeRO stages 0-3, fp16/bf16) as a strategy; deepspeed is imported only here.

The engine owns the optimizer step, gradient accumulation, clipping and loss
scaling, so the optimizer wrapper here forwards to it. Checkpoints go through
the engine's own API into ``<filename>.ds/``; the checkpoint file itself holds
the gathered full weights (loadable on one device) and the rest of the run's state.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ..checkpoint.files import hashed_torch_save, safe_torch_load
from ..checkpoint.weights import model_weights
from ..model.base_model import run_train_step
from ..registry import MODEL_WRAPPERS, OPTIM_WRAPPERS, STRATEGIES
from ..resilience import heartbeat
from ..resilience.heartbeat import BACKWARD, OPTIMIZER
from .deepspeed_universal import load_resharded, partitions_differ, saved_world_size
from .distributed import DistributedStrategy

if TYPE_CHECKING:
    from ..contracts import Trained

#: The optim_wrapper keys that say how to build the optimizer (the rest configure the
#: wrapper, whose work the DeepSpeed engine does).
_BUILD_KEYS = ("optimizer", "constructor", "paramwise_cfg")
ENGINE_SUFFIX = ".ds"
ENGINE_TAG = "state"
#: Classes DeepSpeed pickles into its state files besides tensors and containers;
#: each unpickles by setting its fields, running no other code. ConfigDict: configs
#: that cadence passed to DeepSpeed before it handed over plain dicts.
ENGINE_SAFE_GLOBALS = (
    "deepspeed.runtime.zero.config:ZeroStageEnum",
    "deepspeed.runtime.fp16.loss_scaler:LossScaler",
    "deepspeed.runtime.fp16.loss_scaler:DynamicLossScaler",
    "deepspeed.utils.tensor_fragment:fragment_address",
    "cadence.config.config_dict:ConfigDict",
)


def _import_deepspeed() -> Any:
    if not torch.cuda.is_available():
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    try:
        deepspeed = importlib.import_module("deepspeed")
    except ImportError as exc:
        raise ImportError(
            "DeepSpeedStrategy needs deepspeed: `pip install deepspeed` (or cadence[deepspeed])"
        ) from exc
    # The CPU accelerator JIT-builds a shared-memory op on first use (~90 s) that
    # training over gloo never calls; skip building it.
    comm: Any = importlib.import_module("deepspeed.comm.torch")
    if hasattr(comm, "build_shm_op"):
        comm.build_shm_op = lambda: None
    return deepspeed


def _engine_safe_globals() -> list[Any]:
    found = []
    for spec in ENGINE_SAFE_GLOBALS:
        module, name = spec.split(":")
        with contextlib.suppress(ImportError, AttributeError):
            found.append(getattr(importlib.import_module(module), name))
    return found


class SafeLoads:
    """DeepSpeed's checkpoint engine, except that it loads with ``weights_only=True``
    (DeepSpeed's own engine unpickles arbitrary objects) and hashes the files it saves
    while it writes them (:attr:`written`: ``{path: {"size", "digest"}}``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.written: dict[str, dict[str, Any]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def load(self, path: str, map_location: Any = None) -> Any:
        return safe_torch_load(path, map_location, _engine_safe_globals())

    def save(self, state_dict: Any, path: str) -> None:
        self.written[os.path.abspath(path)] = hashed_torch_save(state_dict, path)


def _plain(value: Any) -> Any:
    """``value`` with mappings as dicts and sequences as lists (no ConfigDicts)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@OPTIM_WRAPPERS.register_module()
class DeepSpeedOptimWrapper:
    """The optimizer wrapper interface over a DeepSpeed engine (which does the work)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.optimizer = engine.optimizer
        self._last_norm: torch.Tensor | None = None

    def update_params(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """Backward (scaled for accumulation by the engine), then step at boundaries."""
        self.backward(loss)
        self.step()
        norm = self.engine.get_global_grad_norm()
        if norm is not None and self.engine.is_gradient_accumulation_boundary():
            self._last_norm = torch.as_tensor(float(norm))

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        heartbeat.current.phase = BACKWARD  # for the hang watchdog
        self.engine.backward(loss, **kwargs)

    def step(self, **kwargs: Any) -> None:
        heartbeat.current.phase = OPTIMIZER
        self.engine.step()

    def zero_grad(self, **kwargs: Any) -> None:
        self.engine.zero_grad()

    @contextlib.contextmanager
    def optim_context(self, model: nn.Module) -> Iterator[None]:
        yield  # the engine handles no_sync and mixed precision itself

    def should_update(self) -> bool:
        return bool(self.engine.is_gradient_accumulation_boundary())

    def initialize_count_status(self, model: nn.Module, init_counts: int, max_counts: int) -> None:
        """DeepSpeed counts micro-steps itself (restored with its checkpoint)."""

    def pop_log_vars(self) -> dict[str, torch.Tensor]:
        norm, self._last_norm = self._last_norm, None
        return {} if norm is None else {"grad_norm": norm}

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return self.optimizer.param_groups

    def get_lr(self) -> dict[str, list[float]]:
        return {"lr": [group["lr"] for group in self.param_groups]}

    def get_momentum(self) -> dict[str, list[float]]:
        values = []
        for group in self.param_groups:
            values.append(group["betas"][0] if "betas" in group else group.get("momentum", 0.0))
        return {"momentum": values}

    def state_dict(self) -> dict[str, Any]:
        return {}  # saved by the engine's checkpoint

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restored by the engine's checkpoint."""


@MODEL_WRAPPERS.register_module()  # so that is_model_wrapper knows it
class DeepSpeedEngineWrapper(nn.Module):
    """Runs cadence's model contract (train/val/test_step) through a DeepSpeed engine."""

    def __init__(self, engine: Any) -> None:
        super().__init__()
        self.engine = engine

    @property
    def module(self) -> nn.Module:
        return self.engine.module

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, Any]:
        # the engine runs the forward pass and handles no_sync and mixed precision itself
        return run_train_step(self.engine.module, data, optim_wrapper, self.engine, False)

    def val_step(self, data: Any) -> Any:
        return self.engine.module.val_step(data)

    def test_step(self, data: Any) -> Any:
        return self.engine.module.test_step(data)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.engine(*args, **kwargs)


@STRATEGIES.register_module()
class DeepSpeedStrategy(DistributedStrategy):
    """Train with DeepSpeed; keys not given here come from ``config`` (a dict or JSON path).

    ``train_micro_batch_size_per_gpu`` is filled from the train dataloader,
    ``gradient_accumulation_steps`` from ``optim_wrapper.accumulative_counts`` and
    ``gradient_clipping`` from ``optim_wrapper.clip_grad.max_norm`` unless set.
    """

    def __init__(
        self,
        device: str | torch.device | None = None,
        config: Mapping[str, Any] | str | None = None,
        zero_optimization: Mapping[str, Any] | None = None,
        gradient_clipping: float | None = None,
        fp16: Mapping[str, Any] | None = None,
        bf16: Mapping[str, Any] | None = None,
        amp: Mapping[str, Any] | None = None,
        activation_checkpointing: Mapping[str, Any] | None = None,
        train_micro_batch_size_per_gpu: int | None = None,
        gradient_accumulation_steps: int | None = None,
        steps_per_print: int = 10**13,
        exclude_frozen_parameters: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(device)
        if isinstance(config, str):
            with open(config) as f:
                loaded: dict[str, Any] = json.load(f)
        else:
            loaded = dict(config or {})
        ds_config = dict(loaded)
        given = dict(
            zero_optimization=zero_optimization, gradient_clipping=gradient_clipping, fp16=fp16,
            bf16=bf16, amp=amp, activation_checkpointing=activation_checkpointing,
            train_micro_batch_size_per_gpu=train_micro_batch_size_per_gpu,
            gradient_accumulation_steps=gradient_accumulation_steps,
            steps_per_print=steps_per_print, **kwargs,
        )  # fmt: skip
        ds_config.update({k: v for k, v in given.items() if v is not None})
        ds_config.setdefault("zero_allow_untested_optimizer", True)
        self.ds_config: dict[str, Any] = _plain(ds_config)
        self.exclude_frozen_parameters = exclude_frozen_parameters
        self.engine: Any = None
        self._engine_trains = False

    def setup_distributed(self, launcher: str, dist_cfg: dict[str, Any]) -> None:
        deepspeed = _import_deepspeed()
        super().setup_distributed(launcher, dist_cfg)
        backend = torch.distributed.get_backend()
        deepspeed.init_distributed(dist_backend=backend)

    @property
    def zero_stage(self) -> int:
        return int(dict(self.ds_config.get("zero_optimization") or {}).get("stage", 0))

    def optim_wrapper_config(self, cfg: Any) -> dict[str, Any]:
        """An ``OptimWrapper`` config with the keys that say how to build the optimizer
        (``optimizer``, ``constructor``, ``paramwise_cfg``) and the accumulation and
        clipping the engine takes over; the wrapper's ``type`` does not apply (the
        engine does its work). Warns where the DeepSpeed config names its own optimizer."""
        wrapper_cfg = dict(cfg)
        building = {k: wrapper_cfg[k] for k in _BUILD_KEYS if k in wrapper_cfg}
        if "optimizer" not in building and "constructor" not in building:
            raise ValueError(
                "optim_wrapper: DeepSpeedStrategy trains with one optimizer; give "
                "optim_wrapper=dict(optimizer=dict(type=..., lr=...)) (several optimizers, "
                f"here {sorted(wrapper_cfg)}, need another strategy)"
            )
        if "optimizer" in self.ds_config:
            ignored = ", ".join(f"optim_wrapper.{k}" for k in building)
            warnings.warn(
                f"DeepSpeedStrategy: the DeepSpeed config names an optimizer "
                f"({dict(self.ds_config['optimizer']).get('type')}), so DeepSpeed builds it and "
                f"{ignored} {'is' if len(building) == 1 else 'are'} ignored",
                stacklevel=2,
            )
        kept = {k: wrapper_cfg[k] for k in ("accumulative_counts", "clip_grad") if k in wrapper_cfg}
        return dict(type="OptimWrapper", **building, **kept)

    def setup_module(
        self, module: nn.Module, *, compile: bool | Mapping[str, Any] = False
    ) -> nn.Module:
        """Place ``module``; the engine is created by :meth:`setup` (``compile`` does not
        apply: the engine runs the module)."""
        return module.to(self.device)

    def setup(
        self, model: nn.Module, optim_wrapper: Any = None, *, batch_size: int | None = None
    ) -> tuple[nn.Module, Any]:
        """Create the engine from the placed model and the optimizer of ``optim_wrapper``
        (built by cadence, so ``paramwise_cfg`` and custom constructors apply).

        Without an optimizer wrapper (evaluation) the engine has no optimizer; ZeRO
        stages 1 and 2, which only partition optimizer state and gradients, run it as
        stage 0. A later call with an optimizer wrapper replaces that engine by one that
        trains, over the same module; any other later call returns the wrappers over the
        engine there is. The strategy keeps the engine it created, not the wrappers.
        """
        if self.engine is not None:
            if optim_wrapper is None or self._engine_trains:
                return self._over_engine(model, optim_wrapper)
            module = self.engine.module
            self.engine.destroy()
            self.engine = None
        else:
            module = self.unwrap(model)
        deepspeed = _import_deepspeed()
        config = dict(self.ds_config)
        optimizer = None
        if optim_wrapper is not None:
            optimizer = self._client_optimizer(optim_wrapper)
            config.setdefault("gradient_accumulation_steps",
                              int(getattr(optim_wrapper, "accumulative_counts", 1)))  # fmt: skip
            clip = getattr(optim_wrapper, "clip_grad_kwargs", None)
            if clip and "max_norm" in clip:
                config.setdefault("gradient_clipping", float(clip["max_norm"]))
        elif self.zero_stage in (1, 2):
            config["zero_optimization"] = {**dict(config["zero_optimization"]), "stage": 0}
        # DeepSpeed clips to norm 1.0 unless told otherwise; cadence clips only when asked.
        config.setdefault("gradient_clipping", 0.0)
        if batch_size is not None:
            config.setdefault("train_micro_batch_size_per_gpu", int(batch_size))
        config.setdefault("train_micro_batch_size_per_gpu", 1)
        engine, ds_optimizer, _, _ = deepspeed.initialize(
            model=module, optimizer=optimizer, config=config
        )
        self.engine = engine
        self._engine_trains = optim_wrapper is not None
        trains = ds_optimizer is not None and optim_wrapper is not None
        wrapped_optim = DeepSpeedOptimWrapper(engine) if trains else None
        return DeepSpeedEngineWrapper(engine), wrapped_optim

    def _over_engine(
        self, model: nn.Module, optim_wrapper: Any
    ) -> tuple[nn.Module, DeepSpeedOptimWrapper | None]:
        """The model and optimizer wrappers over the live engine: those given where they
        wrap it, else new ones (no optimizer wrapper for an engine that does not train)."""
        if not (isinstance(model, DeepSpeedEngineWrapper) and model.engine is self.engine):
            model = DeepSpeedEngineWrapper(self.engine)
        if not self._engine_trains:
            return model, None
        if not (
            isinstance(optim_wrapper, DeepSpeedOptimWrapper) and optim_wrapper.engine is self.engine
        ):
            optim_wrapper = DeepSpeedOptimWrapper(self.engine)
        return model, optim_wrapper

    def _client_optimizer(self, optim_wrapper: Any) -> torch.optim.Optimizer | None:
        """The optimizer of the wrapper cadence built, or None where the DeepSpeed
        config names its own (see :meth:`optim_wrapper_config`)."""
        optimizer = getattr(optim_wrapper, "optimizer", None)
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ValueError(
                "optim_wrapper: DeepSpeedStrategy trains with one optimizer; the config "
                f"builds a {type(optim_wrapper).__name__} (several optimizers need another "
                "strategy)"
            )
        return None if "optimizer" in self.ds_config else optimizer

    def teardown(self, trained: Trained | None = None, *, barrier: bool = True) -> None:
        """Release the engine, then what :class:`DistributedStrategy` releases."""
        if self.engine is not None:
            engine, self.engine = self.engine, None
            engine.destroy()
        super().teardown(trained, barrier=barrier)

    @staticmethod
    def unwrap(model: nn.Module) -> nn.Module:
        return model.engine.module if isinstance(model, DeepSpeedEngineWrapper) else model

    @contextlib.contextmanager
    def _gathered(self, module: nn.Module, modifier_rank: int | None = None) -> Iterator[None]:
        """Full parameters of ``module`` visible on every rank (ZeRO-3 partitions them)."""
        if self.zero_stage == 3:
            deepspeed = _import_deepspeed()
            params = list(module.parameters())
            with deepspeed.zero.GatheredParameters(params, modifier_rank=modifier_rank):
                yield
        else:
            yield

    def model_state_dict(self, model: nn.Module) -> dict[str, Any]:
        """The full weights of ``model`` (gathered under ZeRO-3), on CPU."""
        module = self.unwrap(model)
        with self._gathered(module):
            state = module.state_dict()
            return {k: v.detach().cpu().clone() for k, v in state.items()}

    supports_async_save = False  # the engine writes its files collectively

    def checkpoint_state(
        self, trained: Trained, *, save_optimizer: bool = True, save_param_scheduler: bool = True
    ) -> dict[str, Any]:
        """Gathered full weights (loadable on one device), the engine folder's suffix and
        scheduler states; the engine's own state goes to :meth:`save_companion`."""
        weights = self.model_state_dict(trained.require_model())
        state: dict[str, Any] = {"state_dict": weights, "engine": ENGINE_SUFFIX}
        if save_param_scheduler and trained.param_schedulers is not None:
            state["param_schedulers"] = self.scheduler_state_dict(trained.param_schedulers)
        return state

    def save_companion(
        self, trained: Trained, filename: str, *, save_optimizer: bool = True
    ) -> None:
        """All ranks write the engine checkpoint to ``<filename>.ds`` (the engine's files
        hashed while written): the engine holds the model and optimizer state of
        ``trained``."""
        engine_io = self._engine_io()
        engine_io.written.clear()
        self.engine.save_checkpoint(
            filename + ENGINE_SUFFIX,
            tag=ENGINE_TAG,
            exclude_frozen_parameters=bool(self.exclude_frozen_parameters),
        )
        folder = os.path.dirname(os.path.abspath(filename))
        self.written_digests = {os.path.relpath(path, folder): digest
                                for path, digest in engine_io.written.items()}  # fmt: skip

    def _engine_io(self) -> SafeLoads:
        """The engine's checkpoint engine, wrapped by :class:`SafeLoads` (once)."""
        if not isinstance(self.engine.checkpoint_engine, SafeLoads):
            self.engine.checkpoint_engine = SafeLoads(self.engine.checkpoint_engine)
        return self.engine.checkpoint_engine

    def load_weights(
        self,
        model: nn.Module,
        checkpoint: dict[str, Any],
        *,
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    ) -> None:
        """Load full weights (from any strategy's checkpoint) into ``model`` (the engine's
        module)."""
        state = model_weights(checkpoint, revise_keys)
        module = self.unwrap(model)
        with self._gathered(module, modifier_rank=0):
            if self.zero_stage != 3 or self.rank == 0:
                module.load_state_dict(state, strict=strict)

    def _load_untrained(self, model: nn.Module, checkpoint: dict[str, Any]) -> None:
        """Load what no optimizer holds (buffers, frozen parameters) from the file's full
        weights: a universal checkpoint restores only the trained parameters."""
        module = self.unwrap(model)
        trained = {n for n, p in module.named_parameters() if p.requires_grad}
        weights = model_weights(checkpoint, ((r"^module\.", ""),))
        rest = {name: value for name, value in weights.items() if name not in trained}
        if rest:
            self.load_weights(module, {"state_dict": rest}, strict=False)

    def restore(
        self,
        trained: Trained,
        filename: str,
        checkpoint: dict[str, Any],
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
    ) -> None:
        """Restore the engine (model, optimizer, loss scaler, step counts) exactly, also
        when it was saved by another number of processes (:mod:`.deepspeed_universal`;
        without ``resume_optimizer`` the full weights of the file are loaded then), and
        the schedulers of ``trained``."""
        engine_dir = filename + ENGINE_SUFFIX
        if not checkpoint.get("engine") or not os.path.isdir(engine_dir):
            raise FileNotFoundError(
                f"{filename} has no DeepSpeed engine folder; DeepSpeedStrategy resumes from its "
                "own checkpoints (use load_from to start from full weights)"
            )
        self._engine_io()
        saved = saved_world_size(checkpoint, os.path.join(engine_dir, ENGINE_TAG))
        if saved is not None and partitions_differ(self.engine, saved):
            if resume_optimizer:  # every file was verified before it is read
                load_resharded(self.engine, engine_dir, ENGINE_TAG, saved=saved,
                               safe_globals=_engine_safe_globals())  # fmt: skip
                self._load_untrained(trained.require_model(), checkpoint)
            else:
                self.load_weights(trained.require_model(), checkpoint, strict=True)
        else:
            self.engine.load_checkpoint(  # every file was verified before it is read
                engine_dir, tag=ENGINE_TAG, load_optimizer_states=resume_optimizer,
                load_lr_scheduler_states=False,
            )  # fmt: skip
        if resume_param_scheduler and "param_schedulers" in checkpoint:
            self.load_scheduler_state_dict(trained.param_schedulers, checkpoint["param_schedulers"])
