"""load/dump by format, handlers, list_from_file/dict_from_file, get_local_path, and
the file backend object — behaviour as mmengine.fileio documents it."""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from cadence import fileio
from cadence.fileio import (
    BaseFileHandler,
    JsonHandler,
    dict_from_file,
    dump,
    get_file_backend,
    get_local_path,
    list_from_file,
    load,
    register_handler,
)
from cadence.fileio.handlers import file_handlers

DATA = {"name": "run", "values": [1, 2.5, None], "nested": {"ok": True}}


@pytest.mark.parametrize("suffix", ["json", "yaml", "yml", "pkl", "pickle"])
def test_round_trip_through_a_file_by_suffix(tmp_path, suffix):
    path = tmp_path / "sub" / f"data.{suffix}"
    assert dump(DATA, str(path)) is None
    assert load(str(path)) == DATA
    assert load(path) == DATA  # a Path works as well


def test_the_suffix_picks_the_format_written(tmp_path):
    dump({"a": 1}, tmp_path / "x.json")
    dump({"a": 1}, tmp_path / "x.yaml")
    dump({"a": 1}, tmp_path / "x.pkl")
    assert (tmp_path / "x.json").read_text() == '{"a": 1}'
    assert (tmp_path / "x.yaml").read_text() == "a: 1\n"
    assert pickle.loads((tmp_path / "x.pkl").read_bytes()) == {"a": 1}
    assert (tmp_path / "x.pkl").read_bytes()[:2] == b"\x80\x02"  # protocol 2 by default


def test_file_format_overrides_the_suffix(tmp_path):
    path = tmp_path / "data.txt"
    dump([1, 2], path, file_format="json")
    assert path.read_text() == "[1, 2]"
    assert load(path, file_format="json") == [1, 2]


def test_unknown_formats_are_type_errors(tmp_path):
    with pytest.raises(TypeError, match="Unsupported format: txt"):
        load(str(tmp_path / "a.txt"))
    with pytest.raises(TypeError, match="Unsupported format: csv"):
        dump({}, str(tmp_path / "a.csv"))
    with pytest.raises(TypeError, match="Unsupported format: JSON"):  # suffixes are exact
        load(str(tmp_path / "a.JSON"))


def test_dump_without_a_file_returns_the_text_and_needs_a_format():
    assert dump({"a": [1, 2]}, file_format="json") == '{"a": [1, 2]}'
    assert dump({"a": 1}, file_format="yaml") == "a: 1\n"
    assert pickle.loads(dump({"a": 1}, file_format="pkl")) == {"a": 1}
    with pytest.raises(ValueError, match="file_format must be specified"):
        dump({"a": 1})


def test_file_objects_are_read_and_written():
    buffer = io.StringIO()
    dump({"k": "v"}, buffer, file_format="json")
    assert buffer.getvalue() == '{"k": "v"}'
    assert load(io.StringIO("k: [1, 2]\n"), file_format="yaml") == {"k": [1, 2]}
    raw = io.BytesIO()
    dump((1, "two"), raw, file_format="pickle")
    raw.seek(0)
    assert load(raw, file_format="pickle") == (1, "two")


def test_other_file_arguments_are_type_errors():
    with pytest.raises(TypeError, match='"file" must be a filepath str or a file-object'):
        load(123, file_format="json")
    with pytest.raises(TypeError, match='"file" must be a filename str or a file-object'):
        dump({}, 123, file_format="json")


def test_json_writes_sets_ranges_and_numpy_values_as_lists_and_numbers():
    text = dump(
        {"s": {3}, "r": range(2), "a": np.array([[1, 2]]), "f": np.float32(0.5), "i": np.int64(7)},
        file_format="json",
    )
    assert load(io.StringIO(text), file_format="json") == {
        "s": [3], "r": [0, 1], "a": [[1, 2]], "f": 0.5, "i": 7
    }  # fmt: skip
    with pytest.raises(TypeError, match="unsupported for json dump"):
        dump({"x": object()}, file_format="json")


def test_handler_kwargs_are_passed_on():
    assert dump({"b": 1, "a": 2}, file_format="json", sort_keys=True, indent=1) == (
        '{\n "a": 2,\n "b": 1\n}'
    )
    assert load(io.StringIO('{"x": 1.5}'), file_format="json", parse_float=str) == {"x": "1.5"}


def test_yaml_keeps_tuples_but_reads_no_other_python_objects():
    text = dump({"size": (3, 4)}, file_format="yaml")
    assert load(io.StringIO(text), file_format="yaml") == {"size": (3, 4)}
    hostile = "x: !!python/object/apply:os.system ['echo unsafe']\n"
    import yaml

    with pytest.raises(yaml.constructor.ConstructorError):
        load(io.StringIO(hostile), file_format="yaml")


@pytest.fixture
def restore_handlers():
    saved = dict(file_handlers)
    yield
    file_handlers.clear()
    file_handlers.update(saved)


def test_register_handler_adds_a_format(tmp_path, restore_handlers):
    @register_handler(["lines", "lst"])
    class LinesHandler(BaseFileHandler):
        def load_from_fileobj(self, file, **kwargs):
            return file.read().splitlines()

        def dump_to_fileobj(self, obj, file, **kwargs):
            file.write(self.dump_to_str(obj))

        def dump_to_str(self, obj, **kwargs):
            return "\n".join(obj)

    assert isinstance(LinesHandler, type)  # the decorator gives the class back
    dump(["a", "b"], tmp_path / "x.lines")
    assert (tmp_path / "x.lines").read_text() == "a\nb"
    assert load(io.StringIO("c\nd"), file_format="lst") == ["c", "d"]
    assert load(str(tmp_path / "x.lines")) == ["a", "b"]
    with pytest.raises(TypeError, match="must be a child of BaseFileHandler"):
        register_handler("bad")(dict)
    with pytest.raises(TypeError, match="file_formats must be a str or a list of str"):
        register_handler(3)(JsonHandler)


def test_backend_args_and_file_client_args(tmp_path):
    path = str(tmp_path / "a.json")
    dump([1], path, backend_args={"backend": "local"})
    assert load(path, backend_args={"backend": "local"}) == [1]
    with pytest.warns(DeprecationWarning, match="backend_args"):
        assert load(path, file_client_args={"backend": "disk"}) == [1]
    with (
        pytest.raises(ValueError, match="cannot be set at the same time"),
        pytest.warns(DeprecationWarning),
    ):
        load(path, file_client_args={}, backend_args={})
    with pytest.raises(ValueError, match="petrel"):
        get_file_backend(path, backend_args={"backend": "petrel"})


def test_list_from_file(tmp_path):
    path = tmp_path / "names.txt"
    path.write_text("cat\ndog\r\nbird\nfish\n")
    assert list_from_file(path) == ["cat", "dog", "bird", "fish"]
    assert list_from_file(str(path), prefix="a/") == ["a/cat", "a/dog", "a/bird", "a/fish"]
    assert list_from_file(path, offset=1, max_num=2) == ["dog", "bird"]
    assert list_from_file(path, offset=3, max_num=0) == ["fish"]
    assert list_from_file(path, max_num=-1) == ["cat", "dog", "bird", "fish"]


def test_dict_from_file(tmp_path):
    path = tmp_path / "map.txt"
    path.write_text("1 cat\n2 dog  house\n3\tbird\n")
    assert dict_from_file(path) == {"1": "cat", "2": ["dog", "house"], "3": "bird"}
    assert dict_from_file(str(path), key_type=int) == {1: "cat", 2: ["dog", "house"], 3: "bird"}
    (tmp_path / "bad.txt").write_text("1 cat\nlonely\n")
    with pytest.raises(AssertionError, match="bad.txt:2"):
        dict_from_file(tmp_path / "bad.txt")


def test_get_local_path_gives_local_files_back_as_they_are(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("x")
    with get_local_path(str(path)) as local:
        assert local == str(path)
    with get_local_path(path) as local:
        assert local == str(path)
    assert path.exists()


def test_get_local_path_downloads_a_url_and_removes_the_copy():
    import fsspec

    fsspec.filesystem("memory").pipe_file("/getlocal/w.json", b"[7]")
    with get_local_path("memory://getlocal/w.json") as local:
        assert os.path.basename(local) == "w.json"
        assert Path(local).read_bytes() == b"[7]"
    assert not os.path.exists(local)
    assert not os.path.exists(os.path.dirname(local))


def test_get_file_backend_binds_backend_args(tmp_path):
    backend = get_file_backend(str(tmp_path), backend_args={"backend": "local"})
    assert backend.name == "LocalBackend"
    target = backend.join_path(str(tmp_path), "d", "f.txt")
    assert target == os.path.join(str(tmp_path), "d", "f.txt")
    backend.put_text("hi", target)
    assert backend.get(target) == b"hi" and backend.get_text(target) == "hi"
    assert backend.isfile(target) and backend.isdir(os.path.dirname(target))
    assert backend.exists(target)
    assert list(backend.list_dir_or_file(str(tmp_path), recursive=True)) == ["d", "d/f.txt"]
    with backend.get_local_path(target) as local:
        assert local == target
    copied = backend.copytree(str(tmp_path / "d"), str(tmp_path / "e"))
    assert Path(copied, "f.txt").read_text() == "hi"
    backend.rmtree(str(tmp_path / "e"))
    backend.remove(target)
    assert not backend.exists(target) and not (tmp_path / "e").exists()
    with pytest.raises(ValueError, match="uri should not be None"):  # as mmengine
        get_file_backend()
    assert get_file_backend("s3://bucket/x").name == "FsspecBackend"
    assert get_file_backend("memory://x").join_path("memory://x/", "y") == "memory://x/y"


def test_copyfile_into_a_folder_keeps_the_name(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "out").mkdir()
    written = fileio.copyfile(str(tmp_path / "a.txt"), str(tmp_path / "out"))
    assert written == str(tmp_path / "out" / "a.txt")
    assert (tmp_path / "out" / "a.txt").read_text() == "x"


def test_copytree_refuses_an_existing_destination(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(FileExistsError):
        fileio.copytree(str(tmp_path / "a"), str(tmp_path / "b"))


def test_load_dump_round_trip_on_s3(s3):
    bucket = s3.bucket()
    dump(DATA, f"{bucket}/cfg/data.yaml")
    dump(DATA, f"{bucket}/cfg/data.pkl")
    assert s3.fs().cat_file(f"{bucket}/cfg/data.yaml").startswith(b"name: run")
    assert load(f"{bucket}/cfg/data.yaml") == DATA
    assert load(f"{bucket}/cfg/data.pkl") == DATA
    with get_local_path(f"{bucket}/cfg/data.yaml") as local:
        assert load(local) == DATA
    assert not os.path.exists(local)


def test_copytree_and_rmtree_on_urls(tmp_path):
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "a.txt").write_text("a")
    (tmp_path / "src" / "sub" / "b.txt").write_text("b")
    fileio.copytree(str(tmp_path / "src"), "memory://tree/up")
    assert fileio.get_text("memory://tree/up/sub/b.txt") == "b"
    fileio.copytree("memory://tree/up", "memory://tree/again")
    listed = fileio.list_dir_or_file("memory://tree/again", list_dir=False, recursive=True)
    assert sorted(listed) == ["a.txt", "sub/b.txt"]
    fileio.copytree("memory://tree/again", str(tmp_path / "down"))
    assert (tmp_path / "down" / "sub" / "b.txt").read_text() == "b"
    fileio.rmtree("memory://tree")
    assert not fileio.exists("memory://tree/up/a.txt")
