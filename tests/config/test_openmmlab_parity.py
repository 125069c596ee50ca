"""Parity of ``cadence.config.Config`` with mmengine on OpenMMLab-style configs.

The corpus under ``data/openmmlab`` and ``data/openmmlab_pure`` imitates the
config trees of mmdet, mmpretrain and mmseg. For every experiment config,
``data/openmmlab_expected/<name>.json`` holds what mmengine's
``Config.fromfile(path).to_dict()`` produced (see
``make_mmengine_expected.py``, which must be run with an interpreter that
has mmengine). This test loads the same files with cadence and requires the
same result.

Only ``Config.fromfile`` and ``Config.to_dict`` are used.
"""

import importlib.util
import json
import re
import shutil
import warnings
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / "data"
EXPECTED_DIR = DATA_DIR / "openmmlab_expected"
CORPUS_SUBDIRS = ("openmmlab", "openmmlab_pure")
PURE_SUBDIR = "openmmlab_pure"

_READ_BASE_IMPORT = re.compile(
    r"^(\s*)from\s+mmengine\.config\s+import\s+read_base\b", re.MULTILINE
)


def _load_encoder():
    spec = importlib.util.spec_from_file_location(
        "cadence_tests_mmengine_json", HERE / "_mmengine_json.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mj = _load_encoder()

EXPECTED_FILES = sorted(EXPECTED_DIR.glob("*.json"))


def _expected(path):
    with open(path, encoding="utf-8") as f:
        record = json.load(f)
    record["cfg"] = _intended_deviations(record["cfg"])
    return record


def _intended_deviations(value):
    """Apply the places where cadence deliberately differs from mmengine.

    mmengine keeps a ``_delete_`` key when the base has no such key (its merge
    only pops it while merging into an existing dict), so the marker leaks
    into constructor arguments. cadence never leaves ``_delete_`` in a
    result; everything else in the expected files is mmengine's output as is.
    """
    if isinstance(value, dict):
        return {k: _intended_deviations(v) for k, v in value.items() if k != "_delete_"}
    if isinstance(value, list):
        return [_intended_deviations(v) for v in value]
    return value


def _copy_corpus(dest):
    """Copy the corpus into ``dest``, pointing pure configs at cadence."""
    for sub in CORPUS_SUBDIRS:
        shutil.copytree(DATA_DIR / sub, dest / sub)
    for py in sorted((dest / PURE_SUBDIR).rglob("*.py")):
        text = py.read_text(encoding="utf-8")
        new = _READ_BASE_IMPORT.sub(r"\1from cadence.config import read_base", text)
        if new != text:
            py.write_text(new, encoding="utf-8")


def _load_with_cadence(record, tmp_path, monkeypatch):
    from cadence.config import Config

    for name in record["env"]["unset"]:
        monkeypatch.delenv(name, raising=False)
    for name, value in record["env"]["set"].items():
        monkeypatch.setenv(name, value)

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _copy_corpus(corpus)
    path = corpus / record["config"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = Config.fromfile(str(path))
    actual = mj.encode(cfg.to_dict(), mj.corpus_prefixes(corpus))
    return actual, caught, corpus


def _report(name, record, lines, limit=60):
    shown = lines[:limit]
    more = len(lines) - len(shown)
    text = "\n  ".join(shown)
    if more:
        text += f"\n  ... and {more} more"
    return (
        f"{name} ({record['config']}) differs from mmengine {record['mmengine_version']}:\n  {text}"
    )


def test_expected_files_present():
    assert len(EXPECTED_FILES) >= 10, (
        f"no mmengine reference files in {EXPECTED_DIR}; run "
        "make_mmengine_expected.py with an mmengine interpreter"
    )


@pytest.mark.parametrize("expected_file", EXPECTED_FILES, ids=[p.stem for p in EXPECTED_FILES])
def test_openmmlab_parity(expected_file, tmp_path, monkeypatch):
    record = _expected(expected_file)
    actual, _, _ = _load_with_cadence(record, tmp_path, monkeypatch)
    diffs = mj.compare(record["cfg"], actual)
    if diffs:
        pytest.fail(_report(record["name"], record, diffs), pytrace=False)


@pytest.mark.parametrize("expected_file", EXPECTED_FILES, ids=[p.stem for p in EXPECTED_FILES])
def test_openmmlab_key_order(expected_file, tmp_path, monkeypatch):
    """Dict key order matches too (it shows in pretty_text and dumps)."""
    record = _expected(expected_file)
    actual, _, _ = _load_with_cadence(record, tmp_path, monkeypatch)
    diffs = mj.order_differences(record["cfg"], actual)
    if diffs:
        pytest.fail(_report(record["name"], record, diffs), pytrace=False)


_DEPRECATED = [p for p in EXPECTED_FILES if _expected(p)["deprecation_warnings"]]


@pytest.mark.parametrize("expected_file", _DEPRECATED, ids=[p.stem for p in _DEPRECATED])
def test_openmmlab_deprecation_warning(expected_file, tmp_path, monkeypatch):
    """A ``_deprecation_`` config warns with DeprecationWarning, as in
    mmengine, naming the suggested replacement."""
    record = _expected(expected_file)
    _, caught, _ = _load_with_cadence(record, tmp_path, monkeypatch)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    for reference in record["deprecation_warnings"]:
        replacement = re.search(r"Please use (\S+) instead", reference)
        wanted = replacement.group(1) if replacement else ""
        assert any(wanted in m for m in messages), (
            f"expected a DeprecationWarning mentioning {wanted!r}; "
            f"got {messages!r} (mmengine said: {reference!r})"
        )
