"""LogProcessor: turns the message hub's scalars into log lines and tags.

Output follows mmengine's ``LogProcessor`` line for line, e.g.::

    Epoch(train)  [1][ 50/100]  lr: 1.0000e-02  eta: 0:01:02  time: 0.0123  loss: 0.5123
    Iter(train) [  50/1000]  lr: 1.0000e-02  eta: ...
    Epoch(val) [1][10/10]    accuracy/top1: 92.0000  data_time: 0.0010  time: 0.0123

This is the only place logged tensors become Python numbers, and it runs
only on logging iterations.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..logging.console import LogLine
from ..logging.fitting import fit_items, fit_pieces
from ..logging.history_buffer import HistoryBuffer, resolve_tensors
from ..logging.throughput import samples_per_second, step_rates
from ..registry import LOG_PROCESSORS
from ..utils.suggest import did_you_mean

if TYPE_CHECKING:
    from ..contracts import LoopView, RunnerProtocol

_MODES = ("train", "val", "test")


class LogConfigError(ValueError, AssertionError):
    """A ``custom_cfg`` entry of the log processor cannot be used (mmengine asserts)."""


class LogConfigKeyError(KeyError, AssertionError):
    """A ``custom_cfg`` entry of the log processor lacks a key (mmengine asserts)."""


_WINDOW_WORDS = ("epoch", "global")


def _strip(key: str, prefix: str) -> str:
    return key[len(prefix) :] if key.startswith(prefix) else key


def _check_mode(mode: str, allowed: tuple[str, ...]) -> None:
    if mode not in allowed:
        raise ValueError(
            f"mode must be one of {', '.join(allowed)}, got {mode!r}."
            f"{did_you_mean(str(mode), allowed)}"
        )


def _format_value(value: Any, digits: int) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if hasattr(value, "shape") and getattr(value, "ndim", 0) > 0:  # tensors and arrays
        return f"\n{value}\n"
    return str(value)


@LOG_PROCESSORS.register_module()
class LogProcessor:
    """Formats the scalars of ``runner.message_hub`` into ``(tag, log_str)``.

    Args:
        window_size: smoothing window for keys matching ``mean_pattern``.
        by_epoch: epoch-style headers (``Epoch(train) [e][i/n]``) or
            iteration-style (``Iter(train) [i/N]``).
        custom_cfg: extra statistics, each
            ``dict(data_src='loss', method_name='mean', window_size=100|'epoch'|'global',
            log_name='loss_large_window')``; without ``log_name`` the statistic
            replaces ``data_src`` (at most once per name).
        num_digits: digits after the point for floats.
        log_with_hierarchy: keep the ``train/``, ``val/`` prefixes in tags.
        mean_pattern: keys matching it are averaged over the window; others
            show their latest value.
        max_width: the most characters of a line on the console: the least useful
            items (``data_time``, memory, ...) are left out until it fits, then loss
            terms, never left out, wrap onto more lines. The returned line is a
            :class:`~cadence.logging.console.LogLine`: the log file gets every item
            (mmengine's line), the console its ``console`` text; ``None`` keeps every
            item on the console too.

    Training lines also show the throughput (``samples/s``: samples per step over
    all processes divided by the step time; ``samples_per_sec`` in the tag); the
    console prints ``loss`` once when the model returns a single loss term.

    With several processes, a training line (on every rank) shows each loss
    averaged over the ranks and ``data_time`` as the maximum over the ranks
    (detectron2's convention), exchanged in one collective on logging
    iterations only; other values are the rank's own.
    """

    def __init__(
        self,
        window_size: int = 10,
        by_epoch: bool = True,
        custom_cfg: list[dict[str, Any]] | None = None,
        num_digits: int = 4,
        log_with_hierarchy: bool = False,
        mean_pattern: str = r".*(loss|time|data_time|grad_norm).*",
        max_width: int | None = 100,
    ) -> None:
        if not isinstance(window_size, int) or isinstance(window_size, bool) or window_size < 1:
            raise ValueError(f"window_size must be a positive int, got {window_size!r}")
        self.window_size = window_size
        self.by_epoch = by_epoch
        self.custom_cfg = [dict(cfg) for cfg in (custom_cfg or [])]
        self.num_digits = num_digits
        self.log_with_hierarchy = log_with_hierarchy
        self.mean_pattern = re.compile(mean_pattern)
        if max_width is not None and (not isinstance(max_width, int) or max_width < 40):
            raise ValueError(f"max_width must be None or an int >= 40, got {max_width!r}")
        self.max_width = max_width
        self._check_custom_cfg()

    def _check_custom_cfg(self) -> None:
        seen: set[str] = set()
        for index, cfg in enumerate(self.custom_cfg):
            where = f"log_processor custom_cfg[{index}]"
            if "data_src" not in cfg:
                raise LogConfigKeyError(f"{where} has no 'data_src' (got keys {sorted(cfg)})")
            if "method_name" not in cfg:
                raise LogConfigKeyError(
                    f"{where} has no 'method_name' (e.g. 'mean', 'max', 'min', 'current')"
                )
            name = cfg.get("log_name", cfg["data_src"])
            if name in seen:
                raise LogConfigError(
                    f"{where} writes '{name}' a second time; give each statistic of "
                    f"'{cfg['data_src']}' its own log_name"
                )
            seen.add(name)
            window = cfg.get("window_size")
            if isinstance(window, str):
                if window not in _WINDOW_WORDS:
                    raise LogConfigError(
                        f"{where}: window_size must be an int, 'epoch' or 'global', got "
                        f"{window!r}.{did_you_mean(window, _WINDOW_WORDS)}"
                    )
                if window == "epoch" and not self.by_epoch:
                    raise LogConfigError(f"{where}: window_size='epoch' needs by_epoch=True")

    # ------------------------------------------------------------- public API
    def get_log_after_iter(
        self, runner: RunnerProtocol, batch_idx: int, mode: str
    ) -> tuple[dict, str]:
        """Tag and log line after iteration ``batch_idx`` of ``mode`` ('train', 'val', 'test')."""
        _check_mode(mode, _MODES)
        custom = self._parse_windows_size(runner, batch_idx, self.custom_cfg)
        log_tag = self._collect_scalars(custom, runner, mode)
        if mode == "train":
            averaged = self._reduce_over_ranks(runner, log_tag)
            log_tag.update(averaged)
        else:
            averaged = {}
        if self.log_with_hierarchy:
            tag = self._collect_scalars(custom, runner, mode, reserve_prefix=True)
            tag.update({f"{mode}/{key}": value for key, value in averaged.items()})
        else:
            tag = dict(log_tag)

        # (text, rank): the texts joined as they are make mmengine's line; the lowest
        # ranks are left out first when it is wider than max_width
        pieces: list[tuple[str, int]] = [(self._iter_header(runner, batch_idx, mode, tag), 100)]
        tag["iter"] = runner.iter + 1 if _has_train_loop(runner) else 0
        lr_items = []
        for key, value in tag.items():
            if key.endswith("lr"):
                short = _strip(key, f"{mode}/")
                log_tag.pop(short, None)
                lr_items.append(f"{short}: {value:.{self.num_digits}e}")
        pieces.append((" ".join(lr_items) + "  ", 70))

        eta = runner.message_hub.runtime_info.get("eta")
        if "time" in log_tag and "data_time" in log_tag and eta is not None:
            digits = self.num_digits
            seconds = log_tag.pop("time")
            pieces.append((f"eta: {datetime.timedelta(seconds=int(eta))}  ", 90))
            pieces.append((f"time: {seconds:.{digits}f}  ", 80))
            pieces.append((f"data_time: {log_tag.pop('data_time'):.{digits}f}  ", 20))
            speed = None
            if mode == "train":
                loader = getattr(mode_loop(runner, mode), "dataloader", None)
                speed = samples_per_second(runner, loader, seconds)
            if speed is not None:
                tag["samples_per_sec"] = speed
                pieces.append((f"samples/s: {speed:.1f}  ", 60))
            window = self.window_size if isinstance(self.window_size, int) else None
            for key, value, text, rank in step_rates(runner, mode, seconds, window):
                tag[key] = value
                pieces.append((text, rank))

        memory = _max_cuda_memory_mb(runner)
        if memory is not None:
            pieces.append((f"memory: {memory}  ", 30))
            tag["memory"] = memory

        if mode in ("train", "val"):
            shown = {
                n: v for n, v in log_tag.items() if mode == "train" or n.startswith("val/loss")
            }
            parts = [n for n in shown if "loss" in n and n != "loss"]
            lone = "loss" in shown and len(parts) == 1  # the console prints `loss` once
            for index, (name, value) in enumerate(shown.items()):
                rank = 85 if name == "loss" else 40 if name in parts else 50
                rank = -1 if lone and name in parts else rank
                text = f"{name}: {_format_value(value, self.num_digits)}"
                pieces.append((f"  {text}" if index else text, rank))
        return tag, LogLine(fit_pieces(pieces, None), fit_pieces(pieces, self.max_width))

    def _items(self, *parts: Mapping[str, Any]) -> list[str]:
        return [f"{name}: {_format_value(value, self.num_digits)}"
                for part in parts for name, value in part.items()]  # fmt: skip

    def get_log_after_epoch(
        self, runner: RunnerProtocol, batch_idx: int, mode: str, with_non_scalar: bool = False
    ) -> tuple[dict, str]:
        """Tag and log line after a 'val' or 'test' epoch of ``batch_idx + 1`` batches."""
        _check_mode(mode, ("val", "test"))
        length = _dataloader_len(runner, mode, every_set=True)
        if length is None:
            length = batch_idx + 1
        if not self.by_epoch:
            log_str = f"Iter({mode}) [{length}/{length}]  "
        elif mode == "val":
            log_str = f"Epoch({mode}) [{_epoch(runner, mode)}][{length}/{length}]  "
        else:
            log_str = f"Epoch({mode}) [{length}/{length}]  "

        custom = [dict(cfg) for cfg in self.custom_cfg]
        custom_keys = {_strip(cfg["data_src"], f"{mode}/") for cfg in custom}
        for key in ("time", "data_time"):
            if key not in custom_keys:
                custom.append(dict(data_src=key, window_size="epoch", method_name="mean"))
        custom = self._parse_windows_size(runner, batch_idx, custom)
        collected = self._collect_scalars(custom, runner, mode, self.log_with_hierarchy)
        non_scalars = self._collect_non_scalars(runner, mode)

        time_keys = {"time", "data_time", f"{mode}/time", f"{mode}/data_time"}
        tag = {key: value for key, value in collected.items() if key not in time_keys}
        time_tag = {key: value for key, value in collected.items() if key in time_keys}
        shown = dict(tag)
        full = self._items(shown, non_scalars, time_tag)
        if self.max_width is not None:
            for name in _lone_loss_terms(shown):  # `x/loss` is its one term: print it once
                shown.pop(name)
        items = self._items(shown, non_scalars, time_tag)
        log_str = LogLine(
            fit_items(log_str + "  ", full, len(full), None),
            fit_items(log_str + "  ", items, len(shown) + len(non_scalars), self.max_width),
        )
        if with_non_scalar:
            tag.update(non_scalars)
        tag.update(time_tag)
        return tag, log_str

    # ---------------------------------------------------------------- helpers
    def _iter_header(self, runner: RunnerProtocol, batch_idx: int, mode: str, tag: dict) -> str:
        if not self.by_epoch:
            if mode == "train":
                total = runner.max_iters
                return f"Iter({mode}) [{str(runner.iter + 1).rjust(len(str(total)))}/{total}]  "
            length = _dataloader_len(runner, mode)
            return f"Iter({mode}) [{_progress(batch_idx + 1, length)}]  "
        length = _dataloader_len(runner, mode)
        progress = f"[{_progress(batch_idx + 1, length)}]"
        if mode == "test":
            return f"Epoch({mode}) {progress}  "
        epoch = _epoch(runner, mode)
        tag["epoch"] = epoch
        epoch_str = f"[{epoch}]"
        if _has_train_loop(runner):
            # right-align the epoch so lines of different epochs line up
            epoch_str = epoch_str.rjust(len(str(runner.max_epochs)) + 3)
        return f"Epoch({mode}){epoch_str}{progress}  "

    def _parse_windows_size(
        self,
        runner: RunnerProtocol,
        batch_idx: int,
        custom_cfg: list[dict[str, Any]] | None = None,
    ) -> list[dict[str, Any]]:
        """Copies of ``custom_cfg`` (default: the processor's) with the window sizes
        ``'epoch'`` (the batches of this epoch so far) and ``'global'`` (every
        iteration so far) as numbers."""
        resolved = []
        for cfg in self.custom_cfg if custom_cfg is None else custom_cfg:
            cfg = dict(cfg)
            window = cfg.get("window_size")
            if window == "epoch":
                cfg["window_size"] = batch_idx + 1
            elif window == "global":
                cfg["window_size"] = runner.iter + 1
            elif window is not None and (not isinstance(window, int) or isinstance(window, bool)):
                raise TypeError(
                    f"custom_cfg window_size must be an int, 'epoch' or 'global', got {window!r}"
                )
            resolved.append(cfg)
        return resolved

    # mmengine's helpers of the same names (downstream processors override or call them)
    def _get_cur_loop(self, runner: RunnerProtocol, mode: str) -> Any:
        """The runner's loop of ``mode``."""
        _check_mode(mode, _MODES)
        return mode_loop(runner, mode)

    def _get_epoch(self, runner: RunnerProtocol, mode: str) -> int:
        """The epoch a ``train`` or ``val`` line shows."""
        _check_mode(mode, ("train", "val"))
        return _epoch(runner, mode)

    def _get_iter(self, runner: RunnerProtocol, batch_idx: int) -> int:
        """The iteration a line shows: the batch within the epoch (``by_epoch``), else
        the global iteration, counted from 1."""
        return batch_idx + 1 if self.by_epoch else int(runner.iter) + 1

    def _get_max_memory(self, runner: RunnerProtocol) -> int:
        """The peak CUDA memory in MB since the last call (CUDA must be available)."""
        return _read_peak_memory(runner)

    def _collect_scalars(
        self,
        custom_cfg: list[dict[str, Any]],
        runner: RunnerProtocol,
        mode: str,
        reserve_prefix: bool = False,
    ) -> dict[str, Any]:
        prefix = f"{mode}/"
        buffers: dict[str, HistoryBuffer] = {
            key: buffer
            for key, buffer in runner.message_hub.log_scalars.items()
            if key.startswith(prefix)
        }
        resolve_tensors(buffers.values())
        tag: dict[str, Any] = {}
        for key, buffer in buffers.items():
            name = key if reserve_prefix else key[len(prefix) :]
            if self.mean_pattern.search(name) is not None:
                tag[name] = buffer.mean(self.window_size)
            else:
                tag[name] = buffer.current()
        for cfg in custom_cfg:
            cfg = dict(cfg)
            source = _strip(cfg.pop("data_src"), prefix)
            log_name = _strip(cfg.pop("log_name", source), prefix)
            source_buffer = buffers.get(prefix + source)
            if source_buffer is None:
                continue
            method = cfg.pop("method_name")
            value = source_buffer.statistics(method, **cfg)
            tag[prefix + log_name if reserve_prefix else log_name] = value
        return tag

    def _collect_non_scalars(self, runner: RunnerProtocol, mode: str) -> dict[str, Any]:
        prefix = f"{mode}/"
        return {
            (key if self.log_with_hierarchy else key[len(prefix) :]): value
            for key, value in runner.message_hub.runtime_info.items()
            if key.startswith(prefix)
        }

    def _reduce_over_ranks(
        self, runner: RunnerProtocol, values: dict[str, Any]
    ) -> dict[str, float]:
        """Losses averaged and ``data_time`` maximised over ranks, with one collective.

        As detectron2's trainer reports them: the mean loss of the global
        batch, and the data time of the slowest rank (the one everybody
        waits for). Called on logging iterations only, by every rank; every
        rank must log the same loss keys. Other values stay per rank.
        """
        import torch
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() <= 1:
            return {}
        numeric = {k: v for k, v in values.items() if isinstance(v, (int, float))}
        means = sorted(k for k in numeric if "loss" in k)
        maxima = sorted(k for k in numeric if k == "data_time")
        if not means and not maxima:
            return {}
        device = torch.device("cpu")
        if dist.get_backend() == "nccl":
            device = torch.device("cuda", torch.cuda.current_device())
        keys = means + maxima
        local = torch.tensor([float(numeric[k]) for k in keys], dtype=torch.float64, device=device)
        gathered = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, local)
        table = torch.stack(gathered)  # (ranks, keys)
        reduced = torch.cat([table[:, : len(means)].mean(0), table[:, len(means) :].amax(0)])
        return dict(zip(keys, reduced.tolist()))


def _lone_loss_terms(tag: dict[str, Any]) -> list[str]:
    """Keys ``<p>loss_<term>`` that are the only term of a ``<p>loss`` also in ``tag``."""
    lone = []
    for key in tag:
        if key == "loss" or key.endswith("/loss"):
            prefix = key[: -len("loss")]
            terms = [
                k for k in tag if k.startswith(prefix + "loss_") and "/" not in k[len(prefix) :]
            ]
            if len(terms) == 1:
                lone.append(terms[0])
    return lone


def mode_loop(runner: RunnerProtocol, mode: str) -> LoopView | None:
    """The runner's ``train``, ``val`` or ``test`` loop (the training loop is built on use)."""
    if mode == "train":
        return runner.train_loop
    return runner.val_loop if mode == "val" else runner.test_loop


def _has_train_loop(runner: RunnerProtocol) -> bool:
    """Whether the runner trains (a test- or val-only runner has no built train loop)."""
    return runner.train_loop_or_none is not None


def _epoch(runner: RunnerProtocol, mode: str) -> int:
    if mode == "train":
        return int(runner.epoch) + 1
    # validation runs after the train loop advanced the epoch counter
    return int(runner.epoch) if _has_train_loop(runner) else 0


def _dataloader_len(runner: RunnerProtocol, mode: str, every_set: bool = False) -> int | None:
    """Length of the ``mode`` loop's dataloader (with ``every_set``, of all its evaluation
    sets together), or None when unknown (iterable datasets)."""
    try:
        loop = mode_loop(runner, mode)
    except Exception:  # noqa: BLE001 - a runner without training may raise here
        return None
    sets = getattr(loop, "dataloaders", None)
    loaders: list[Any] = [getattr(loop, "dataloader", None)]
    if every_set and isinstance(sets, Mapping) and len(sets) > 1:
        loaders = list(sets.values())
    try:  # None (no loader) and iterable datasets have no length
        return sum(int(len(loader)) for loader in loaders)
    except (TypeError, NotImplementedError):
        return None


def _progress(current: int, total: int | None) -> str:
    if total is None:
        return f"{current}/?"
    return f"{str(current).rjust(len(str(total)))}/{total}"


def _max_cuda_memory_mb(runner: RunnerProtocol) -> int | None:
    """Peak CUDA memory in MB since the last call (None without CUDA)."""
    import torch

    if not torch.cuda.is_available():
        return None
    return _read_peak_memory(runner)


def _read_peak_memory(runner: RunnerProtocol) -> int:
    import torch

    model = runner.model
    device = getattr(model, "output_device", None)
    memory = torch.cuda.max_memory_allocated(device) // (1024 * 1024)
    torch.cuda.reset_peak_memory_stats(device)
    return int(memory)
