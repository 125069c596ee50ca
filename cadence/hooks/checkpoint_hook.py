"""Save checkpoints at intervals, keep the last few, and keep the best one."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..config.errors import ConfigAssertionError
from ..fileio import check_url, join_path
from ..optim import accumulation_pending
from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook
from .nonfinite_rollback import attach_rollback

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

#: mmengine's lists, plus the regression and error metrics cadence has (r2, mse, mae, error)
GREATER_KEYS = ("acc", "top", "AR@", "auc", "precision", "mAP", "mDice", "mIoU", "mAcc", "aAcc",
                "recall", "f1", "r2")  # fmt: skip
LESS_KEYS = ("loss", "error", "mse", "mae")


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


#: 2: file names relative to the hook's checkpoint folder (1: absolute paths)
STATE_VERSION = 2


def _map_files(state: dict[str, Any], fn: Callable[[str], str | None]) -> dict[str, Any]:
    """``state`` with every file it names mapped by ``fn``; entries mapped to None are left
    out (a best checkpoint left out takes its score along)."""
    last = state.get("last_ckpt")
    best_paths = {k: fn(p) for k, p in state.get("best_paths", {}).items()}
    best_paths = {k: p for k, p in best_paths.items() if p is not None}
    best_kept = {
        key: [[score, fn(p)] for score, p in entries if fn(p) is not None]
        for key, entries in state.get("best_kept", {}).items()
    }
    return {
        "version": state.get("version", 1),
        "kept": [q for q in map(fn, state.get("kept", [])) if q is not None],
        "stale": [q for q in map(fn, state.get("stale", [])) if q is not None],
        "last_ckpt": fn(last) if last else None,
        "best_scores": {k: v for k, v in state.get("best_scores", {}).items() if k in best_paths},
        "best_paths": best_paths,
        "best_kept": {k: v for k, v in best_kept.items() if v},
    }


def _names_in(folder: str) -> Callable[[str], str | None]:
    """Map a path to its name relative to ``folder``; None for a path outside it."""
    root = os.path.abspath(folder)

    def name(path: str) -> str | None:
        relative = os.path.relpath(os.path.abspath(path), root)
        return None if relative.startswith(os.pardir) else relative

    return name


@HOOKS.register_module()
class CheckpointHook(Hook):
    """Save a checkpoint every ``interval`` epochs (or iterations with ``by_epoch=False``).

    A save writes the file, then moves ``work_dir/last_checkpoint``, and only
    then deletes checkpoints beyond ``max_keep_ckpts``; a crash at any point
    leaves the previous checkpoint and the pointer usable. An iteration
    checkpoint that falls inside a gradient accumulation window is saved at the
    iteration that closes it (accumulated gradients are not part of a checkpoint).

    Args:
        interval: epochs/iterations between checkpoints; ``-1`` saves none by interval.
        by_epoch: count ``interval`` in epochs (else iterations).
        save_optimizer / save_param_scheduler: include their states.
        out_dir: root folder to write to; checkpoints go to ``out_dir/<name of the
            work dir>`` (default: the work dir itself), as in mmengine.
        max_keep_ckpts: keep at most this many interval checkpoints (-1 keeps all).
        save_last: also save after the last epoch/iteration.
        save_best: a metric name (``'accuracy/top1'``), a list of names, or ``'auto'``
            (the first metric); the best checkpoint is kept as
            ``best_<metric>_<filename>`` (``/`` in the name becomes ``_``), its score in
            the manifest's ``metrics``, and ``work_dir/best_checkpoint`` (one metric) or
            ``best_checkpoint_<metric>`` points at it.
        max_keep_best: keep the best this many checkpoints per metric (default 1).
        rule: ``'greater'`` or ``'less'`` (one per metric for a list); inferred
            from the metric name with ``greater_keys``/``less_keys`` when omitted.
        greater_keys / less_keys: name fragments that mean larger/smaller is
            better (replace the defaults).
        published_keys: after training, publish the last and best checkpoints
            with only these keys (e.g. ``['meta', 'state_dict']``) as
            ``<name>-<sha256[:8]>.pth``.
        save_begin: the first epoch/iteration saved by interval: saves happen at
            ``save_begin, save_begin + interval, ...``.
        filename_tmpl: e.g. ``'epoch_{}.pth'`` (default by ``by_epoch``).
        async_save: copy the state to CPU and write it on a background thread;
            the next save and the end of the run wait for it (errors surface there).
        file_client_args / backend_args: fsspec storage options for a remote
            ``out_dir`` or work dir (``dict(endpoint_url=...)``; docs/checkpoints.md).
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
        published_keys: str | Sequence[str] | None = None,
        save_begin: int = 0,
        async_save: bool = False,
        max_keep_best: int = 1,
    ) -> None:
        if not isinstance(interval, int):
            raise TypeError(f"CheckpointHook.interval must be an int, got {interval!r}")
        if not isinstance(save_begin, int) or save_begin < 0:
            raise ValueError(f"CheckpointHook.save_begin must be an int >= 0, got {save_begin!r}")
        problem = check_url(out_dir, "CheckpointHook.out_dir")
        if problem is not None:
            raise ValueError(problem)
        self.backend_args = dict(backend_args or file_client_args or {})
        self.interval = interval
        self.by_epoch = by_epoch
        self.save_optimizer = save_optimizer
        self.save_param_scheduler = save_param_scheduler
        self.out_dir = out_dir
        self.max_keep_ckpts = max_keep_ckpts
        self.save_last = save_last
        self.save_begin = save_begin
        self.async_save = async_save
        if not isinstance(max_keep_best, int) or max_keep_best < 1:
            raise ValueError(
                f"CheckpointHook.max_keep_best must be an int >= 1, got {max_keep_best!r}"
            )
        self.max_keep_best = max_keep_best
        self.filename_tmpl = filename_tmpl or ("epoch_{}.pth" if by_epoch else "iter_{}.pth")
        self.save_best = _as_list(save_best)
        if "auto" in self.save_best and len(self.save_best) > 1:
            raise ConfigAssertionError(  # mmengine asserts this
                "CheckpointHook.save_best: 'auto' cannot be combined with other keys"
            )
        rules = [rule] if isinstance(rule, str) or rule is None else list(rule)
        if len(rules) == 1:  # one rule for every metric (mmengine's rule)
            rules = rules * len(self.save_best)
        self.rules: list[str | None] = list(rules)
        if len(self.rules) != len(self.save_best):
            raise ConfigAssertionError(  # mmengine asserts this
                f"CheckpointHook: {len(self.rules)} rule(s) for {len(self.save_best)} "
                "save_best metric(s); give one rule per metric"
            )
        for r in self.rules:
            if r not in (None, "greater", "less"):
                raise ValueError(f"CheckpointHook.rule must be 'greater' or 'less', got {r!r}")
        self.greater_keys = tuple(_as_list(greater_keys) if greater_keys else GREATER_KEYS)
        self.less_keys = tuple(_as_list(less_keys) if less_keys else LESS_KEYS)
        self.published_keys = _as_list(published_keys) or None
        if published_keys is not None and not self.published_keys:
            raise ValueError("CheckpointHook.published_keys must name at least one key")
        self._deferred = False
        self.kept: list[str] = []
        self.stale: list[str] = []
        self.last_ckpt: str | None = None
        self.best_scores: dict[str, float] = {}
        self.best_paths: dict[str, str] = {}
        #: per metric, ``[score, path]`` of the kept best checkpoints, best first
        self.best_kept: dict[str, list[list[Any]]] = {}
        #: the folder the paths above lie in (set at the first save or resume)
        self._folder: str | None = None
        #: a state restored from a checkpoint, until :meth:`_adopt` places it
        self._restored: dict[str, Any] | None = None

    # ----------------------------------------------------------- helpers
    def _dir(self, runner: RunnerProtocol) -> str:
        """The checkpoint folder: the work dir, or ``out_dir/<work dir's name>`` (staged
        locally when ``out_dir`` is a URL)."""
        work_dir = runner.work_dir
        if self.out_dir is None or os.path.abspath(self.out_dir) == os.path.abspath(work_dir):
            runner.paths.add_options(self.backend_args)
            folder = work_dir
        else:
            name = os.path.basename((runner.paths.remote_work_dir or work_dir).rstrip("/"))
            folder = str(runner.paths.stage(join_path(self.out_dir, name), self.backend_args))
        self._folder = folder
        return folder

    def _adopt(self, runner: RunnerProtocol) -> None:
        """Place a restored state: its files are this run's own when the run resumed from
        a checkpoint of this hook's folder (the same work dir, or a copy or move of it);
        a checkpoint of another folder leaves its files there, never rotated from here."""
        state, self._restored = self._restored, None
        if state is None:
            return
        folder = self._dir(runner)
        source = runner.paths.resumed_from
        if source is None or not runner.paths.holds(source, folder):
            if state.get("kept") or state.get("best_paths"):
                runner.logger.info(
                    f"Resumed from a checkpoint of another folder ({os.path.dirname(source or '')}"
                    f"): its checkpoints stay there; this run keeps and rotates its own in {folder}"
                )
            return
        if state.get("version", 1) < 2:  # absolute paths of the folder the run had then
            anchor = state.get("last_ckpt") or next(iter(state.get("kept", [])), None)
            if anchor is None:
                return
            state = _map_files(state, _names_in(os.path.dirname(anchor)))
        placed = _map_files(state, lambda name: os.path.join(folder, name))
        self.kept, self.stale = placed["kept"], placed["stale"]
        self.last_ckpt = placed["last_ckpt"]
        self.best_scores, self.best_paths = placed["best_scores"], placed["best_paths"]
        self.best_kept = placed["best_kept"]

    def _due(self, step: int) -> bool:
        """Whether 1-based ``step`` is a save point: save_begin, +interval, ..."""
        return (
            self.interval > 0
            and step >= self.save_begin
            and (step - self.save_begin) % self.interval == 0
        )

    def _save(self, runner: RunnerProtocol, step: int) -> str:
        """Save the interval checkpoint of ``step``; old ones go only once it is in place.

        The files to delete are stored in the checkpoint itself (``stale``), so
        a crash in the middle of deleting them is finished after resuming.
        """
        runner.wait_for_checkpoint()  # the previous save's deletions are done
        self._adopt(runner)
        directory = self._dir(runner)
        path = os.path.join(directory, self.filename_tmpl.format(step))
        kept = [p for p in self.kept if p != path] + [path]
        stale = [p for p in self.stale if p != path and os.path.exists(p)]
        if self.max_keep_ckpts > 0:
            stale += kept[: -self.max_keep_ckpts]
            kept = kept[-self.max_keep_ckpts :]
        protected = set(self.best_paths.values())
        self.kept, self.last_ckpt = kept, path  # saved with the checkpoint itself
        self.stale = [p for p in dict.fromkeys(stale) if p not in protected]
        runner.message_hub.update_info("last_ckpt", path)
        runner.save_checkpoint(
            directory, os.path.basename(path), save_optimizer=self.save_optimizer,
            save_param_scheduler=self.save_param_scheduler, by_epoch=self.by_epoch,
            async_=self.async_save, delete_after=list(self.stale),
        )  # fmt: skip
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
            "or rule='less' (or add it to greater_keys/less_keys)"
        )

    # ------------------------------------------------------------ stages
    def before_train(self, runner: RunnerProtocol) -> None:
        """Place a resumed state (:meth:`_adopt`); give ``optim_wrapper=dict(on_repeated=
        'rollback')`` the last checkpoint."""
        self._adopt(runner)
        attach_rollback(runner, lambda: self.last_ckpt)

    def after_train_epoch(self, runner: RunnerProtocol) -> None:
        if not self.by_epoch:
            return
        epoch = runner.epoch + 1
        if self._due(epoch) or (self.save_last and epoch == runner.max_epochs):
            if accumulation_pending(runner.optim_wrapper):
                runner.logger.warning(
                    f"Epoch {epoch} ends inside a gradient accumulation window: its checkpoint "
                    "does not hold the accumulated gradients, so a resume from it is not exact. "
                    "Make the epoch length a multiple of accumulative_counts, or checkpoint by "
                    "iteration (by_epoch=False)"
                )
            runner.logger.info(f"Saving checkpoint at {epoch} epochs")
            self._save(runner, epoch)

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        if self.by_epoch:
            return
        it = runner.iter + 1
        if not (self._due(it) or self._deferred or (self.save_last and it == runner.max_iters)):
            return
        if accumulation_pending(runner.optim_wrapper):
            # the accumulated gradients are not saved: save once the window closes
            if not self._deferred:
                runner.logger.info(
                    f"Checkpoint at {it} iterations falls inside a gradient accumulation "
                    "window; saving when the window closes"
                )
            self._deferred = True
            return
        self._deferred = False
        runner.logger.info(f"Saving checkpoint at {it} iterations")
        self._save(runner, it)

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
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
            self._maybe_save_best(
                runner, key, self._rule_for(key, rule), float(metrics[key]), len(keys)
            )

    def _maybe_save_best(
        self, runner: RunnerProtocol, key: str, rule: str, score: float, n_keys: int
    ) -> None:
        """Save a best checkpoint if ``score`` enters the top ``max_keep_best``; the one it
        pushes out is deleted after the save (unless an interval checkpoint keeps it)."""
        self._adopt(runner)
        greater = rule == "greater"
        kept = self.best_kept.setdefault(key, [])
        if len(kept) >= self.max_keep_best and not (
            score > kept[-1][0] if greater else score < kept[-1][0]
        ):
            return
        by_epoch = runner.train_loop_by_epoch
        step = runner.epoch if by_epoch else runner.iter
        template = self.filename_tmpl if by_epoch == self.by_epoch else (
            "epoch_{}.pth" if by_epoch else "iter_{}.pth"
        )  # fmt: skip
        name = f"best_{key.replace('/', '_')}_{template.format(step)}"
        path = os.path.join(self._dir(runner), name)
        kept.append([score, path])
        kept.sort(key=lambda entry: entry[0], reverse=greater)  # best first; stable on ties
        dropped = [p for _, p in kept[self.max_keep_best :] if p not in self.kept and p != path]
        del kept[self.max_keep_best :]
        pointers: list[str] = []
        if kept[0][1] == path:  # the new best
            self.best_scores[key], self.best_paths[key] = score, path
            suffix = "" if n_keys == 1 else f"_{key}"
            runner.message_hub.update_info(f"best_score{suffix}", score)
            runner.message_hub.update_info(f"best_ckpt{suffix}", path)
            pointers.append("best_checkpoint" + suffix.replace("/", "_"))
        runner.save_checkpoint(
            self._dir(runner), os.path.basename(path), save_optimizer=False,
            save_param_scheduler=False, by_epoch=False, update_last=False,
            meta=dict(epoch=runner.epoch, iter=runner.iter, metrics={key: score}),
            async_=self.async_save, delete_after=dropped, pointers=pointers,
        )  # fmt: skip
        rank = [p for _, p in kept].index(path) + 1
        from .run_summary import short_path  # a path relative to the cwd: short lines

        shown = short_path(path)
        runner.logger.info(
            f"Best checkpoint no. {rank} ({key} {score:.4f}): {shown}"
            if self.max_keep_best > 1 else
            f"Best checkpoint ({key} {score:.4f}): {shown}"
        )  # fmt: skip

    def after_train(self, runner: RunnerProtocol) -> None:
        """Wait for a background save; publish the last and best checkpoints if asked."""
        runner.wait_for_checkpoint()
        if self.published_keys is None or runner.rank != 0:
            return
        from ..checkpoint.publish import publish_checkpoint

        targets = ([self.last_ckpt] if self.save_last and self.last_ckpt else []) + list(
            self.best_paths.values()
        )
        for path in dict.fromkeys(targets):
            if os.path.isfile(path):
                out = publish_checkpoint(path, path, keys=self.published_keys)
                runner.logger.info(f"Published {path} as {out}")

    def after_run(self, runner: RunnerProtocol) -> None:
        runner.wait_for_checkpoint()

    # ------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """The kept, stale and best checkpoints as names relative to the hook's folder: a
        resume places them in the folder it resumes in (:meth:`_adopt`)."""
        if self._restored is not None:  # not placed yet: saved as it came
            return dict(self._restored)
        state = {
            "kept": self.kept, "stale": self.stale, "last_ckpt": self.last_ckpt,
            "best_scores": dict(self.best_scores), "best_paths": self.best_paths,
            "best_kept": self.best_kept,
        }  # fmt: skip
        if self._folder is None:  # nothing saved yet
            return _map_files({**state, "version": STATE_VERSION}, lambda p: p)
        return _map_files({**state, "version": STATE_VERSION}, _names_in(self._folder))

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Keep ``state`` until the run's folder is known (:meth:`_adopt`)."""
        state = dict(state)
        best_kept = {k: [list(e) for e in v] for k, v in state.get("best_kept", {}).items()}
        for key, path in state.get("best_paths", {}).items():  # states before max_keep_best
            best_kept.setdefault(key, [[state.get("best_scores", {})[key], path]])
        state["best_kept"] = best_kept
        self._restored = state


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(CheckpointHook)
