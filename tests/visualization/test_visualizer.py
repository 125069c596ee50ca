"""Visualizer: builds backends under save_dir/vis_data, forwards to them, named instances."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from cadence.logging import isolated_instances
from cadence.registry import VISUALIZERS
from cadence.visualization import BaseVisBackend, LocalVisBackend, Visualizer


class Recorder(BaseVisBackend):
    def __init__(self, save_dir) -> None:
        super().__init__(save_dir)
        self.calls: list[tuple] = []
        self.closed = False

    def add_config(self, config, **kwargs):
        self.calls.append(("config", config))

    def add_scalar(self, name, value, step=0, **kwargs):
        self.calls.append(("scalar", name, value, step))

    def add_image(self, name, image, step=0, **kwargs):
        self.calls.append(("image", name, image, step))

    def add_graph(self, model, data_batch=None, **kwargs):
        self.calls.append(("graph", model, data_batch))

    def add_scalars(self, scalar_dict, step=0, file_path=None, **kwargs):
        self.calls.append(("scalars", scalar_dict, step, file_path))

    def close(self):
        self.closed = True


def test_backends_write_under_vis_data(tmp_path):
    visualizer = Visualizer(vis_backends=[dict(type="LocalVisBackend")], save_dir=tmp_path)
    assert list(visualizer.backends) == ["LocalVisBackend"]
    visualizer.add_scalars({"loss": 0.5}, step=2)
    visualizer.add_scalar("lr", 0.01, step=2)
    visualizer.add_config({"a": 1})
    lines = (tmp_path / "vis_data" / "scalars.json").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"loss": 0.5, "step": 2},
        {"lr": 0.01, "step": 2},
    ]
    assert (tmp_path / "vis_data" / "config.py").read_text() == "{'a': 1}"


def test_forwards_to_every_backend_and_closes_them(tmp_path):
    first, second = Recorder(tmp_path), Recorder(tmp_path)
    visualizer = Visualizer(
        vis_backends=[first, dict(type="LocalVisBackend", name="local")], save_dir=tmp_path
    )
    visualizer._vis_backends["second"] = second
    visualizer.add_scalars({"x": 1}, step=4, file_path="extra.json")
    visualizer.add_scalar("y", 2, step=5)
    for backend in (first, second):
        assert backend.calls == [("scalars", {"x": 1}, 4, "extra.json"), ("scalar", "y", 2, 5)]
    assert visualizer.get_backend("local") is not None
    assert visualizer.get_backend("missing") is None
    assert visualizer.dataset_meta is None
    visualizer.dataset_meta = {"classes": ("cat", "dog")}
    assert visualizer.dataset_meta == {"classes": ("cat", "dog")}
    visualizer.close()
    assert first.closed and second.closed


def test_only_rank_zero_records(tmp_path, monkeypatch):
    recorder = Recorder(tmp_path)
    visualizer = Visualizer(vis_backends=recorder)
    monkeypatch.setenv("RANK", "1")
    visualizer.add_scalars({"x": 1})
    visualizer.add_config({})
    assert recorder.calls == []
    monkeypatch.setenv("RANK", "0")
    visualizer.add_scalar("x", 1)
    assert recorder.calls == [("scalar", "x", 1, 0)]


def test_backend_configs_without_save_dir_are_skipped():
    with pytest.warns(UserWarning, match="no save_dir"):
        visualizer = Visualizer(vis_backends=dict(type="LocalVisBackend"))
    assert visualizer.backends == {}


def test_bad_backends(tmp_path):
    with pytest.raises(RuntimeError, match="named 'LocalVisBackend'"):  # mmengine's type too
        Visualizer(
            vis_backends=[dict(type="LocalVisBackend"), dict(type="LocalVisBackend")],
            save_dir=tmp_path,
        )
    with pytest.raises(TypeError, match=r"vis_backends\[0\]"):
        Visualizer(vis_backends=["LocalVisBackend"], save_dir=tmp_path)
    with pytest.raises(TypeError, match="vis_backends must be"):
        Visualizer(vis_backends="LocalVisBackend", save_dir=tmp_path)  # type: ignore[arg-type]


def test_instances_like_message_hub(tmp_path):
    default = Visualizer.get_current_instance()
    assert default.instance_name == "visualizer"
    built = VISUALIZERS.build(
        dict(type="Visualizer", name="exp", vis_backends=[dict(type="LocalVisBackend")]),
        default_args={"save_dir": str(tmp_path)},
    )
    assert Visualizer.get_current_instance() is built
    assert isinstance(built.get_backend("LocalVisBackend"), LocalVisBackend)
    assert Visualizer.get_instance("visualizer") is default
    assert Visualizer.get_current_instance() is default
    with isolated_instances():
        Visualizer.get_instance("inner")
    assert not Visualizer.check_instance_created("inner")


def test_add_image_sends_hwc_uint8_rgb_to_every_backend(tmp_path, monkeypatch):
    first, second = Recorder(tmp_path), Recorder(tmp_path)
    visualizer = Visualizer(vis_backends=[first])
    visualizer._vis_backends["second"] = second
    chw = torch.zeros(3, 2, 5)
    chw[2, 1, 4] = 1.0  # one blue pixel at row 1, column 4
    visualizer.add_image("sample", chw, step=3)
    for backend in (first, second):
        ((kind, name, image, step),) = backend.calls
        assert (kind, name, step) == ("image", "sample", 3)
        assert isinstance(image, np.ndarray) and image.dtype == np.uint8
        assert image.shape == (2, 5, 3)
        assert image[1, 4].tolist() == [0, 0, 255] and int(image.sum()) == 255
    with pytest.raises(ValueError, match="channel axis"):
        visualizer.add_image("bad", np.zeros((5, 6, 7)))
    monkeypatch.setenv("RANK", "1")
    visualizer.add_image("other", chw)
    visualizer.add_graph("model")
    assert len(first.calls) == 1  # rank 1 records nothing
    monkeypatch.setenv("RANK", "0")
    visualizer.add_graph("model", "batch")
    assert first.calls[-1] == ("graph", "model", "batch")


def test_local_backend_images_through_the_visualizer(tmp_path):
    visualizer = Visualizer(vis_backends=[dict(type="LocalVisBackend")], save_dir=tmp_path)
    visualizer.add_image("img", np.ones((3, 3), dtype=np.float32), step=1)
    data = (tmp_path / "vis_data" / "vis_image" / "img_1.png").read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
