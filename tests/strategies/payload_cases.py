"""Planting code in checkpoint files as an attacker would (run inside spawned ranks).

An attacker who can write a checkpoint folder can also rewrite its manifest, so
each planted file is tried twice: as it lands (the checksum must catch it) and
with a *forged* manifest that vouches for it (deserialisation itself must refuse
it). A payload creates a marker file when unpickled, if unpickling ran code.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import zlib
from collections.abc import Callable
from typing import Any

import dist_cases
import torch
import torch.distributed as torch_dist


class Payload:
    """Creates ``target`` when unpickled (``open(target, 'w')``), if unpickling ran code."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.target, "w"))


def forge_manifest(checkpoint: str) -> None:
    """Rewrite ``checkpoint``'s manifest to vouch for every file as it is now."""
    folder = os.path.dirname(checkpoint)
    manifest = checkpoint + ".manifest.json"
    with open(manifest) as f:
        info = json.load(f)

    def entry(path: str) -> dict[str, Any]:
        data = open(path, "rb").read()
        return {"size": len(data), "digest": f"{zlib.crc32(data):08x}"}

    info.update(entry(checkpoint))
    files = {}
    for suffix in (".dcp", ".ds"):
        for root, _, names in os.walk(checkpoint + suffix):
            for name in names:
                path = os.path.join(root, name)
                files[os.path.relpath(path, folder)] = entry(path)
    info["files"] = files
    with open(manifest, "w") as f:
        json.dump(info, f)


def copy_checkpoint(source: str, folder: str) -> str:
    """Copy checkpoint ``source`` (file, manifest, companion folders) into ``folder``."""
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(source))
    for suffix in ("", ".manifest.json"):
        shutil.copy(source + suffix, target + suffix)
    for suffix in (".dcp", ".ds"):
        if os.path.isdir(source + suffix):
            shutil.copytree(source + suffix, target + suffix)
    return target


def torch_payload(marker: str, key: str) -> Callable[[str], None]:
    """Replace the file with a torch file whose ``key`` holds a payload."""
    return lambda path: torch.save({key: Payload(marker)}, path)


def pickle_payload(marker: str) -> Callable[[str], None]:
    """Replace the file with a bare pickle of a payload (DCP's ``.metadata`` format)."""

    def plant(path: str) -> None:
        with open(path, "wb") as f:
            pickle.dump(Payload(marker), f)

    return plant


def refuse_payloads(work_dir: str, strategy: dict, plants: list[tuple[str, str, bool]]) -> dict:
    """Train one epoch, then resume from copies of its checkpoint with planted files.

    ``plants``: ``(name, file relative to the checkpoint's folder, forge)``; the
    payload's marker is ``<work_dir>/pwned_<name>``. The name ``dcp_entry`` instead
    rewrites the DCP folder with a payload as a non-tensor entry (a collective save).
    Returns ``{name: error message or 'loaded'}`` plus ``'pristine'``: a clean copy.
    """
    dist_cases._register_toys()
    from cadence.checkpoint import CheckpointError
    from cadence.config import Config
    from cadence.runner import Runner

    cfg = dist_cases.config(work_dir, 8, 1, strategy, launcher="pytorch")
    runner = Runner.from_cfg(Config(cfg))
    runner.train()
    source = os.path.join(work_dir, "epoch_1.pth")
    outcomes: dict[str, str] = {}
    for name, relative, forge in [("pristine", "", False), *plants]:
        folder = os.path.join(work_dir, name)
        marker = os.path.join(work_dir, f"pwned_{name}")
        target = os.path.join(folder, "epoch_1.pth")
        if runner.rank == 0:
            copy_checkpoint(source, folder)
        torch_dist.barrier()
        if name == "dcp_entry":
            _save_dcp_with_payload(runner, target + ".dcp", marker)
        if runner.rank == 0 and relative:
            plant = pickle_payload(marker) if relative.endswith(".metadata") else None
            (plant or torch_payload(marker, "module"))(os.path.join(folder, relative))
        if runner.rank == 0 and forge:
            forge_manifest(target)
        torch_dist.barrier()
        try:
            runner.resume(target)
            outcomes[name] = "loaded"
        except CheckpointError as e:
            outcomes[name] = str(e)
        torch_dist.barrier()
    return outcomes


def _save_dcp_with_payload(runner: Any, folder: str, marker: str) -> None:
    """Every rank rewrites the DCP folder with a payload as the learning rate."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model_sd, optim_sd = get_state_dict(runner.model, runner.optim_wrapper.optimizer)
    optim_sd["param_groups"][0]["lr"] = Payload(marker)
    if runner.rank == 0:
        shutil.rmtree(folder, ignore_errors=True)
    torch_dist.barrier()
    dcp.save({"model": model_sd, "optimizer": optim_sd}, checkpoint_id=folder)
