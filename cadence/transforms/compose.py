"""``Compose``: transforms applied in order; the pipeline of every dataset."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeAlias

from ..registry import TRANSFORMS
from .base import BaseTransform

#: A transform object (any callable on a results dict) or its config dict.
Transform: TypeAlias = Mapping[str, Any] | Callable[[Any], Any]


def build_transform(spec: Transform) -> Callable[[Any], Any]:
    """``spec`` itself when callable, else the transform its config builds."""
    if isinstance(spec, Mapping):
        built = TRANSFORMS.build(spec)
        if not callable(built):
            raise TypeError(
                f"transform config {dict(spec)!r} built a {type(built).__name__}, "
                "which is not callable"
            )
        return built
    if callable(spec):
        return spec
    raise TypeError(f"a transform must be a callable or a config dict, got {type(spec).__name__}")


@TRANSFORMS.register_fallback()
class Compose(BaseTransform):
    """Apply ``transforms`` in order; the result is ``None`` as soon as one returns ``None``.

    Args:
        transforms: transforms or their config dicts (built from ``TRANSFORMS``);
            a single one or ``None`` (no transform) are accepted too.
    """

    def __init__(self, transforms: Transform | Sequence[Transform] | None) -> None:
        if transforms is None:
            transforms = []
        elif isinstance(transforms, Mapping) or not isinstance(transforms, Sequence):
            transforms = [transforms]
        self.transforms: list[Callable[[Any], Any]] = [build_transform(t) for t in transforms]

    def __iter__(self) -> Iterator[Callable[[Any], Any]]:
        return iter(self.transforms)

    def __len__(self) -> int:
        return len(self.transforms)

    def transform(self, results: Any) -> Any:
        """``results`` passed through every transform (``None`` stops the chain)."""
        for step in self.transforms:
            results = step(results)
            if results is None:
                return None
        return results

    def __repr__(self) -> str:
        lines = "".join(f"\n    {step}" for step in self.transforms)
        return f"{type(self).__name__}({lines}\n)"
