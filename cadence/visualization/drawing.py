"""Drawing on an image with matplotlib's Agg canvas (no OpenCV, no display).

:class:`DrawingMixin` gives :class:`~cadence.visualization.Visualizer` mmengine's
drawing API: ``set_image``, then any chain of ``draw_*`` calls, then ``get_image``
for the RGB result. matplotlib is imported when the first image is set.
"""

from __future__ import annotations

import warnings
from typing import Any

from .utils import (
    array_or_tensor,
    blend,
    check_type,
    check_type_and_length,
    color_str2rgb,
    color_val_matplotlib,
    convert_overlay_heatmap,
    img_from_canvas,
    tensor2ndarray,
    value2list,
)

Number = int | float


class DrawingMixin:
    """``set_image``/``get_image`` and the ``draw_*`` methods (each returns ``self``).

    Coordinates are pixels, x to the right and y down, as numpy arrays or tensors.
    Colours are matplotlib names (``'g'``, ``'red'``, ``'#ff0000'``) or RGB tuples
    in 0..255, one for all shapes or a list with one per shape. Shapes that reach
    outside the image are drawn, with a ``UserWarning``.

    Args:
        fig_save_cfg: keyword arguments of the matplotlib ``Figure`` drawn on.
        fig_show_cfg: keyword arguments of the figure :meth:`show` opens.
    """

    _image: Any = None
    width: int
    height: int

    def _init_drawing(
        self, fig_save_cfg: dict[str, Any] | None, fig_show_cfg: dict[str, Any] | None
    ) -> None:
        self.fig_save_cfg = dict(frameon=False) if fig_save_cfg is None else dict(fig_save_cfg)
        self.fig_show_cfg = dict(frameon=False) if fig_show_cfg is None else dict(fig_show_cfg)
        self._canvas: tuple[Any, Any, Any] | None = None

    def _figure(self) -> tuple[Any, Any, Any]:
        """(canvas, figure, axes) of the drawing, created on first use."""
        if getattr(self, "_canvas", None) is None:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure

            figure = Figure(**getattr(self, "fig_save_cfg", {"frameon": False}))
            axes = figure.add_subplot()
            axes.axis(False)
            figure.subplots_adjust(left=0, right=1, bottom=0, top=1)
            self._canvas = (FigureCanvasAgg(figure), figure, axes)
        assert self._canvas is not None
        return self._canvas

    @property
    def fig_save_canvas(self) -> Any:
        """The Agg canvas that renders the drawing."""
        return self._figure()[0]

    @property
    def fig_save(self) -> Any:
        """The matplotlib ``Figure`` drawn on."""
        return self._figure()[1]

    @property
    def ax_save(self) -> Any:
        """The ``Axes`` drawn on (pixel coordinates once an image is set)."""
        return self._figure()[2]

    @property
    def dpi(self) -> float:
        """Dots per inch of the figure (the image keeps its size in pixels)."""
        return float(self.fig_save.get_dpi())

    def set_image(self, image: Any) -> None:
        """Start drawing on ``image`` (an RGB array, HxWx3; converted to uint8)."""
        import numpy as np

        assert image is not None, "set_image needs an image, got None"
        image = np.asarray(tensor2ndarray(image)).astype("uint8")
        self._image = image
        self.width, self.height = int(image.shape[1]), int(image.shape[0])
        self._default_font_size = max(np.sqrt(self.height * self.width) // 90, 10)
        canvas, figure, axes = self._figure()
        # a little more than the size, so that matplotlib's rounding keeps every pixel
        figure.set_size_inches((self.width + 1e-2) / self.dpi, (self.height + 1e-2) / self.dpi)
        axes.cla()
        axes.axis(False)
        axes.imshow(image, extent=(0, self.width, self.height, 0), interpolation="none")

    def get_image(self) -> Any:
        """The drawn image: an RGB uint8 array of the size of the image set."""
        self._require_image()
        return img_from_canvas(self.fig_save_canvas)

    def _require_image(self) -> None:
        assert self._image is not None, "Please set image using `set_image`"

    def _inside(self, points: Any) -> bool:
        """Whether every ``[..., (x, y)]`` point lies inside the image."""
        x, y = points[..., 0], points[..., 1]
        return bool((x >= 0).all() and (x < self.width).all() and
                    (y >= 0).all() and (y < self.height).all())  # fmt: skip

    def _warn_outside(self, points: Any, what: str, inside: bool | None = None) -> None:
        """Warn that a ``what`` reaches outside the image (``inside`` given, or computed)."""
        if not (self._inside(points) if inside is None else inside):
            warnings.warn(
                f"Warning: The {what} is out of bounds, the drawn {what} may not be in the image",
                UserWarning,
                stacklevel=3,
            )

    def _clamp_widths(self, line_widths: Any, count: int) -> list[float]:
        """Line widths kept within [1, font size / 4], as mmengine draws them."""
        widths = value2list(line_widths, (int, float), count)
        return [min(max(width, 1), self._default_font_size / 4) for width in widths]

    def draw_points(
        self,
        positions: Any,
        colors: Any = "g",
        marker: str | None = None,
        sizes: Any = None,
    ) -> DrawingMixin:
        """Draw points at ``positions`` ((N, 2) or (2,)); ``sizes`` in points^2."""
        self._require_image()
        check_type("positions", positions, array_or_tensor())
        positions = tensor2ndarray(positions)
        if positions.ndim == 1:
            positions = positions[None]
        assert positions.shape[-1] == 2, (
            f"The shape of `positions` should be (N, 2), but got {positions.shape}"
        )
        color = color_val_matplotlib(colors)
        color = [color] if isinstance(color, tuple) else color  # one RGB, not values to map
        self.ax_save.scatter(positions[:, 0], positions[:, 1], c=color,
                             s=tensor2ndarray(sizes), marker=marker)  # fmt: skip
        return self

    def draw_texts(
        self,
        texts: str | list[str],
        positions: Any,
        font_sizes: Number | list[Number] | None = None,
        colors: Any = "g",
        vertical_alignments: str | list[str] = "top",
        horizontal_alignments: str | list[str] = "left",
        font_families: str | list[str] = "sans-serif",
        bboxes: dict[str, Any] | list[dict[str, Any]] | None = None,
        font_properties: Any = None,
    ) -> DrawingMixin:
        """Draw ``texts`` with their anchor at ``positions`` ((N, 2)).

        Every style argument is one value for all texts or a list with one per
        text; ``font_sizes`` defaults to ``max(sqrt(H * W) // 90, 10)``, and
        ``bboxes`` are matplotlib ``FancyBboxPatch`` settings.
        """
        from matplotlib.font_manager import FontProperties

        self._require_image()
        check_type("texts", texts, (str, list))
        texts = [texts] if isinstance(texts, str) else texts
        count = len(texts)
        check_type("positions", positions, array_or_tensor())
        positions = tensor2ndarray(positions)
        if positions.ndim == 1:
            positions = positions[None]
        assert positions.shape == (count, 2), (
            f"`positions` should have the shape of ({count}, 2), but got {positions.shape}"
        )
        self._warn_outside(positions, "text")
        if font_sizes is None:
            font_sizes = self._default_font_size
        styles: dict[str, list[Any]] = {}
        for name, value, single, valid in (
            ("font_sizes", font_sizes, (int, float), (int, float, list)),
            ("colors", colors, (str, tuple), (str, tuple, list)),
            ("vertical_alignments", vertical_alignments, str, (str, list)),
            ("horizontal_alignments", horizontal_alignments, str, (str, list)),
            ("font_families", font_families, str, (str, list)),
            ("font_properties", font_properties, FontProperties, (FontProperties, list)),
            ("bboxes", bboxes, dict, (dict, list)),
        ):
            if value is None:
                styles[name] = [None] * count
                continue
            check_type_and_length(name, value, valid, count)
            styles[name] = value2list(value, single, count)
        styles["colors"] = color_val_matplotlib(styles["colors"])
        for i, (x, y) in enumerate(positions.tolist()):
            self.ax_save.text(
                x, y, texts[i], size=styles["font_sizes"][i], bbox=styles["bboxes"][i],
                verticalalignment=styles["vertical_alignments"][i],
                horizontalalignment=styles["horizontal_alignments"][i],
                family=styles["font_families"][i], fontproperties=styles["font_properties"][i],
                color=styles["colors"][i],
            )  # fmt: skip
        return self

    def draw_lines(
        self,
        x_datas: Any,
        y_datas: Any,
        colors: Any = "g",
        line_styles: str | list[str] = "-",
        line_widths: Number | list[Number] = 2,
    ) -> DrawingMixin:
        """Draw segments from ``(x_datas[i, 0], y_datas[i, 0])`` to
        ``(x_datas[i, 1], y_datas[i, 1])``; shapes (N, 2) or (2,)."""
        import numpy as np
        from matplotlib.collections import LineCollection

        self._require_image()
        check_type("x_datas", x_datas, array_or_tensor())
        check_type("y_datas", y_datas, array_or_tensor())
        x_datas, y_datas = tensor2ndarray(x_datas), tensor2ndarray(y_datas)
        assert x_datas.shape == y_datas.shape, "`x_datas` and `y_datas` should have the same shape"
        assert x_datas.shape[-1] == 2, (
            f"The shape of `x_datas` should be (N, 2), but got {x_datas.shape}"
        )
        lines = np.concatenate((x_datas.reshape(-1, 2, 1), y_datas.reshape(-1, 2, 1)), axis=-1)
        self._warn_outside(lines, "line")
        collection = LineCollection(lines.tolist(), colors=color_val_matplotlib(colors),
                                    linestyles=line_styles, linewidths=line_widths)  # fmt: skip
        self.ax_save.add_collection(collection)
        return self

    def draw_circles(
        self,
        center: Any,
        radius: Any,
        edge_colors: Any = "g",
        line_styles: str | list[str] = "-",
        line_widths: Number | list[Number] = 2,
        face_colors: Any = "none",
        alpha: Number = 0.8,
    ) -> DrawingMixin:
        """Draw circles with centres ``center`` ((N, 2) or (2,)) and radii ``radius`` (N,)."""
        import numpy as np
        from matplotlib.collections import PatchCollection
        from matplotlib.patches import Circle

        self._require_image()
        check_type("center", center, array_or_tensor())
        check_type("radius", radius, array_or_tensor())
        center, radius = tensor2ndarray(center), np.asarray(tensor2ndarray(radius)).reshape(-1)
        if center.ndim == 1:
            center = center[None]
        assert center.shape == (radius.shape[0], 2), (
            f"The shape of `center` should be (radius.shape, 2), but got {center.shape}"
        )
        reach = np.tile(radius.reshape(-1, 1), (1, 2))
        inside = self._inside(center - reach) and self._inside(center + reach)
        self._warn_outside(center, "circle", inside)
        circles = [Circle(tuple(c), r) for c, r in zip(center.tolist(), radius.tolist())]
        collection = PatchCollection(
            circles, alpha=alpha, facecolors=color_val_matplotlib(face_colors),
            edgecolors=color_val_matplotlib(edge_colors), linestyles=line_styles,
            linewidths=self._clamp_widths(line_widths, len(circles)),
        )  # fmt: skip
        self.ax_save.add_collection(collection)
        return self

    def draw_bboxes(
        self,
        bboxes: Any,
        edge_colors: Any = "g",
        line_styles: str | list[str] = "-",
        line_widths: Number | list[Number] = 2,
        face_colors: Any = "none",
        alpha: Number = 0.8,
    ) -> DrawingMixin:
        """Draw boxes ``(x1, y1, x2, y2)`` ((N, 4) or (4,)); x1 <= x2 and y1 <= y2."""
        import numpy as np

        self._require_image()
        check_type("bboxes", bboxes, array_or_tensor())
        bboxes = tensor2ndarray(bboxes)
        if bboxes.ndim == 1:
            bboxes = bboxes[None]
        assert bboxes.shape[-1] == 4, (
            f"The shape of `bboxes` should be (N, 4), but got {bboxes.shape}"
        )
        assert (bboxes[:, 0] <= bboxes[:, 2]).all() and (bboxes[:, 1] <= bboxes[:, 3]).all(), (
            "each box must be (x1, y1, x2, y2) with x1 <= x2 and y1 <= y2"
        )
        self._warn_outside(bboxes.reshape(-1, 2, 2), "bbox")
        x1, y1, x2, y2 = bboxes[:, 0], bboxes[:, 1], bboxes[:, 2], bboxes[:, 3]
        corners = np.stack((x1, y1, x2, y1, x2, y2, x1, y2), axis=-1).reshape(-1, 4, 2)
        return self.draw_polygons(list(corners), edge_colors=edge_colors, line_styles=line_styles,
                                  line_widths=line_widths, face_colors=face_colors,
                                  alpha=alpha)  # fmt: skip

    def draw_polygons(
        self,
        polygons: Any,
        edge_colors: Any = "g",
        line_styles: str | list[str] = "-",
        line_widths: Number | list[Number] = 2,
        face_colors: Any = "none",
        alpha: Number = 0.8,
    ) -> DrawingMixin:
        """Draw polygons: one (M, 2) array of corners, or a list of them."""
        from matplotlib.collections import PolyCollection

        self._require_image()
        check_type("polygons", polygons, (list, *array_or_tensor()))
        polygons = [polygons] if not isinstance(polygons, list) else polygons
        for polygon in polygons:
            assert polygon.shape[1] == 2, (
                f"The shape of each polygon in `polygons` should be (M, 2), but got {polygon.shape}"
            )
        polygons = [tensor2ndarray(polygon) for polygon in polygons]
        for polygon in polygons:
            self._warn_outside(polygon, "polygon")
        collection = PolyCollection(
            polygons, alpha=alpha, facecolor=color_val_matplotlib(face_colors),
            edgecolors=color_val_matplotlib(edge_colors), linestyles=line_styles,
            linewidths=self._clamp_widths(line_widths, len(polygons)),
        )  # fmt: skip
        self.ax_save.add_collection(collection)
        return self

    def draw_binary_masks(
        self,
        binary_masks: Any,
        colors: Any = "g",
        alphas: Number | list[Number] = 0.8,
    ) -> DrawingMixin:
        """Tint the pixels of boolean masks ((N, H, W) or (H, W), the image's size):
        each becomes ``pixel * (1 - alpha) + color * alpha``."""
        import numpy as np

        self._require_image()
        check_type("binary_masks", binary_masks, array_or_tensor())
        masks = tensor2ndarray(binary_masks)
        assert masks.dtype == np.bool_, (
            f"The dtype of binary_masks should be np.bool_, but got {masks.dtype}"
        )
        if masks.ndim == 2:
            masks = masks[None]
        image = self.get_image()
        assert image.shape[:2] == masks.shape[1:], (
            "`binary_marks` must have the same shape with image"
        )
        count = masks.shape[0]
        check_type_and_length("colors", colors, (str, tuple, list), count)
        rgbs = [color_str2rgb(color) for color in value2list(colors, (str, tuple), count)]
        check_type_and_length("alphas", alphas, (int, float, list), count)
        for mask, rgb, alpha in zip(masks, rgbs, value2list(alphas, (int, float), count)):
            tinted = image.copy()
            tinted[mask] = rgb
            image = blend(image, tinted, alpha)
        self.ax_save.imshow(image, extent=(0, self.width, self.height, 0),
                            interpolation="nearest")  # fmt: skip
        return self

    @staticmethod
    def draw_featmap(
        featmap: Any,
        overlaid_image: Any = None,
        channel_reduction: str | None = "squeeze_mean",
        topk: int = 20,
        arrangement: tuple[int, int] = (4, 5),
        resize_shape: tuple[int, int] | None = None,
        alpha: float = 0.5,
    ) -> Any:
        """A feature map ((C, H, W) tensor) as an RGB jet convert_overlay_heatmap, blended onto
        ``overlaid_image`` (RGB or gray) when given.

        ``channel_reduction``: ``'squeeze_mean'`` (mean of the channels) or
        ``'select_max'`` (the channel with the largest sum). With None, ``topk > 0``
        draws the ``topk`` channels with the largest sums in an ``arrangement``
        (rows, cols) grid, ``topk <= 0`` needs 1 or 3 channels. ``resize_shape``
        (H, W) resizes map and image; otherwise the map is resized to the image.
        """
        import numpy as np
        import torch
        import torch.nn.functional as F

        assert isinstance(featmap, torch.Tensor), (
            f"`featmap` should be torch.Tensor, but got {type(featmap)}"
        )
        assert featmap.ndim == 3, f"Input dimension must be 3, but got {featmap.ndim}"
        featmap = featmap.detach().cpu().float()
        image = None if overlaid_image is None else np.asarray(tensor2ndarray(overlaid_image))
        if image is not None and image.ndim == 2:
            image = np.repeat(image[:, :, None], 3, axis=2)
        if image is not None and tuple(image.shape[:2]) != tuple(featmap.shape[1:]):
            warnings.warn(
                f"Since the spatial dimensions of overlaid_image: {image.shape[:2]} and "
                f"featmap: {tuple(featmap.shape[1:])} are not same, the feature map will be "
                "interpolated. This may cause mismatch problems !",
                stacklevel=2,
            )
            if resize_shape is None:
                featmap = _resize(featmap, tuple(image.shape[:2]), F)
        if resize_shape is not None:
            featmap = _resize(featmap, tuple(resize_shape), F)
            if image is not None:
                chw = torch.from_numpy(image.astype(np.float32)).permute(2, 0, 1)
                resized = _resize(chw, tuple(resize_shape), F).permute(1, 2, 0).numpy()
                image = np.clip(np.rint(resized), 0, 255).astype(np.uint8)
        if channel_reduction is not None:
            assert channel_reduction in ("squeeze_mean", "select_max"), (
                f'Mode only support "squeeze_mean", "select_max", but got {channel_reduction}'
            )
            if channel_reduction == "select_max":
                reduced = featmap[torch.topk(featmap.sum(dim=(1, 2)), 1).indices]
            else:
                reduced = featmap.mean(dim=0)
            return convert_overlay_heatmap(reduced, image, alpha)
        if topk <= 0:
            assert featmap.shape[0] in (1, 3), (
                "The input tensor channel dimension must be 1 or 3 when topk is less than 1, "
                f"but the channel dimension you input is {featmap.shape[0]}, you can use the "
                "channel_reduction parameter or set topk greater than 0 to solve the error"
            )
            return convert_overlay_heatmap(featmap, image, alpha)
        return _featmap_grid(featmap, image, topk, arrangement, alpha)


def _resize(chw: Any, size: tuple[int, ...], functional: Any) -> Any:
    """(C, H, W) resized bilinearly to ``size`` (H, W)."""
    return functional.interpolate(chw[None], size, mode="bilinear", align_corners=False)[0]


def _featmap_grid(
    featmap: Any, image: Any, topk: int, arrangement: tuple[int, int], alpha: float
) -> Any:
    """The ``topk`` channels with the largest sums as heatmaps in a rows x cols grid."""
    import torch
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows, cols = arrangement
    channels, height, width = featmap.shape
    assert rows * cols >= topk, (
        "The product of row and col in the `arrangement` is less than topk, please set the "
        "`arrangement` correctly"
    )
    topk = min(channels, topk)
    indices = torch.topk(featmap.sum(dim=(1, 2)), topk).indices
    figure = Figure(frameon=False)
    figure.subplots_adjust(left=0, right=1, bottom=0, top=1, wspace=0, hspace=0)
    dpi = figure.get_dpi()
    figure.set_size_inches((width * cols + 1e-2) / dpi, (height * rows + 1e-2) / dpi)
    canvas = FigureCanvasAgg(figure)
    for i in range(topk):
        axes = figure.add_subplot(rows, cols, i + 1)
        axes.axis("off")
        axes.text(2, 15, f"channel: {int(indices[i])}", fontsize=10)
        axes.imshow(convert_overlay_heatmap(featmap[indices[i]], image, alpha))
    return img_from_canvas(canvas)


__all__ = ["DrawingMixin"]
