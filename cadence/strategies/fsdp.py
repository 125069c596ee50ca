"""Fully sharded data parallel training on FSDP2 (``torch.distributed.fsdp.fully_shard``).

Parameters, gradients and optimizer state are sharded across ranks. Checkpoints
are written twice over: a sharded ``torch.distributed.checkpoint`` folder beside
the checkpoint file (every rank writes its shard; resume reads it back exactly)
and, in the checkpoint file itself, the gathered full model weights, so a model
trained with FSDP evaluates or fine-tunes on one device with ``load_from``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ..checkpoint.weights import model_weights
from ..registry import STRATEGIES
from .distributed import DistributedStrategy

if TYPE_CHECKING:
    from ..contracts import Trained

SHARDED_SUFFIX = ".dcp"


def _dtype(value: Any) -> torch.dtype | None:
    if value is None or isinstance(value, torch.dtype):
        return value
    try:
        return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[
            str(value).replace("torch.", "")
        ]
    except KeyError:
        raise ValueError(
            f"unknown dtype {value!r}; use 'float16', 'bfloat16' or 'float32'"
        ) from None


def _matcher(
    policy: Sequence[str] | Callable[[nn.Module], bool] | None,
) -> Callable[[nn.Module], bool]:
    if policy is None:
        return lambda module: False
    if callable(policy):
        return policy
    names = set(policy)
    return lambda module: type(module).__name__ in names


@STRATEGIES.register_module()
class FSDPStrategy(DistributedStrategy):
    """Shard the model with FSDP2 over all ranks.

    Args:
        wrap_policy: module class names (``['TransformerBlock']``) or a callable
            ``module -> bool`` choosing the submodules sharded as their own unit;
            the root module is always sharded.
        mixed_precision: ``dict(param_dtype='bfloat16', reduce_dtype='float32')``.
        cpu_offload: keep sharded parameters and optimizer state on the CPU.
        activation_checkpointing: module class names whose activations are
            recomputed in the backward pass instead of stored.
        reshard_after_forward: free gathered parameters after each forward.
        save_full_weights: also write gathered weights into the checkpoint file
            (for single-device evaluation); the sharded folder is always written.
    """

    def __init__(
        self,
        device: str | torch.device | None = None,
        wrap_policy: Sequence[str] | Callable[[nn.Module], bool] | None = None,
        mixed_precision: Mapping[str, Any] | None = None,
        cpu_offload: bool = False,
        activation_checkpointing: Sequence[str] | None = None,
        reshard_after_forward: bool = True,
        save_full_weights: bool = True,
    ) -> None:
        super().__init__(device)
        self.wrap_policy = _matcher(wrap_policy)
        self.mixed_precision = dict(mixed_precision or {})
        unknown = set(self.mixed_precision) - {"param_dtype", "reduce_dtype", "output_dtype"}
        if unknown:
            raise ValueError(f"FSDPStrategy.mixed_precision: unknown keys {sorted(unknown)}; "
                             "expected param_dtype, reduce_dtype, output_dtype")  # fmt: skip
        self.cpu_offload = cpu_offload
        self.checkpointed = set(activation_checkpointing or [])
        self.reshard_after_forward = reshard_after_forward
        self.save_full_weights = save_full_weights

    # ---------------------------------------------------------------- wrap
    def wrap_model(self, model: nn.Module) -> nn.Module:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

        if self.checkpointed:
            from torch.distributed._composable import checkpoint

            for module in model.modules():
                if type(module).__name__ in self.checkpointed:
                    checkpoint(module)
        mesh = init_device_mesh(self.device.type, (self.world_size,))
        kwargs: dict[str, Any] = {"mesh": mesh, "reshard_after_forward": self.reshard_after_forward}
        if self.mixed_precision:
            mp = self.mixed_precision
            kwargs["mp_policy"] = MixedPrecisionPolicy(
                param_dtype=_dtype(mp.get("param_dtype")),
                reduce_dtype=_dtype(mp.get("reduce_dtype")),
                output_dtype=_dtype(mp.get("output_dtype")),
            )
        if self.cpu_offload:
            kwargs["offload_policy"] = CPUOffloadPolicy()
        preprocessor = getattr(model, "data_preprocessor", None)
        for name, module in list(model.named_modules()):
            if module is model or module is preprocessor or not name:
                continue
            if self.wrap_policy(module):
                fully_shard(module, **kwargs)
        fully_shard(model, **kwargs)
        return model

    @staticmethod
    def unwrap(model: nn.Module) -> nn.Module:
        return model  # FSDP2 shards in place: the module is the user's module

    # --------------------------------------------------------- state dicts
    def _options(self, **kwargs: Any) -> Any:
        from torch.distributed.checkpoint.state_dict import StateDictOptions

        return StateDictOptions(**kwargs)

    def model_state_dict(self, model: nn.Module) -> dict[str, Any]:
        """The full (gathered) weights of the sharded ``model``, on CPU; complete on rank 0."""
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        return get_model_state_dict(
            model, options=self._options(full_state_dict=True, cpu_offload=True)
        )

    @staticmethod
    def _optimizer(optim_wrapper: Any) -> torch.optim.Optimizer:
        optimizer: torch.optim.Optimizer = optim_wrapper.optimizer
        return optimizer

    # ---------------------------------------------------------- checkpoints
    supports_async_save = False  # every rank writes its shard collectively

    def checkpoint_state(
        self, trained: Trained, *, save_optimizer: bool = True, save_param_scheduler: bool = True
    ) -> dict[str, Any]:
        """The sharded folder's name, gathered full weights (``save_full_weights``) and
        scheduler states; the model and optimizer shards go to :meth:`save_companion`."""
        model = trained.require_model()
        state: dict[str, Any] = {"sharded": SHARDED_SUFFIX}  # the folder: <file>.dcp
        if self.save_full_weights:
            state["state_dict"] = self.model_state_dict(model)
        if save_param_scheduler and trained.param_schedulers is not None:
            state["param_schedulers"] = self.scheduler_state_dict(trained.param_schedulers)
        return state

    def save_companion(
        self, trained: Trained, filename: str, *, save_optimizer: bool = True
    ) -> None:
        """Every rank writes its shard of the model (+ optimizer) of ``trained`` to
        ``<filename>.dcp``, hashing its files as it writes them."""
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_model_state_dict, get_state_dict

        from ..checkpoint.dcp import HashingFileSystemWriter

        model = trained.require_model()
        if save_optimizer and trained.optim_wrapper is not None:
            model_sd, optim_sd = get_state_dict(model, self._optimizer(trained.optim_wrapper))
            state: dict[str, Any] = {"model": model_sd, "optimizer": optim_sd}
        else:
            state = {"model": get_model_state_dict(model)}
        writer = HashingFileSystemWriter(filename + SHARDED_SUFFIX)  # hashed while written
        dcp.save(state, storage_writer=writer)
        folder = os.path.dirname(os.path.abspath(filename))
        self.written_digests = {os.path.relpath(os.path.abspath(path), folder): digest
                                for path, digest in writer.digests.items()}  # fmt: skip

    def load_weights(
        self,
        model: nn.Module,
        checkpoint: dict[str, Any],
        *,
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    ) -> None:
        """Load full weights (from any strategy's checkpoint) into the sharded ``model``."""
        from torch.distributed.checkpoint.state_dict import set_model_state_dict

        state = model_weights(checkpoint, revise_keys)
        set_model_state_dict(
            model, state, options=self._options(full_state_dict=True, strict=strict)
        )

    def restore(
        self,
        trained: Trained,
        filename: str,
        checkpoint: dict[str, Any],
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
    ) -> None:
        """Restore the sharded model and optimizer of ``trained`` exactly from
        ``<filename>.dcp``."""
        from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

        from ..checkpoint.dcp import safe_dcp_load

        model = trained.require_model()
        sharded = filename + SHARDED_SUFFIX
        if not checkpoint.get("sharded") or not os.path.isdir(sharded):
            raise FileNotFoundError(
                f"{filename} has no sharded state folder; FSDP resumes from checkpoints written "
                "by FSDPStrategy (use load_from to start from full weights)"
            )
        optimizer = self._optimizer(trained.optim_wrapper)
        model_sd, optim_sd = get_state_dict(model, optimizer)
        state: dict[str, Any] = {"model": model_sd, "optimizer": optim_sd}
        if not resume_optimizer:
            del state["optimizer"]
        safe_dcp_load(state, sharded)  # verified before reading; unpickled safely
        set_state_dict(
            model, optimizer, model_state_dict=state["model"],
            optim_state_dict=state.get("optimizer", optim_sd),
        )  # fmt: skip
        if resume_param_scheduler and "param_schedulers" in checkpoint:
            self.load_scheduler_state_dict(trained.param_schedulers, checkpoint["param_schedulers"])
