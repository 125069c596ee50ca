"""One DistributedDataParallel per sub-model, for models whose parts update separately."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from torch import nn

from ...registry import MODEL_WRAPPERS
from .distributed import CadenceDistributedDataParallel


def _trainable(module: nn.Module) -> bool:
    return any(p.requires_grad for p in module.parameters())


@MODEL_WRAPPERS.register_module(
    name=["SeparateDistributedDataParallel", "MMSeparateDistributedDataParallel"]
)
class SeparateDistributedDataParallel(nn.Module):
    """Wrap each direct child of ``module`` that has trainable parameters in its own
    :class:`~cadence.model.wrappers.distributed.CadenceDistributedDataParallel`.

    A GAN's generator and discriminator update in turns; one DDP around both would
    wait for gradients of the part that did not run. ``train_step``, ``val_step`` and
    ``test_step`` are the model's own (which calls its wrapped children). Needs an
    initialised process group; the children stay on their devices.

    Args:
        module: the model; its children are replaced by their wrappers in place.
        broadcast_buffers / find_unused_parameters / **kwargs: passed to each DDP.
    """

    def __init__(
        self,
        module: nn.Module,
        broadcast_buffers: bool = False,
        find_unused_parameters: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        for name, child in list(module.named_children()):
            if _trainable(child):
                wrapped = CadenceDistributedDataParallel(
                    child,
                    broadcast_buffers=broadcast_buffers,
                    find_unused_parameters=find_unused_parameters,
                    **kwargs,
                )
                setattr(module, name, wrapped)
        self.module: Any = module

    def train_step(self, data: Any, optim_wrapper: Any) -> Any:
        return self.module.train_step(data, optim_wrapper)

    def val_step(self, data: Any) -> Any:
        return self.module.val_step(data)

    def test_step(self, data: Any) -> Any:
        return self.module.test_step(data)

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Skip the gradient all-reduce of every wrapped child."""
        with ExitStack() as stack:
            for child in self.module.children():
                if isinstance(child, CadenceDistributedDataParallel):
                    stack.enter_context(child.no_sync())
            yield


#: mmengine's name of the class.
MMSeparateDistributedDataParallel = SeparateDistributedDataParallel
