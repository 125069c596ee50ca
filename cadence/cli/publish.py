"""``cadence publish IN_CKPT OUT_FILE``: strip a checkpoint for release, hash in its name."""

from __future__ import annotations

import argparse
from typing import Any

from .common import CliError


def add_publish_command(sub: Any) -> None:
    """Register ``publish`` on the ``cadence`` parser."""
    parser = sub.add_parser(
        "publish",
        help="keep only the weights of a checkpoint and put its hash in the file name",
        description="Write a release copy of a checkpoint (weights only) and print its path, "
        "whose name ends with the first digits of the file's SHA-256.",
    )
    parser.add_argument(
        "in_file",
        metavar="IN_CKPT",
        help="checkpoint written by a run, or its work dir (its last checkpoint)",
    )
    parser.add_argument("out_file", metavar="OUT_FILE", help="where to write the release file")
    parser.add_argument(
        "--format", choices=("torch", "safetensors", "both"), default="torch",
        help="torch: <stem>-<sha8>.pth (meta + state_dict); safetensors: "
        "<stem>-<sha8>.safetensors (the weights); both: one of each (default: torch)",
    )  # fmt: skip
    parser.set_defaults(func=_publish)


def _publish(args: argparse.Namespace) -> int:
    import pickle

    from ..checkpoint import CheckpointError
    from ..checkpoint.pointer import resolve_checkpoint
    from ..runner import publish_checkpoint

    formats = ("torch", "safetensors") if args.format == "both" else (args.format,)
    for fmt in formats:
        try:
            in_file = resolve_checkpoint(args.in_file)  # a work dir: its last checkpoint
            final = publish_checkpoint(in_file, args.out_file, format=fmt)
        except (OSError, ValueError, ImportError, CheckpointError, pickle.UnpicklingError) as exc:
            raise CliError(f"cannot publish '{args.in_file}': {exc}") from exc
        print(final)
    return 0
