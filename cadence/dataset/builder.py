"""Build a ``torch.utils.data.DataLoader`` from an mmengine-style dataloader config.

::

    train_dataloader = dict(
        batch_size=32, num_workers=4, persistent_workers=True,
        dataset=dict(type='MyDataset', ...),             # or a Dataset object
        sampler=dict(type='DefaultSampler', shuffle=True),  # or a sampler object
        batch_sampler=None,                              # or dict(type=...) / an object
        collate_fn=dict(type='pseudo_collate'),          # the default; a name or callable too
        worker_init_fn=None,                             # see below
        **other DataLoader arguments)

Everything is resolved here, once, so nothing is looked up per batch.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Mapping
from typing import Any

from torch.utils.data import DataLoader, Dataset, IterableDataset

from ..config.errors import ConfigKeyError
from ..dist import broadcast_object_list, get_rank, get_world_size
from ..registry import DATA_SAMPLERS, DATASETS, FUNCTIONS, Registry, config_location
from ..registry.constraints import FLAG, NATURAL, POSITIVE_INT, Rule, declare, raise_if_violated
from ..utils.suggest import did_you_mean
from .explained_loader import DEFAULT_LOADER_TIMEOUT, ExplainedDataLoader
from .multigrid import with_index
from .sample_errors import note_sample_errors
from .stream import StreamLoader, is_resumable_stream
from .worker import WorkerSeeder
from .worker_signals import ShieldedWorkerInit

_MISSING = object()
# Arguments of DataLoader that build_dataloader sets itself.
_SET_HERE = {"self", "dataset", "sampler", "batch_sampler", "collate_fn", "worker_init_fn"}
_LOADER_OPTIONS = sorted(set(inspect.signature(DataLoader.__init__).parameters) - _SET_HERE)

# The values a dataloader config's options may take (read by `cadence check` too).
declare(
    DataLoader,
    batch_size=Rule(POSITIVE_INT.test, "an int > 0 (samples per process and step)"),
    num_workers=NATURAL, shuffle=FLAG, drop_last=FLAG, pin_memory=FLAG,
    persistent_workers=FLAG, prefetch_factor=POSITIVE_INT,
    timeout=Rule(lambda v: not isinstance(v, bool) and isinstance(v, int | float) and v >= 0,
                 "a number of seconds >= 0 (0 waits for the workers forever)"),
)  # fmt: skip


class SlicedDataset(Dataset):
    """The first ``length`` samples of ``dataset``; other attributes (metainfo...) pass through.

    An index may be an int or a tuple whose first element is the index (a
    short cycle's ``(index, crop_size)``); the rest of the tuple passes through.
    """

    def __init__(self, dataset: Any, length: int) -> None:
        self._dataset = dataset
        self._length = min(operator.index(length), len(dataset))

    def __getattr__(self, name: str) -> Any:
        if name == "_dataset":  # during unpickling, before __init__ state exists
            raise AttributeError(name)
        if name == "__getitems__":  # batched loading, but through the slice's bounds
            return functools.partial(self._getitems, getattr(self._dataset, name))
        return getattr(self._dataset, name)

    def _inner(self, index: Any) -> Any:
        """``index`` checked against the slice and made non-negative."""
        if isinstance(index, tuple) and index:
            return with_index(index, self._inner(index[0]))
        position = operator.index(index)
        if not -self._length <= position < self._length:
            raise IndexError(f"index {index} out of range for {self._length} samples")
        return index if position >= 0 else position + self._length

    def _getitems(self, fetch: Callable[[list[Any]], Any], indices: list[Any]) -> Any:
        return fetch([self._inner(i) for i in indices])

    def __getitem__(self, index: Any) -> Any:
        return self._dataset[self._inner(index)]

    def __len__(self) -> int:
        return self._length


def _located(path: str, origin: str | None) -> str:
    return f"'{path}'" + (f" (defined at {origin})" if origin else "")


def _child_path(node: Any, parent: str, key: str) -> str:
    remembered, _ = config_location(node)
    return remembered or f"{parent}.{key}"


def _target_of(registry: Registry, cfg: Mapping[str, Any]) -> Any:
    """The class a config names, or ``None`` when it cannot be told before building."""
    target = cfg.get("type")
    lazy = getattr(target, "__cadence_lazy_build__", None)
    if callable(lazy):
        target = lazy()
    if isinstance(target, str):
        return registry.get(target)
    return target if callable(target) else None


def _accepts(target: Any, name: str) -> bool:
    """Whether ``target(name=...)`` is allowed; ``True`` when the signature is unknown."""
    if target is None:
        return True
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return True
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return True
    param = params.get(name)
    return param is not None and param.kind is not param.POSITIONAL_ONLY


def _build_dataset(spec: Any, path: str) -> Any:
    if not isinstance(spec, Mapping):
        return spec
    dataset = DATASETS.build(spec, key_path=_child_path(spec, path, "dataset"))
    full_init = getattr(dataset, "full_init", None)
    if callable(full_init):
        full_init()
    return dataset


def _sampler_seed(seed: int | None, diff_rank_seed: bool) -> int | None:
    """The shuffle seed for samplers: identical on every rank, or shards would overlap.

    With ``diff_rank_seed`` the given seed may differ per rank (mmengine's Runner
    adds the rank to it), so rank 0's value is shared.
    """
    if seed is None or not diff_rank_seed:
        return seed
    box: list[Any] = [seed]
    broadcast_object_list(box, src=0)
    return int(box[0])


def _build_sampler(spec: Any, dataset: Any, seed: int | None, path: str) -> Any:
    if not isinstance(spec, Mapping):
        return spec
    target = _target_of(DATA_SAMPLERS, spec)
    defaults: dict[str, Any] = {}
    if _accepts(target, "dataset"):
        defaults["dataset"] = dataset
    elif _accepts(target, "data_source"):  # torch.utils.data samplers
        defaults["data_source"] = dataset
    if _accepts(target, "seed"):
        defaults["seed"] = seed
    return DATA_SAMPLERS.build(
        spec, default_args=defaults, key_path=_child_path(spec, path, "sampler")
    )


def _is_default(option: str, value: Any) -> bool:
    """Whether a DataLoader batch option holds the value that means 'not set'."""
    if option == "drop_last":
        return value is None or value is False
    return value is None or (type(value) is int and value == 1)


def _build_batch_sampler(spec: Any, sampler: Any, args: dict[str, Any], path: str) -> Any:
    if spec is None or not isinstance(spec, Mapping):
        return spec
    target = _target_of(DATA_SAMPLERS, spec)
    key = _child_path(spec, path, "batch_sampler")
    defaults: dict[str, Any] = {"sampler": sampler}
    for option in ("batch_size", "drop_last"):  # DataLoader forbids them beside a batch_sampler
        if option not in args:
            continue
        value = args.pop(option)
        if _accepts(target, option):
            defaults[option] = value
        elif not _is_default(option, value):
            raise ValueError(
                f"'{path}.{option}={value!r}' cannot be used with the batch sampler at '{key}', "
                f"which takes no '{option}' argument; set it in the batch sampler's config"
            )
    return DATA_SAMPLERS.build(spec, default_args=defaults, key_path=key)


def _resolve_function(spec: Any, key: str, origin: str | None) -> Callable[..., Any] | None:
    """A function from a registered name, ``dict(type=..., **kwargs)`` or a callable."""
    if spec is None or (callable(spec) and not isinstance(spec, Mapping)):
        return spec
    kwargs: dict[str, Any] = {}
    target = spec
    if isinstance(spec, Mapping):
        kwargs = dict(spec.items())
        if "type" not in kwargs:
            raise ConfigKeyError(
                f"{_located(key, origin)} needs a 'type' naming a function in registry "
                f"'{FUNCTIONS.name}' (it has {sorted(kwargs)})",
                key=key,
            )
        target = kwargs.pop("type")
    if isinstance(target, str):
        with FUNCTIONS.switch_scope_and_registry(None) as registry:
            target = registry.lookup(target, key_path=key, origin=origin)
    if not callable(target):
        raise TypeError(
            f"{_located(key, origin)} must be a function name, dict(type=...) or a callable, "
            f"got {type(target).__name__}"
        )
    return functools.partial(target, **kwargs) if kwargs else target


def _worker_init(args: dict[str, Any], seed: int | None, epoch_source: Any, path: str) -> Any:
    quiet = args.pop("disable_subprocess_warning", False)
    if not isinstance(quiet, bool):
        raise TypeError(f"'{path}.disable_subprocess_warning' must be a bool, got {quiet!r}")
    if "worker_init_fn" in args:
        spec = args.pop("worker_init_fn")
        key = _child_path(spec, path, "worker_init_fn")
        return _resolve_function(spec, key, config_location(spec)[1])
    if seed is None:
        return None  # torch seeds each worker from the main process's generator
    return WorkerSeeder(seed, get_rank(), epoch_source, quiet)


def _set_timeout(args: dict[str, Any]) -> None:
    """A loader with workers gets :data:`DEFAULT_LOADER_TIMEOUT` unless ``timeout`` is set
    (its value is checked with the other options, see ``declare(DataLoader, ...)``)."""
    if "timeout" not in args and args.get("num_workers"):
        args["timeout"] = DEFAULT_LOADER_TIMEOUT


def _check_loader_options(args: dict[str, Any], path: str, origin: str | None) -> None:
    if not args.get("num_workers"):  # options torch rejects without worker processes
        args.pop("persistent_workers", None)
        args.pop("prefetch_factor", None)
    if "shuffle" in args and args["shuffle"]:
        raise ValueError(
            f"'{path}.shuffle' is not a DataLoader option here: set shuffle in '{path}.sampler'"
        )
    args.pop("shuffle", None)
    for key in args:
        if key not in _LOADER_OPTIONS:
            raise TypeError(
                f"unknown dataloader option {_located(f'{path}.{key}', origin)}; DataLoader "
                f"takes {', '.join(_LOADER_OPTIONS)}.{did_you_mean(key, _LOADER_OPTIONS)}"
            )


def _check_stream_options(
    sampler: Any, batch_sampler: Any, num_batches: Any, path: str, origin: str | None
) -> None:
    """A stream (``IterableDataset``) yields its own order: no sampler, no sliced epoch."""
    for key, value in (("sampler", sampler), ("batch_sampler", batch_sampler),
                       ("num_batch_per_epoch", num_batches)):  # fmt: skip
        if value is not None and value is not _MISSING:
            raise ValueError(
                f"{_located(f'{path}.{key}', origin)} cannot be set for a stream (an "
                "IterableDataset yields its own order); remove it and give batch_size"
            )


def build_dataloader(
    cfg: Any,
    *,
    seed: int | None = None,
    diff_rank_seed: bool = False,
    key_path: str | None = None,
) -> DataLoader:
    """Build a DataLoader from ``cfg`` (returned as is when it already is one).

    * ``dataset``: a ``DATASETS`` config (``full_init()`` is called when the
      dataset has it) or a dataset object. Required.
    * ``sampler``: a ``DATA_SAMPLERS`` config, built with ``dataset`` and
      ``seed`` as defaults (for classes that take them), or an object. Required
      unless a built ``batch_sampler`` is given.
    * ``batch_sampler``: ``None``, a ``DATA_SAMPLERS`` config or dotted path
      built with ``sampler``, ``batch_size`` and ``drop_last`` (taken from the
      dataloader config), or an object.
    * ``collate_fn``: ``pseudo_collate`` by default; a registered name,
      ``dict(type=name_or_callable, **kwargs)``, a callable, or ``None`` for
      torch's ``default_collate``.
    * ``worker_init_fn``: by default, when ``seed`` is given, each worker seeds
      ``random``, numpy and torch from (seed, rank, worker id, sampler epoch)
      and, with cadence's samplers, reseed before each batch from the batch's
      place in the data order, so a resumed epoch draws what the uninterrupted
      one drew (formulas in :mod:`cadence.dataset.worker`); without a seed
      torch's own per-worker seeding applies. A name, dict or callable replaces it.
      With workers, it is wrapped in a :class:`ShieldedWorkerInit`: each worker
      ignores SIGTERM, SIGINT and SIGUSR1 unless its main process sends them
      (:mod:`cadence.dataset.worker_signals`), so a signal to the whole job
      leaves the workers to the main process, which saves and shuts them down.
    * ``num_batch_per_epoch``: keep only the first ``n * batch_size * world_size``
      samples (for quick runs); with a batch sampler's ``batch_sizes`` (short
      cycles), the samples of its first ``n`` batches.
    * ``timeout``: seconds the main process waits for a batch from its workers
      (torch's option); with workers it defaults to :data:`DEFAULT_LOADER_TIMEOUT`
      (300 s), 0 waits forever. When it runs out, the error names the config key,
      the worker that owes the batch (whose stack it prints) and what to check
      (:mod:`cadence.dataset.explained_loader`).
    * Any other key goes to ``DataLoader``; ``persistent_workers`` and
      ``prefetch_factor`` are dropped when ``num_workers`` is 0.

    A sample that raises while loading gets a note naming its index, the dataset's
    description of it and the worker (:mod:`cadence.dataset.sample_errors`); the
    returned loader is an :class:`ExplainedDataLoader`.

    ``seed`` must be the same on every rank unless ``diff_rank_seed``, in which
    case samplers use rank 0's seed. ``key_path`` names the config in errors
    (configs loaded from a file remember their own, e.g. ``train_dataloader``).
    """
    if isinstance(cfg, DataLoader):
        return cfg
    if not isinstance(cfg, Mapping):
        raise TypeError(f"a dataloader config must be a dict or a DataLoader, got {type(cfg)}")
    if seed is not None:
        seed = operator.index(seed)
    remembered, origin = config_location(cfg)
    path = key_path or remembered or "dataloader"
    args = dict(cfg.items())
    raise_if_violated(DataLoader, args, cfg, path)

    if "dataset" not in args:
        raise ConfigKeyError(f"{_located(path, origin)} needs a 'dataset'", key=f"{path}.dataset")
    dataset = _build_dataset(args.pop("dataset"), path)
    num_batches = args.pop("num_batch_per_epoch", None)
    batch_sampler_spec = args.pop("batch_sampler", None)
    if num_batches is not None and not isinstance(dataset, IterableDataset):
        samples = _samples_in(operator.index(num_batches), args, batch_sampler_spec)
        dataset = SlicedDataset(dataset, samples * get_world_size())

    sampler_spec = args.pop("sampler", _MISSING)
    if isinstance(dataset, IterableDataset):
        _check_stream_options(sampler_spec, batch_sampler_spec, num_batches, path, origin)
        sampler_spec = None
    elif sampler_spec is _MISSING:
        if batch_sampler_spec is None or isinstance(batch_sampler_spec, Mapping):
            raise ConfigKeyError(
                f"{_located(path, origin)} needs a 'sampler', e.g. "
                "sampler=dict(type='DefaultSampler', shuffle=True)",
                key=f"{path}.sampler",
            )
        sampler_spec = None
    sampler = _build_sampler(sampler_spec, dataset, _sampler_seed(seed, diff_rank_seed), path)
    batch_sampler = _build_batch_sampler(batch_sampler_spec, sampler, args, path)
    epoch_source = sampler if batch_sampler is None else getattr(batch_sampler, "sampler", None)
    init_fn = _worker_init(args, seed, epoch_source, path)
    if isinstance(init_fn, WorkerSeeder) and args.get("num_workers"):
        if epoch_source is not None and hasattr(epoch_source, "tag_positions"):
            epoch_source.tag_positions = True  # workers seed each batch from its place
    if args.get("num_workers"):  # workers leave SIGTERM & co. to this process
        init_fn = ShieldedWorkerInit(init_fn)
    collate_spec = args.pop("collate_fn", "pseudo_collate")
    collate_fn = _resolve_function(
        collate_spec,
        _child_path(collate_spec, path, "collate_fn"),
        config_location(collate_spec)[1] or origin,
    )
    _check_loader_options(args, path, origin)
    _set_timeout(args)
    note_sample_errors(dataset)
    loader_type = StreamLoader if is_resumable_stream(dataset) else ExplainedDataLoader
    loader = loader_type(
        dataset,
        sampler=sampler if batch_sampler is None else None,
        batch_sampler=batch_sampler,
        collate_fn=collate_fn,
        worker_init_fn=init_fn,
        **args,
    )
    loader.key_path = path
    return loader


def _get(spec: Any, key: str, default: Any) -> Any:
    return spec.get(key, default) if isinstance(spec, Mapping) else default


def _samples_in(num_batches: int, args: Mapping[str, Any], batch_sampler_spec: Any) -> int:
    """Samples (per rank) in the first ``num_batches`` batches; a batch sampler's cycle of
    ``batch_sizes`` (short cycles) counts each batch at its own size."""
    sizes = _get(batch_sampler_spec, "batch_sizes", None)
    if sizes:
        return sum(sizes[i % len(sizes)] for i in range(num_batches))
    return num_batches * (args.get("batch_size") or _get(batch_sampler_spec, "batch_size", 1))
