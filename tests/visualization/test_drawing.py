"""The Visualizer's drawing API (mmengine's): set_image/get_image, draw_*, their argument
checks and out-of-bounds warnings, draw_featmap, and add_datasample in a subclass."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from cadence.registry import VISUALIZERS
from cadence.visualization import Visualizer

RED, GREEN, BLUE = (255, 0, 0), (0, 255, 0), (0, 0, 255)


def gray(height=40, width=60, value=100):
    return np.full((height, width, 3), value, dtype=np.uint8)


@pytest.fixture
def vis():
    visualizer = Visualizer(image=gray())
    return visualizer


def close(pixel, rgb, tol=30):
    return all(abs(int(a) - b) <= tol for a, b in zip(pixel, rgb))


def test_get_image_gives_back_the_image_set_pixel_for_pixel():
    image = np.random.default_rng(0).integers(0, 256, (37, 53, 3), dtype=np.uint8)
    visualizer = Visualizer()
    visualizer.set_image(image)
    assert (visualizer.width, visualizer.height) == (53, 37)
    drawn = visualizer.get_image()
    assert drawn.dtype == np.uint8 and drawn.shape == (37, 53, 3)
    np.testing.assert_array_equal(drawn, image)
    visualizer.set_image(image[:10, :20])  # a new image replaces the drawing and the size
    np.testing.assert_array_equal(visualizer.get_image(), image[:10, :20])


def test_set_image_converts_to_uint8_and_sets_the_default_font_size():
    visualizer = Visualizer(image=np.full((20, 30, 3), 7.9))
    assert visualizer.get_image()[0, 0].tolist() == [7, 7, 7]  # astype, as mmengine
    assert visualizer._default_font_size == 10  # max(sqrt(H*W) // 90, 10)


def test_drawing_needs_an_image():
    visualizer = Visualizer()
    with pytest.raises(AssertionError, match="set_image"):
        visualizer.get_image()
    with pytest.raises(AssertionError, match="set_image"):
        visualizer.draw_bboxes(np.array([0, 0, 1, 1]))


def test_bboxes_draw_their_edges_only_by_default(vis):
    assert vis.draw_bboxes(np.array([10, 10, 30, 30]), edge_colors=RED, alpha=1) is vis
    drawn = vis.get_image()
    assert close(drawn[10, 20], RED) and close(drawn[30, 20], RED) and close(drawn[20, 10], RED)
    assert drawn[20, 20].tolist() == [100, 100, 100]  # face 'none'
    assert drawn[5, 5].tolist() == [100, 100, 100]


def test_bboxes_fill_with_face_colors_and_alpha(vis):
    boxes = torch.tensor([[2.0, 2.0, 20.0, 20.0], [30.0, 5.0, 50.0, 30.0]])
    vis.draw_bboxes(boxes, edge_colors=["r", "b"], face_colors=[RED, BLUE], alpha=0.5)
    drawn = vis.get_image()
    assert close(drawn[10, 10], (178, 50, 50), tol=3)  # 100 * 0.5 + 255 * 0.5
    assert close(drawn[15, 40], (50, 50, 178), tol=3)


def test_bbox_arguments_are_checked(vis):
    with pytest.raises(TypeError, match="`bboxes` should be"):
        vis.draw_bboxes([0, 0, 1, 1])
    with pytest.raises(AssertionError, match=r"\(N, 4\)"):
        vis.draw_bboxes(np.array([[0, 0, 1]]))
    with pytest.raises(AssertionError):
        vis.draw_bboxes(np.array([5, 0, 1, 1]))  # x1 > x2
    with pytest.raises(AssertionError):
        vis.draw_bboxes(np.array([0, 0, 1, 1]), edge_colors=(300, 0, 0))
    with pytest.raises(TypeError, match="Invalid type for color"):
        vis.draw_bboxes(np.array([0, 0, 1, 1]), edge_colors=3)


@pytest.mark.parametrize(
    ("what", "draw"),
    [
        ("bbox", lambda v: v.draw_bboxes(np.array([50, 30, 70, 39]))),
        ("polygon", lambda v: v.draw_polygons(np.array([[0, 0], [-5, 10], [10, 10]]))),
        ("line", lambda v: v.draw_lines(np.array([0, 60]), np.array([5, 5]))),
        ("circle", lambda v: v.draw_circles(np.array([55, 20]), np.array([10]))),
        ("text", lambda v: v.draw_texts("x", np.array([60, 0]))),
    ],
)
def test_shapes_out_of_the_image_are_drawn_with_a_warning(vis, what, draw):
    with pytest.warns(UserWarning) as record:
        assert draw(vis) is vis
    messages = {str(w.message) for w in record}
    assert f"Warning: The {what} is out of bounds, the drawn {what} may not be in the image" in (
        messages
    )  # a box also warns as the polygon it is drawn as


def test_shapes_inside_the_image_do_not_warn(vis):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vis.draw_bboxes(np.array([0, 0, 59, 39])).draw_lines(np.array([0, 59]), np.array([5, 5]))
        vis.draw_circles(np.array([20, 20]), np.array([5])).draw_texts("x", np.array([1, 1]))
        vis.draw_points(np.array([[100, 100]]))  # points are not checked, as in mmengine


def test_lines_points_circles_and_polygons_colour_their_pixels(vis):
    vis.draw_lines(np.array([[0, 59]]), np.array([[20, 20]]), colors="b", line_widths=3)
    vis.draw_points(np.array([45.5, 8.5]), colors=GREEN, sizes=np.array([60]))
    vis.draw_circles(np.array([[10, 8]]), np.array([5]), face_colors="r", edge_colors="r",
                     alpha=1.0)  # fmt: skip
    triangle = torch.tensor([[40, 26], [58, 26], [58, 38]])
    vis.draw_polygons(triangle, edge_colors="y", face_colors=(255, 255, 0), alpha=1.0)
    drawn = vis.get_image()
    assert close(drawn[20, 30], BLUE)
    assert close(drawn[8, 45], GREEN)
    assert close(drawn[8, 10], RED)
    assert close(drawn[30, 54], (255, 255, 0))
    assert drawn[35, 42].tolist() == [100, 100, 100]  # outside the triangle


def test_texts_draw_with_their_colors_and_check_lengths(vis):
    vis.draw_texts(["AB", "CD"], np.array([[2, 2], [30, 20]]), colors=["r", BLUE], font_sizes=14)
    drawn = vis.get_image()
    top_left, lower_right = drawn[:18, :28].reshape(-1, 3), drawn[20:, 30:].reshape(-1, 3)
    assert ((top_left[:, 0] > 180) & (top_left[:, 2] < 80)).any()  # red glyph pixels
    assert ((lower_right[:, 2] > 180) & (lower_right[:, 0] < 80)).any()  # blue ones
    assert not ((lower_right[:, 0] > 180) & (lower_right[:, 2] < 80)).any()
    with pytest.raises(AssertionError, match=r"\(2, 2\)"):
        vis.draw_texts(["a", "b"], np.array([1, 1]))
    with pytest.raises(AssertionError, match="The length of colors"):
        vis.draw_texts(["a", "b"], np.array([[1, 1], [2, 2]]), colors=["r"])
    with pytest.raises(TypeError, match="`texts` should be"):
        vis.draw_texts(3, np.array([1, 1]))


def test_lines_and_polygons_check_shapes(vis):
    with pytest.raises(AssertionError, match="same shape"):
        vis.draw_lines(np.array([0, 1]), np.array([[0, 1]]))
    with pytest.raises(AssertionError, match=r"\(N, 2\)"):
        vis.draw_lines(np.array([0, 1, 2]), np.array([0, 1, 2]))
    with pytest.raises(AssertionError, match=r"\(M, 2\)"):
        vis.draw_polygons([np.zeros((4, 3))])
    with pytest.raises(AssertionError, match="radius.shape"):
        vis.draw_circles(np.array([[1, 1], [2, 2]]), np.array([1]))


def test_binary_masks_blend_their_colour_into_the_masked_pixels():
    visualizer = Visualizer(image=gray(value=100))
    mask = np.zeros((40, 60), dtype=bool)
    mask[:, :30] = True
    visualizer.draw_binary_masks(mask, colors=GREEN, alphas=0.4)
    drawn = visualizer.get_image()
    assert drawn[10, 10].tolist() == [60, 162, 60]  # 100 * 0.6 + (0, 255, 0) * 0.4
    assert drawn[10, 50].tolist() == [100, 100, 100]
    two = np.stack([mask, ~mask])
    visualizer.set_image(gray(value=0))
    visualizer.draw_binary_masks(torch.from_numpy(two), colors=["r", "b"], alphas=[1.0, 0.5])
    drawn = visualizer.get_image()
    assert drawn[0, 0].tolist() == [255, 0, 0] and drawn[0, 59].tolist() == [0, 0, 128]


def test_binary_mask_arguments_are_checked(vis):
    with pytest.raises(AssertionError, match="np.bool_"):
        vis.draw_binary_masks(np.ones((40, 60), dtype=np.uint8))
    with pytest.raises(AssertionError, match="same shape"):
        vis.draw_binary_masks(np.ones((10, 10), dtype=bool))
    with pytest.raises(AssertionError, match="length of colors"):
        vis.draw_binary_masks(np.ones((2, 40, 60), dtype=bool), colors=["r"])


def test_featmap_reductions_colour_the_strongest_pixels_dark_red():
    featmap = torch.zeros(2, 4, 5)
    featmap[0, 0, 0] = 1.0
    featmap[1, 3, 4] = 2.0  # the channel with the largest sum
    mean = Visualizer.draw_featmap(featmap)  # squeeze_mean
    assert mean.shape == (4, 5, 3) and mean.dtype == np.uint8
    assert mean[3, 4].tolist() == [128, 0, 0]  # jet's top
    assert mean[1, 1].tolist() == [0, 0, 128]  # jet's bottom
    assert mean[0, 0, 0] < 128 and mean[0, 0].tolist() != [0, 0, 128]  # in between
    chosen = Visualizer.draw_featmap(featmap, channel_reduction="select_max")
    assert chosen[3, 4].tolist() == [128, 0, 0] and chosen[0, 0].tolist() == [0, 0, 128]
    on_black = Visualizer.draw_featmap(featmap, np.zeros((4, 5), np.uint8), alpha=0.5)
    assert on_black[3, 4].tolist() == [64, 0, 0]  # gray image, blended half and half


def test_featmap_channels_resize_and_grid():
    featmap = torch.rand(6, 8, 10)
    single = Visualizer.draw_featmap(featmap[:3], channel_reduction=None, topk=0)
    assert single.shape == (8, 10, 3)
    resized = Visualizer.draw_featmap(
        featmap, np.zeros((8, 10, 3), np.uint8), resize_shape=(16, 12)
    )
    assert resized.shape == (16, 12, 3)
    with pytest.warns(UserWarning, match="will be interpolated"):
        onto = Visualizer.draw_featmap(featmap, np.zeros((4, 5, 3), np.uint8))
    assert onto.shape == (4, 5, 3)
    grid = Visualizer.draw_featmap(featmap, channel_reduction=None, topk=4, arrangement=(2, 3))
    assert grid.shape == (16, 30, 3)


def test_featmap_arguments_are_checked():
    with pytest.raises(AssertionError, match="torch.Tensor"):
        Visualizer.draw_featmap(np.zeros((1, 2, 2)))
    with pytest.raises(AssertionError, match="dimension must be 3"):
        Visualizer.draw_featmap(torch.zeros(2, 2))
    with pytest.raises(AssertionError, match="squeeze_mean"):
        Visualizer.draw_featmap(torch.zeros(1, 2, 2), channel_reduction="max")
    with pytest.raises(AssertionError, match="must be 1 or 3"):
        Visualizer.draw_featmap(torch.zeros(2, 2, 2), channel_reduction=None, topk=0)
    with pytest.raises(AssertionError, match="arrangement"):
        Visualizer.draw_featmap(torch.zeros(9, 2, 2), channel_reduction=None, arrangement=(2, 2))


class BoxVisualizer(Visualizer):
    def add_datasample(self, name, image, data_sample=None, draw_gt=True, draw_pred=True,
                       show=False, wait_time=0, step=0):  # fmt: skip
        self.set_image(image)
        if draw_gt:
            self.draw_bboxes(data_sample["gt"], edge_colors=GREEN, alpha=1.0)
        if draw_pred:
            self.draw_bboxes(data_sample["pred"], edge_colors=RED, alpha=1.0)
        self.add_image(name, self.get_image(), step)


def test_a_subclass_add_datasample_draws_and_records_a_png(tmp_path):
    from PIL import Image

    VISUALIZERS.register_module(module=BoxVisualizer)  # registries are restored after each test
    built = VISUALIZERS.build(dict(type="BoxVisualizer", name="det",
                                   vis_backends=[dict(type="LocalVisBackend")],
                                   save_dir=str(tmp_path)))  # fmt: skip
    assert Visualizer.get_current_instance() is built  # what downstream hooks look up
    sample = {"gt": np.array([5, 5, 25, 25]), "pred": np.array([30, 10, 50, 30])}
    built.add_datasample("val/img", gray(), sample, draw_gt=False, step=3)
    png = np.asarray(Image.open(tmp_path / "vis_data" / "vis_image" / "val" / "img_3.png"))
    assert png.shape == (40, 60, 3)
    assert close(png[20, 30], RED) and png[15, 5].tolist() == [100, 100, 100]  # no gt box
    assert Visualizer().add_datasample("x", gray()) is None  # the base draws nothing


def test_get_instance_of_a_subclass_is_the_current_visualizer():
    first = BoxVisualizer.get_instance("one")
    Visualizer.get_instance("plain")
    assert Visualizer.get_current_instance() is not first
    assert BoxVisualizer.get_instance("one") is first
    assert Visualizer.get_current_instance() is first


def test_show_on_a_non_interactive_backend_returns_the_figure(vis):
    import matplotlib.pyplot as plt

    figure = vis.show(win_name="sample")
    try:
        shown = figure.axes[0].images[0].get_array()
        np.testing.assert_array_equal(np.asarray(shown), gray())
    finally:
        plt.close(figure)
    with pytest.raises(ValueError, match="matplotlib"):
        vis.show(backend="cv2")
