"""Moved to :mod:`cadence.checkpoint.publish`; this path keeps working."""

from ..checkpoint.publish import PUBLISH_EXTENSIONS, publish_checkpoint

__all__ = ["PUBLISH_EXTENSIONS", "publish_checkpoint"]
