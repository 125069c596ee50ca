"""LabelData: label-level annotations or predictions, with one-hot conversions."""

from __future__ import annotations

import torch

from .base_data_element import BaseDataElement


class LabelData(BaseDataElement):
    """Label-level annotations or predictions (a :class:`BaseDataElement` with helpers)."""

    @staticmethod
    def onehot_to_label(onehot: torch.Tensor) -> torch.Tensor:
        """The indices of the ones of a 1-D 0/1 tensor (``ValueError`` for anything else)."""
        if not isinstance(onehot, torch.Tensor):
            raise AssertionError(f"onehot must be a torch.Tensor, got {type(onehot)}")
        is_binary = onehot.ndim == 1 and (
            onehot.numel() == 0 or (onehot.max().item() <= 1 and onehot.min().item() >= 0)
        )
        if not is_binary:
            raise ValueError("input is not one-hot and can not convert to label")
        return onehot.nonzero().squeeze(-1)

    @staticmethod
    def label_to_onehot(label: torch.Tensor, num_classes: int) -> torch.Tensor:
        """A ``(num_classes,)`` tensor of ``label``'s dtype with ones at the given labels."""
        if not isinstance(label, torch.Tensor):
            raise AssertionError(f"label must be a torch.Tensor, got {type(label)}")
        highest = label.max().item() if label.numel() else 0
        if highest >= num_classes:
            raise AssertionError(f"label {highest} is out of range for {num_classes} classes")
        onehot = label.new_zeros((num_classes,))
        onehot[label] = 1
        return onehot
