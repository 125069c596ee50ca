"""The runner's path keys: local paths, or URLs staged locally (cadence.fileio.staging).

A URL whose storage cannot be reached (unknown scheme, package not installed) is a
config error naming the key and its origin.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..fileio import check_url, is_url, local_path
from ..resilience.auto_resume import AUTO
from ..resilience.work_dir_lock import WorkDirLock

if TYPE_CHECKING:
    from ..config import Config

# the checkpoint and config packages are imported when a runner is built, not with it

#: The runner's keys that may hold a URL.
PATH_KEYS = ("work_dir", "load_from", "resume")


def check_url_keys(cfg: Config, keys: Iterable[str] = PATH_KEYS) -> None:
    """Raise :class:`ConfigError` (file:line, key) if one of ``keys`` of ``cfg`` is a URL
    that cannot be reached from here."""
    for key in keys:
        message = check_url(cfg.get(key), key)
        if message is None:
            continue
        try:
            origin = cfg.provenance(key)
        except Exception:  # noqa: BLE001 - a value without a recorded origin
            origin = None
        filename, line = (origin.filename, origin.line) if origin is not None else (None, None)
        from ..config import ConfigError

        raise ConfigError(message, filename=filename, line=line)


class RunPaths:
    """Where a run's files live: ``work_dir`` (local; the staging folder of a URL),
    ``load_from``/``resume`` (staged when URLs), the storage that mirrors them and the
    work dir's lock.

    ``resume`` is the run's setting (True, ``'auto'``, a path, False); while an
    auto-resume looks for a checkpoint it reads True (what hooks see then).
    """

    def __init__(
        self,
        work_dir: str,
        load_from: str | None,
        resume: bool | str,
        backend_args: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(work_dir, str) or not work_dir:
            raise ValueError("work_dir must be a non-empty path")
        for key, value in zip(PATH_KEYS, (work_dir, load_from, resume)):
            message = check_url(value, key)
            if message is not None:
                raise ValueError(message)
        from ..checkpoint.remote import RemoteStorage

        #: maps URLs to staged local paths and uploads them (nothing for local paths)
        self.storage = RemoteStorage(backend_args)
        #: the URL of the work dir, when it is remote
        self.remote_work_dir = work_dir.rstrip("/") if is_url(work_dir) else None
        if self.remote_work_dir is not None:
            self.work_dir = self.storage.stage(self.remote_work_dir)
        else:
            self.work_dir = os.path.abspath(local_path(work_dir))
        from ..fileio.staging import stage_url

        self.load_from = stage_url(self.storage, self._checkpoint(load_from))
        self.resume = stage_url(self.storage, self._checkpoint(resume))
        #: the checkpoint (local or staged path) this run resumed from, once it has
        self.resumed_from: str | None = None
        #: taken by ``train()`` before it writes to the work dir
        self.lock = WorkDirLock(self.work_dir)

    def holds(self, path: str, folder: str) -> bool:
        """Whether ``path`` lies directly in ``folder`` (both resolved: links, ``..``)."""
        return os.path.dirname(os.path.realpath(path)) == os.path.realpath(folder)

    def _checkpoint(self, value: Any) -> Any:
        """A local checkpoint name (``load_from``, a ``resume`` path) as the file it names: a
        work dir means its pointer's target, a name not found is looked up in the work dir
        (:func:`~cadence.checkpoint.resolve_checkpoint`); other values are unchanged."""
        if not isinstance(value, str) or value == AUTO or is_url(value):
            return value
        from ..checkpoint.pointer import resolve_checkpoint

        return resolve_checkpoint(value, self.work_dir)

    def add_options(self, backend_args: Mapping[str, Any] | None) -> None:
        """Join ``backend_args`` (a hook's, say) to the storage options: one set per run."""
        if backend_args:
            self.storage.backend_args.update(backend_args)

    def stage(self, value: Any, backend_args: Mapping[str, Any] | None = None) -> Any:
        """``value`` with a URL replaced by its staged path (see :meth:`add_options`)."""
        from ..fileio.staging import stage_url

        self.add_options(backend_args)
        return stage_url(self.storage, value)
