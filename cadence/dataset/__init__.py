"""Data: collate functions now; samplers and dataloader building arrive with the runner."""

from .collate import default_collate, pseudo_collate

__all__ = ["default_collate", "pseudo_collate"]
