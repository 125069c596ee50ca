"""The after-validation file of a checkpoint: the run's state once the validation that
followed the checkpoint had finished.

A checkpoint taken in the after-hooks of a step or epoch that a validation follows
(``CheckpointHook`` saves there, before the validation, as mmengine does) records
``val_pending``: resumed from as it is, the run validates first, so that what the
validation changes (best checkpoint, early stopping, plateau schedulers, the message
hub's validation scalars) is as in the uninterrupted run. Once that validation has
finished, the manager writes ``<checkpoint>.after_val`` beside it: the parts that a
validation changes, as they are after it, and the digest of the checkpoint file it
belongs to. A resume from the checkpoint that finds it (verified against its own
manifest, bound to this very checkpoint file, read weights-only) takes those states
instead and does not validate again; without it (killed before or during the
validation) the resume validates first, as before.
"""

from __future__ import annotations

import os

#: the after-validation file of ``epoch_3.pth`` is ``epoch_3.pth.after_val``
AFTER_VAL_SUFFIX = ".after_val"
#: where the after-validation file records which checkpoint file it belongs to
BINDING_KEY = "after_val_of"


def after_val_path(filename: str) -> str:
    """The after-validation file of checkpoint ``filename``."""
    return filename + AFTER_VAL_SUFFIX


def is_after_val(filename: str) -> bool:
    """Whether ``filename`` is an after-validation file (not a checkpoint of its own)."""
    return os.path.basename(filename).endswith(AFTER_VAL_SUFFIX)
