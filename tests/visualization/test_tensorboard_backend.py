"""TensorboardVisBackend: event files read back with TensorBoard's own reader."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
import torch
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cadence.config import Config
from cadence.registry import VISBACKENDS
from cadence.visualization import TensorboardVisBackend, Visualizer


def read_events(folder) -> EventAccumulator:
    accumulator = EventAccumulator(str(folder))
    accumulator.Reload()
    return accumulator


def points(accumulator, tag):
    return [(event.step, event.value) for event in accumulator.Scalars(tag)]


def test_nothing_is_written_until_first_use(tmp_path):
    save_dir = tmp_path / "vis_data"
    backend = TensorboardVisBackend(save_dir)
    assert not save_dir.exists()
    backend.add_scalar("lr", 0.5, step=3)
    assert len(list(save_dir.glob("events.out.tfevents.*"))) == 1
    backend.close()


def test_scalars_with_steps_are_flushed_without_close(tmp_path):
    backend = TensorboardVisBackend(tmp_path)
    backend.add_scalars({"loss": torch.tensor(0.5), "acc": np.float64(0.25)}, step=1)
    backend.add_scalars({"loss": 0.25, "epoch": 1}, step=2)
    backend.add_scalars({"loss": 0.125, "step": 7}, step=3)  # an explicit step wins
    backend.add_scalar("lr", 1e-3, step=4)
    events = read_events(tmp_path)  # the backend is still open
    assert sorted(events.Tags()["scalars"]) == ["acc", "epoch", "loss", "lr"]
    assert points(events, "loss") == [(1, 0.5), (2, 0.25), (7, 0.125)]
    assert points(events, "acc") == [(1, 0.25)]
    assert points(events, "epoch") == [(2, 1.0)]
    assert points(events, "lr") == [(4, pytest.approx(1e-3))]
    backend.close()


def test_values_that_are_not_numbers_are_skipped_with_a_warning(tmp_path):
    backend = TensorboardVisBackend(tmp_path)
    with pytest.warns(UserWarning, match="'vec' is not a single number"):
        backend.add_scalars({"vec": [1, 2], "ok": 1.0}, step=1)
    with pytest.warns(UserWarning, match="'one' is not a single number"):
        backend.add_scalar("one", [0.95])  # a list, even of one number, as in mmengine
    assert read_events(tmp_path).Tags()["scalars"] == ["ok"]
    assert backend.experiment is backend._tensorboard  # mmengine's attribute
    backend.close()


def test_config_text_and_images(tmp_path):
    backend = TensorboardVisBackend(tmp_path)
    cfg = Config({"model": {"type": "Net", "depth": 3}})
    backend.add_config(cfg)
    image = np.zeros((4, 5, 3), dtype=np.uint8)
    image[0, 0] = [255, 0, 0]
    backend.add_image("sample", torch.from_numpy(image).permute(2, 0, 1), step=6)
    backend.close()
    events = read_events(tmp_path)
    (text,) = events.Tensors("config/text_summary")
    assert text.tensor_proto.string_val[0].decode() == f"```python\n{cfg.pretty_text}\n```"
    (stored,) = events.Images("sample")
    assert stored.step == 6 and (stored.width, stored.height) == (5, 4)
    with Image.open(io.BytesIO(stored.encoded_image_string)) as png:
        assert np.array_equal(np.asarray(png.convert("RGB")), image)


def test_close_then_write_opens_a_new_file_and_experiment_is_the_writer(tmp_path):
    backend = VISBACKENDS.build(dict(type="TensorboardVisBackend", save_dir=str(tmp_path)))
    writer = backend.experiment
    assert type(writer).__name__ == "SummaryWriter" and writer.log_dir == str(tmp_path)
    backend.add_scalar("a", 1.0, step=1)
    backend.close()
    backend.close()  # closing twice is harmless
    backend.add_scalar("a", 2.0, step=2)
    backend.close()
    assert points(read_events(tmp_path), "a") == [(1, 1.0), (2, 2.0)]


def test_visualizer_puts_event_files_beside_scalars_json(tmp_path):
    visualizer = Visualizer(
        vis_backends=[dict(type="LocalVisBackend"), dict(type="TensorboardVisBackend")],
        save_dir=tmp_path,
    )
    visualizer.add_scalars({"loss": 2.0}, step=5)
    data_dir = tmp_path / "vis_data"
    assert (data_dir / "scalars.json").is_file()
    assert points(read_events(data_dir), "loss") == [(5, 2.0)]
    visualizer.close()


def test_missing_tensorboard_names_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    backend = TensorboardVisBackend(tmp_path / "tb")
    with pytest.raises(ImportError, match=r"pip install tensorboard.*cadence\[tensorboard\]"):
        backend.add_scalar("x", 1.0)
    assert not (tmp_path / "tb").exists()
    with pytest.raises(TypeError, match="log_dir"):
        TensorboardVisBackend(tmp_path, log_dir="elsewhere")
