"""``TestTimeAug``: one sample in, every combination of alternative transforms out."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..registry import TRANSFORMS
from .base import BaseTransform
from .compose import Compose, Transform, build_transform


@TRANSFORMS.register_fallback()
class TestTimeAug(BaseTransform):
    """Apply every combination of alternative transforms; return a dict of lists.

    ``transforms`` is a list of stages, each a list of alternatives (transforms or
    their configs). Each element of the product of the stages is one view: with
    ``[[ResizeA, ResizeB], [FlipOn, FlipOff], [Pack]]`` the views are
    ``ResizeA+FlipOn+Pack``, ``ResizeA+FlipOff+Pack``, ``ResizeB+FlipOn+Pack`` and
    ``ResizeB+FlipOff+Pack``, in that order. Each view starts from a deep copy of
    the input; the output maps every key of the views' results to the list of its
    values, one per view (``dict(inputs=[...], data_samples=[...])`` after a
    packing transform), which :class:`~cadence.model.BaseTTAModel` takes apart.
    """

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, transforms: Sequence[Sequence[Transform]]) -> None:
        if isinstance(transforms, (Mapping, str)) or not isinstance(transforms, Sequence):
            raise TypeError(
                "TestTimeAug: transforms must be a list of stages, each a list of "
                f"alternative transforms, got {type(transforms).__name__}"
            )
        stages: list[list[Callable[[Any], Any]]] = []
        for i, stage in enumerate(transforms):
            if isinstance(stage, (Mapping, str)) or not isinstance(stage, Sequence):
                raise TypeError(
                    f"TestTimeAug: transforms[{i}] must be a list of alternative transforms, "
                    f"got {type(stage).__name__} (wrap a single transform in a list)"
                )
            stages.append([build_transform(alternative) for alternative in stage])
        self.subroutines = [Compose(list(chain)) for chain in itertools.product(*stages)]

    def __len__(self) -> int:
        """The number of views each sample gives."""
        return len(self.subroutines)

    def transform(self, results: dict[str, Any]) -> dict[str, list[Any]]:
        """``{key: [value in view 0, value in view 1, ...]}`` for the keys of the views."""
        views = []
        for index, chain in enumerate(self.subroutines):
            view = chain(copy.deepcopy(results))
            if view is None:
                raise RuntimeError(
                    f"TestTimeAug: view {index} ({chain!r}) dropped the sample (a transform "
                    "returned None); test-time transforms must keep every sample"
                )
            views.append(view)
        keys = list(views[0])
        for index, view in enumerate(views[1:], start=1):
            if set(view) != set(keys):
                raise KeyError(
                    f"TestTimeAug: view {index} gave keys {sorted(view)}, view 0 gave "
                    f"{sorted(keys)}; every view must give the same keys"
                )
        return {key: [view[key] for view in views] for key in keys}

    def __repr__(self) -> str:
        chains = "".join(f"\n  {chain!r}" for chain in self.subroutines)
        return f"{type(self).__name__}(views={len(self.subroutines)}:{chains}\n)"
