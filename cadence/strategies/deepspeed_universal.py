"""Resuming a DeepSpeed ZeRO checkpoint with another number of processes.

ZeRO stages 1-3 keep one partition of the optimizer state (stage 3: of the weights
too) per rank, and the engine refuses partitions written for another world size.
DeepSpeed's *universal checkpoint* holds each parameter's fp32 weights and optimizer
state whole (one folder per parameter) and loads into any partitioning. When the world
size changed, :func:`load_resharded` has the first process of each machine convert the
engine folder with ``deepspeed.checkpoint.ds_to_universal`` into a temporary folder
(``TMPDIR``), every rank loads from it with the engine's ``load_universal`` switch on,
and the folder is deleted. What was saved comes back bit for bit: the fp32 weights, the
optimizer state and the engine's step counts.

DeepSpeed's conversion and universal loader call ``torch.load(weights_only=False)``;
here every file is read weights-only all the same (:func:`weights_only_loads`), with
the few DeepSpeed classes its states hold allowed, so nothing in a checkpoint runs.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import io
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import Any

from ..checkpoint.files import CheckpointError
from ..checkpoint.unpickling import weights_only_loads
from ..dist import all_gather_object, barrier, get_local_rank, get_rank
from ..logging import print_log


def saved_world_size(checkpoint: dict[str, Any], state_dir: str) -> int | None:
    """The number of processes that wrote the engine state in ``state_dir``: from the
    checkpoint's ``meta``, else by counting ZeRO's per-rank optimizer files."""
    world_size = dict(checkpoint.get("meta") or {}).get("world_size")
    if world_size:
        return int(world_size)
    files = glob.glob(os.path.join(state_dir, "*zero_pp_rank_*_mp_rank_00_optim_states.pt"))
    return len(files) or None


def partitions_differ(engine: Any, saved: int) -> bool:
    """Whether the engine's ZeRO partitions differ from those ``saved`` processes wrote
    (without ZeRO every rank holds the whole state, which loads on any number)."""
    return int(engine.zero_optimization_stage()) > 0 and saved != int(engine.dp_world_size)


def convert_to_universal(state_dir: str, out_root: str, tag: str) -> str:
    """Convert the engine state ``state_dir`` into ``<out_root>/<tag>``; return
    DeepSpeed's output (progress lines), for an error message."""
    from deepspeed.checkpoint import ds_to_universal

    args = argparse.Namespace(
        input_folder=state_dir, output_folder=os.path.join(out_root, tag),
        num_extract_workers=1, num_merge_workers=1,  # in this process: no worker pool
        keep_temp_folder=False, strict=True,
        inject_missing_state=True,  # cadence's models carry no universal-checkpoint info
    )  # fmt: skip
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        ds_to_universal.main(args)
    return output.getvalue()


@contextlib.contextmanager
def _universal_loading(engine: Any) -> Iterator[None]:
    """The engine's ``checkpoint.load_universal`` switch, on for the block (it is read
    only by ``load_checkpoint``, so an engine built without it can load one)."""
    config = engine._config
    before = config.load_universal_checkpoint
    config.load_universal_checkpoint = True
    try:
        yield
    finally:
        config.load_universal_checkpoint = before


def load_resharded(
    engine: Any,
    engine_dir: str,
    tag: str,
    *,
    saved: int,
    safe_globals: Sequence[Any],
    load_optimizer_states: bool = True,
) -> None:
    """Load the engine state ``<engine_dir>/<tag>``, written by ``saved`` processes, into
    ``engine``'s partitions through a universal checkpoint (every rank calls this).

    Raises :class:`CheckpointError` on every rank when the conversion fails anywhere.
    """
    started = time.perf_counter()
    local_leader = get_local_rank() == 0
    root, error = None, None
    if local_leader:
        root = tempfile.mkdtemp(prefix="cadence-universal-")
        try:
            with weights_only_loads(safe_globals):
                convert_to_universal(os.path.join(engine_dir, tag), root, tag)
        except Exception as exc:  # reported on every rank below
            error = f"{type(exc).__name__}: {exc}"
    reports = all_gather_object((root, error))
    failures = [message for _, message in reports if message]
    try:
        if failures:
            raise CheckpointError(
                f"{engine_dir} was saved by {saved} processes; converting it to "
                f"DeepSpeed's universal checkpoint for {int(engine.dp_world_size)} failed "
                f"({failures[0]}). Resume with {saved} processes, or start from "
                "its full weights with load_from (weights only: the optimizer state and the "
                "position start anew)"
            )
        # torchrun and SLURM number the ranks machine by machine: this machine's first
        # process converted into the folder it reported
        folder = reports[get_rank() - get_local_rank()][0]
        with weights_only_loads(safe_globals), _universal_loading(engine):
            engine.load_checkpoint(
                folder, tag=tag, load_optimizer_states=load_optimizer_states,
                load_lr_scheduler_states=False,
            )  # fmt: skip
        barrier()  # every rank has read the folder (a failed rank does not wait)
    finally:
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
    print_log(
        f"DeepSpeed checkpoint {engine_dir} saved by {saved} processes, loaded by "
        f"{int(engine.dp_world_size)} through a universal checkpoint "
        f"({time.perf_counter() - started:.1f} s)",
        logger="current",
    )
