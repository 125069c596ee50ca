"""mmengine's storage backends in cadence.fileio: the name/prefix tables, get_file_backend's
choice, PetrelBackend and MemcachedBackend over their (optional) client packages, and
FileClient."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from cadence import fileio
from cadence.fileio import (
    BaseStorageBackend,
    FileClient,
    FsspecBackend,
    LocalBackend,
    MemcachedBackend,
    PetrelBackend,
    get_file_backend,
    register_backend,
)
from cadence.fileio.backends import backends, prefix_to_backends


class _Store:
    """petrel_client's Client over a dict (the package is only on SenseTime clusters)."""

    def __init__(self, conf_path=None, enable_mc=True):
        self.objects: dict[str, bytes] = {}
        self.options = (conf_path, enable_mc)

    def Get(self, path):  # noqa: N802 - petrel_client's name
        return self.objects[path]

    def put(self, path, data):
        self.objects[path] = data

    def contains(self, path):
        return path in self.objects

    def isdir(self, path):
        return any(k.startswith(path.rstrip("/") + "/") for k in self.objects)

    def delete(self, path):
        del self.objects[path]

    def list(self, path):
        names = {k[len(path) :].split("/")[0] + ("/" if "/" in k[len(path) :] else "")
                 for k in self.objects if k.startswith(path)}  # fmt: skip
        return sorted(names)


@pytest.fixture
def petrel(monkeypatch):
    client = types.ModuleType("petrel_client.client")
    client.Client = _Store  # type: ignore[attr-defined]
    package = types.ModuleType("petrel_client")
    package.client = client  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "petrel_client", package)
    monkeypatch.setitem(sys.modules, "petrel_client.client", client)


def test_petrel_backend_maps_paths_and_talks_s3_to_its_client(petrel):
    backend = PetrelBackend(path_mapping={"mine/": "petrel://bucket/data/"}, enable_mc=False)
    assert backend._client.options == (None, False)
    backend.put_text("hi", "mine/a.txt")
    assert backend._client.objects == {"s3://bucket/data/a.txt": b"hi"}
    assert backend.get_text("petrel://bucket\\data\\a.txt") == "hi"
    assert backend.join_path("petrel://bucket/data/", "/x", "y") == "petrel://bucket/data/x/y"
    assert backend.copyfile("mine/a.txt", "petrel://bucket/data/sub/b.txt").endswith("b.txt")
    assert set(backend.list_dir_or_file("petrel://bucket/data", recursive=True)) == {
        "a.txt",
        "sub",
        "sub/b.txt",
    }
    with pytest.raises(TypeError, match="`list_dir` should be False"):
        backend.list_dir_or_file("petrel://bucket/data", suffix=".txt")  # at the call
    with backend.get_local_path("mine/a.txt") as local:
        assert Path(local).read_bytes() == b"hi"
    assert not os.path.exists(local)
    backend.rmtree("petrel://bucket/data")
    assert backend._client.objects == {}


def test_petrel_backend_without_its_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "petrel_client", None)  # import fails
    with pytest.raises(ImportError, match="petrel_client") as info:
        get_file_backend("petrel://bucket/x")
    assert isinstance(info.value, ValueError)  # a StorageUnavailable, as before


def test_memcached_backend_reads_through_mc(monkeypatch, tmp_path):
    (tmp_path / "f").write_bytes(b"cached")

    class Client:
        @staticmethod
        def GetInstance(servers, cfg):  # noqa: N802 - mc's names
            return Client()

        def Get(self, path, buffer):  # noqa: N802
            buffer.append(Path(path).read_bytes())

    mc = types.ModuleType("mc")
    mc.MemcachedClient = Client  # type: ignore[attr-defined]
    mc.pyvector = list  # type: ignore[attr-defined]
    mc.ConvertBuffer = lambda buffer: buffer[-1]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mc", mc)
    backend = MemcachedBackend("servers.conf", "client.conf")
    assert backend.get(tmp_path / "f") == b"cached"
    with pytest.raises(NotImplementedError):
        backend.get_text(tmp_path / "f")


def test_get_file_backend_chooses_by_name_then_prefix_and_keeps_singletons(monkeypatch):
    monkeypatch.setattr(fileio.io, "backend_instances", {})
    assert type(get_file_backend("/a/b")) is LocalBackend
    assert type(get_file_backend("s3://bucket/x")) is FsspecBackend  # cadence: fsspec
    assert type(get_file_backend("https://host/x")).__name__ == "HTTPBackend"
    assert type(get_file_backend(None, backend_args={"backend": "local"})) is LocalBackend
    first = get_file_backend("/a", enable_singleton=True)
    assert get_file_backend("/b", enable_singleton=True) is first
    assert fileio.io.backend_instances == {":{}": first}
    with pytest.raises(ValueError, match="backend='nope' is not a registered"):
        get_file_backend("/a", backend_args={"backend": "nope"})


def test_register_backend_by_name_and_prefix(monkeypatch):
    monkeypatch.setattr(fileio.backend_registry, "backends", dict(backends))
    monkeypatch.setattr(fileio.backend_registry, "prefix_to_backends", dict(prefix_to_backends))

    @register_backend("echo", prefixes=["echo"])
    class Echo(BaseStorageBackend):
        def get(self, filepath):
            return os.fspath(filepath).encode()

        def get_text(self, filepath, encoding="utf-8"):
            return os.fspath(filepath)

    assert get_file_backend("echo://x").get("echo://x") == b"echo://x"
    with pytest.raises(ValueError, match="echo is already registered"):
        register_backend("echo", Echo)
    with pytest.raises(TypeError, match="not a subclass of BaseStorageBackend"):
        register_backend("other", int)  # type: ignore[arg-type]
    with pytest.raises(AssertionError):
        register_backend("other", Echo, prefixes=1)  # type: ignore[arg-type]


def test_local_functions_take_paths_and_link_or_copy(tmp_path):
    src = tmp_path / "a.txt"
    fileio.put_text("x", src)
    assert fileio.copyfile(src, tmp_path / "b.txt") == tmp_path / "b.txt"  # dst's own type
    assert fileio.copy_if_symlink_fails(src, tmp_path / "link.txt") is True
    assert os.path.islink(tmp_path / "link.txt")
    with pytest.raises(TypeError, match="must be a string or tuple"):
        fileio.list_dir_or_file(tmp_path, list_dir=False, suffix=[".txt"])  # type: ignore[arg-type]
    assert fileio.io._parse_uri_prefix("cluster:s3://b/k") == "s3"
    assert fileio.io._parse_uri_prefix(tmp_path) == ""


@pytest.mark.filterwarnings("ignore:FileClient is deprecated:DeprecationWarning")
def test_file_client_is_one_instance_per_arguments_until_reregistered():
    disk = FileClient("disk")
    assert disk is FileClient() and disk.name == "HardDiskBackend" and disk.allow_symlink
    with pytest.raises(ValueError, match="Backend hadoop is not supported"):
        FileClient("hadoop")

    class Mine(LocalBackend):
        pass

    FileClient.register_backend("mine_test", Mine)
    try:
        client = FileClient("mine_test")
        assert FileClient("mine_test") is client
        with pytest.raises(KeyError):
            FileClient.register_backend("mine_test", Mine)
        FileClient.register_backend("mine_test", Mine, force=True)
        assert FileClient("mine_test") is not client
    finally:
        FileClient._backends.pop("mine_test")
    assert FileClient.parse_uri_prefix("/local") is None
