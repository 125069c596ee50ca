"""YamlHandler and PickleHandler used directly, as mmengine.fileio documents its handlers:
dump_to_str / load_from_fileobj, and paths opened in text or binary mode by ``str_like``."""

from __future__ import annotations

import io
import pickle

from cadence.fileio import PickleHandler, YamlHandler
from cadence.fileio.handlers import file_handlers

DATA = {"name": "run", "values": [1, 2.5, None], "nested": {"ok": True}}


def test_yaml_handler_writes_text_that_reads_back() -> None:
    handler = YamlHandler()
    assert handler.str_like
    text = handler.dump_to_str(DATA)
    assert isinstance(text, str) and "name: run" in text
    assert handler.load_from_fileobj(io.StringIO(text)) == DATA


def test_pickle_handler_writes_bytes_that_pickle_reads(tmp_path) -> None:
    handler = PickleHandler()
    assert not handler.str_like
    raw = handler.dump_to_str(DATA)
    assert isinstance(raw, bytes) and pickle.loads(raw) == DATA
    path = str(tmp_path / "d.pkl")
    handler.dump_to_path(DATA, path)  # mode "w" becomes binary for a bytes format
    assert handler.load_from_path(path) == DATA


def test_the_suffixes_are_served_by_these_classes() -> None:
    assert isinstance(file_handlers["yaml"], YamlHandler)
    assert isinstance(file_handlers["yml"], YamlHandler)
    assert isinstance(file_handlers["pkl"], PickleHandler)
    assert isinstance(file_handlers["pickle"], PickleHandler)
