"""Parameter schedulers with OpenMMLab semantics (begin/end/by_epoch)."""

__all__: list[str] = []
