"""Save checkpoints at intervals, keep the last few, and keep the best one."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from ..registry import HOOKS
from .hook import Hook

GREATER_KEYS = ("acc", "top", "AR@", "auc", "precision", "mAP", "mDice", "mIoU", "mAcc", "aAcc")
LESS_KEYS = ("loss",)


@HOOKS.register_module()
class CheckpointHook(Hook):
    """Save a checkpoint every ``interval`` epochs (or iterations with ``by_epoch=False``).

    Args:
        interval: epochs/iterations between checkpoints; ``-1`` saves only the last.
        by_epoch: count ``interval`` in epochs (else iterations).
        save_optimizer / save_param_scheduler: include their states.
        out_dir: where to write (default: the runner's work dir).
        max_keep_ckpts: delete older interval checkpoints beyond this many (-1 keeps all).
        save_last: also save at the end of training.
        save_best: a metric name (``'accuracy/top1'``), a list of names, or ``'auto'``
            (the first metric); the best checkpoint is kept as ``best_<metric>_...``.
        rule: ``'greater'`` or ``'less'`` (per metric when a list); inferred from
            the metric name when omitted.
        filename_tmpl: e.g. ``'epoch_{}.pth'``.
        save_begin: first epoch/iteration that may be saved.
    """

    priority = "VERY_LOW"

    def __init__(
        self,
        interval: int = -1,
        by_epoch: bool = True,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        out_dir: str | None = None,
        max_keep_ckpts: int = -1,
        save_last: bool = True,
        save_best: str | Sequence[str] | None = None,
        rule: str | Sequence[str] | None = None,
        greater_keys: Sequence[str] | None = None,
        less_keys: Sequence[str] | None = None,
        file_client_args: Any = None,
        filename_tmpl: str | None = None,
        backend_args: Any = None,
        published_keys: Any = None,
        save_begin: int = 0,
    ) -> None:
        self.interval = interval
        self.by_epoch = by_epoch
        self.save_optimizer = save_optimizer
        self.save_param_scheduler = save_param_scheduler
        self.out_dir = out_dir
        self.max_keep_ckpts = max_keep_ckpts
        self.save_last = save_last
        self.save_begin = save_begin
        self.filename_tmpl = filename_tmpl or ("epoch_{}.pth" if by_epoch else "iter_{}.pth")
        self.save_best = [save_best] if isinstance(save_best, str) else list(save_best or [])
        rules = (
            [rule] * len(self.save_best) if isinstance(rule, str) or rule is None else list(rule)
        )
        if len(rules) != len(self.save_best):
            raise ValueError("CheckpointHook: give one rule per save_best metric")
        for r in rules:
            if r not in (None, "greater", "less"):
                raise ValueError(f"CheckpointHook.rule must be 'greater' or 'less', got {r!r}")
        self.rules: list[str | None] = list(rules)
        self.greater_keys = tuple(greater_keys or GREATER_KEYS)
        self.less_keys = tuple(less_keys or LESS_KEYS)
        self.kept: list[str] = []
        self.best_scores: dict[str, float] = {}
        self.best_paths: dict[str, str] = {}

    # ----------------------------------------------------------- helpers
    def _dir(self, runner: Any) -> str:
        return self.out_dir or runner.work_dir

    def _save(self, runner: Any, filename: str, *, by_epoch: bool) -> str:
        path = runner.save_checkpoint(
            self._dir(runner),
            filename,
            save_optimizer=self.save_optimizer,
            save_param_scheduler=self.save_param_scheduler,
            by_epoch=by_epoch,
        )
        if path not in self.kept:
            self.kept.append(path)
        while self.max_keep_ckpts > 0 and len(self.kept) > self.max_keep_ckpts:
            old = self.kept.pop(0)
            if os.path.exists(old) and old not in self.best_paths.values():
                os.remove(old)
        return path

    def _rule_for(self, key: str, rule: str | None) -> str:
        if rule is not None:
            return rule
        lowered = key.lower()
        if any(k.lower() in lowered for k in self.greater_keys):
            return "greater"
        if any(k.lower() in lowered for k in self.less_keys):
            return "less"
        raise ValueError(
            f"CheckpointHook cannot tell whether a larger '{key}' is better; set rule='greater' "
            "or rule='less'"
        )

    # ------------------------------------------------------------ stages
    def after_train_epoch(self, runner: Any) -> None:
        if not self.by_epoch:
            return
        epoch = runner.epoch + 1
        due = self.interval > 0 and epoch > self.save_begin and epoch % self.interval == 0
        if due or (self.save_last and epoch == runner.max_epochs):
            self._save(runner, self.filename_tmpl.format(epoch), by_epoch=True)

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        if self.by_epoch:
            return
        it = runner.iter + 1
        due = self.interval > 0 and it > self.save_begin and it % self.interval == 0
        if due or (self.save_last and it == runner.max_iters):
            self._save(runner, self.filename_tmpl.format(it), by_epoch=False)

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        if not self.save_best or not metrics or runner.train_loop is None:
            return
        keys = [next(iter(metrics)) if k == "auto" else k for k in self.save_best]
        for key, rule in zip(keys, self.rules):
            if key not in metrics:
                from ..utils import did_you_mean

                raise KeyError(
                    f"CheckpointHook.save_best: metric '{key}' is not among the validation "
                    f"metrics {sorted(metrics)}.{did_you_mean(key, metrics)}"
                )
            score = float(metrics[key])
            best = self.best_scores.get(
                key, -math.inf if self._rule_for(key, rule) == "greater" else math.inf
            )
            better = score > best if self._rule_for(key, rule) == "greater" else score < best
            if not better:
                continue
            previous = self.best_paths.get(key)
            stamp = f"epoch_{runner.epoch}" if runner.train_loop_by_epoch else f"iter_{runner.iter}"
            name = f"best_{key.replace('/', '_')}_{stamp}.pth"
            path = runner.save_checkpoint(
                self._dir(runner), name, save_optimizer=False, save_param_scheduler=False,
                by_epoch=runner.train_loop_by_epoch, update_last=False,
            )  # fmt: skip
            self.best_scores[key], self.best_paths[key] = score, path
            if previous and previous != path and os.path.exists(previous):
                os.remove(previous)
            runner.message_hub.update_info("best_score", score)
            runner.message_hub.update_info("best_ckpt", path)
            runner.logger.info(f"The best checkpoint with {score:.4f} {key} is saved to {path}")

    # ------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        return {"kept": list(self.kept), "best_scores": dict(self.best_scores),
                "best_paths": dict(self.best_paths)}  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.kept = list(state.get("kept", []))
        self.best_scores = dict(state.get("best_scores", {}))
        self.best_paths = dict(state.get("best_paths", {}))
