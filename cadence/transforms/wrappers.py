"""Transform wrappers: rename keys around a sub-pipeline, broadcast it, or apply it at random."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np

from ..registry import TRANSFORMS
from .base import BaseTransform
from .compose import Compose, Transform
from .randomness import cache_random_params, cache_randomness

#: Marks a value the wrapped transforms must not see: an input key mapped to
#: ``...`` or (with ``allow_nonexist_keys``) missing. Removed again on output.
IgnoreKey = object()


@TRANSFORMS.register_fallback()
class KeyMapper(BaseTransform):
    """Run ``transforms`` on renamed keys: ``mapping`` is ``{inner key: outer key}``.

    An outer key may be a name, a list/tuple of names (the inner value is a list)
    or a dict (the inner value is a dict), nested; ``...`` hides the inner key.
    ``remapping`` maps the outputs back the same way; with ``auto_remap`` (the
    default when ``remapping`` is not given) it is ``mapping`` itself. Outputs
    not named in ``remapping`` are dropped; without any remapping all are kept.
    A missing outer key gives ``None`` unless ``allow_nonexist_keys``, which
    hides it from the wrapped transforms instead.
    """

    def __init__(
        self,
        transforms: Transform | Sequence[Transform] | None = None,
        mapping: dict[str, Any] | None = None,
        remapping: dict[str, Any] | None = None,
        auto_remap: bool | None = None,
        allow_nonexist_keys: bool = False,
    ) -> None:
        self.allow_nonexist_keys = allow_nonexist_keys
        self.mapping = mapping
        self.auto_remap = remapping is None if auto_remap is None else auto_remap
        if self.auto_remap and remapping is not None:
            raise ValueError(f"{type(self).__name__}: give remapping or auto_remap=True, not both")
        self.remapping = mapping if self.auto_remap else remapping
        self.transforms = Compose(transforms)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.transforms)

    def _gather(self, data: Mapping[str, Any], outer: Any) -> Any:
        if isinstance(outer, dict):
            return {inner: self._gather(data, key) for inner, key in outer.items()}
        if isinstance(outer, (list, tuple)):
            return type(outer)(self._gather(data, key) for key in outer)
        if outer is ...:
            return IgnoreKey
        return data.get(outer, IgnoreKey) if self.allow_nonexist_keys else data.get(outer)

    def _map_input(self, data: dict[str, Any], mapping: dict[str, Any] | None) -> dict[str, Any]:
        """``data`` with the inner keys of ``mapping`` filled from their outer keys."""
        inputs = dict(data)
        if mapping is not None:
            inputs.update(self._gather(data, mapping))
        return inputs

    def _scatter(self, value: Any, outer: Any) -> dict[str, Any]:
        if isinstance(outer, dict):
            if not isinstance(value, dict):
                raise TypeError(f"remapping {outer!r} expects a dict output, got {value!r}")
            found: dict[str, Any] = {}
            for inner, key in outer.items():
                if inner not in value:
                    raise KeyError(f"remapping names '{inner}', which the transforms did not give")
                found.update(self._scatter(value[inner], key))
            return found
        if isinstance(outer, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(outer):
                raise ValueError(f"remapping {outer!r} expects {len(outer)} outputs, got {value!r}")
            found = {}
            for key, item in zip(outer, value):
                found.update(self._scatter(item, key))
            return found
        if outer is ... or value is IgnoreKey:
            return {}
        return {outer: value}

    def _map_output(self, data: dict[str, Any], remapping: dict[str, Any] | None) -> dict[str, Any]:
        """The outer keys to write back, from the wrapped transforms' output ``data``."""
        if remapping is None:
            return {k: v for k, v in data.items() if v is not IgnoreKey}
        return self._scatter(data, remapping)

    def _apply_transforms(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Run the wrapped transforms on ``inputs`` without its hidden (IgnoreKey) entries."""
        visible = {k: v for k, v in inputs.items() if v is not IgnoreKey}
        outputs = self.transforms(visible)
        if outputs is None:
            raise ValueError(f"transforms wrapped by {type(self).__name__} returned None")
        return {**inputs, **outputs}

    def transform(self, results: dict[str, Any]) -> dict[str, Any]:
        """Map the inputs, apply the wrapped transforms, map the outputs back."""
        outputs = self._apply_transforms(self._map_input(results, self.mapping))
        results.update(self._map_output(outputs, self.remapping))
        return results

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(transforms = {self.transforms}, mapping = {self.mapping}, "
            f"remapping = {self.remapping}, auto_remap = {self.auto_remap}, "
            f"allow_nonexist_keys = {self.allow_nonexist_keys})"
        )


@TRANSFORMS.register_fallback()
class TransformBroadcaster(KeyMapper):
    """Run ``transforms`` once per element of the mapped sequences.

    ``mapping={'img': ['lq', 'gt']}`` runs the transforms on ``img=lq`` then on
    ``img=gt`` and writes both back; ``mapping={'img': 'images'}`` runs them on each
    element of the list ``images``. With ``share_random_params`` every element gets
    the same random parameters (``@cache_randomness`` methods are called once).
    """

    def __init__(
        self,
        transforms: Transform | Sequence[Transform],
        mapping: dict[str, Any] | None = None,
        remapping: dict[str, Any] | None = None,
        auto_remap: bool | None = None,
        allow_nonexist_keys: bool = False,
        share_random_params: bool = False,
    ) -> None:
        super().__init__(transforms, mapping, remapping, auto_remap, allow_nonexist_keys)
        self.share_random_params = share_random_params

    def scatter_sequence(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        """One input dict per element of the broadcast sequences (all of one length)."""
        keys = list(self.mapping) if self.mapping else list(data)
        length, first = 0, None
        for key in keys:
            value = data[key]
            if not isinstance(value, Sequence) or isinstance(value, str):
                raise TypeError(f"{type(self).__name__}: '{key}' is not a sequence: {value!r}")
            if first is None:
                length, first = len(value), key
            elif len(value) != length:
                raise ValueError(
                    f"inconsistent sequence lengths: {length} ({first}) vs {len(value)} ({key})"
                )
        if length == 0:
            raise ValueError(f"{type(self).__name__}: no element to broadcast the transforms to")
        return [{**data, **{key: data[key][i] for key in keys}} for i in range(length)]

    def transform(self, results: dict[str, Any]) -> dict[str, Any]:
        """Apply the wrapped transforms to each element, then gather the outputs as lists."""
        scatters = self.scatter_sequence(self._map_input(results, self.mapping))
        context = (
            cache_random_params(self.transforms) if self.share_random_params else nullcontext()
        )
        with context:
            outputs = [self._apply_transforms(item) for item in scatters]
        gathered = {key: [out[key] for out in outputs] for key in outputs[0]}
        results.update(self._map_output(gathered, self.remapping))
        return results

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, share_random_params = {self.share_random_params})"


@TRANSFORMS.register_fallback()
class RandomChoice(BaseTransform):
    """Apply one of ``transforms`` (each a sub-pipeline), picked with probabilities ``prob``
    (uniform when not given)."""

    def __init__(
        self,
        transforms: Sequence[Transform | Sequence[Transform]],
        prob: Sequence[float] | None = None,
    ) -> None:
        if prob is not None:
            if len(prob) != len(transforms):
                raise ValueError(
                    f"transforms and prob must have the same length, "
                    f"got {len(transforms)} and {len(prob)}"
                )
            if not np.isclose(sum(prob), 1.0):
                raise ValueError(f"prob must sum to 1, got {list(prob)} (sum {sum(prob)})")
        self.prob = None if prob is None else list(prob)
        self.transforms = [Compose(choice) for choice in transforms]

    def __iter__(self) -> Iterator[Compose]:
        return iter(self.transforms)

    @cache_randomness
    def random_pipeline_index(self) -> int:
        """The index of the sub-pipeline to apply (numpy's global RNG)."""
        return int(np.random.choice(len(self.transforms), p=self.prob))

    def transform(self, results: dict[str, Any]) -> dict[str, Any] | None:
        """``results`` through the randomly picked sub-pipeline."""
        return self.transforms[self.random_pipeline_index()](results)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(transforms = {self.transforms}, prob = {self.prob})"


@TRANSFORMS.register_fallback()
class RandomApply(BaseTransform):
    """Apply ``transforms`` with probability ``prob``, else pass the results through."""

    def __init__(self, transforms: Transform | Sequence[Transform], prob: float = 0.5) -> None:
        self.prob = prob
        self.transforms = Compose(transforms)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.transforms)

    @cache_randomness
    def random_apply(self) -> bool:
        """Whether to apply the transforms this time (numpy's global RNG)."""
        return bool(np.random.rand() < self.prob)

    def transform(self, results: dict[str, Any]) -> dict[str, Any] | None:
        """``results`` through the transforms, or unchanged."""
        return self.transforms(results) if self.random_apply() else results

    def __repr__(self) -> str:
        return f"{type(self).__name__}(transforms = {self.transforms}, prob = {self.prob})"
