"""Checks on a drawn matplotlib figure's artists: which texts overlap, which stick out of the page, which lines
have a single point. For the figure tests; the figure must have been drawn (``fig.canvas.draw()``)."""

from __future__ import annotations

from itertools import combinations


def _boxes(fig, renderer) -> list[tuple[str, object]]:
    """(name, window extent) of the figure's title-like texts, axis labels, tick labels and legends."""
    out = []
    for t in fig.texts:  # suptitle, fig.text
        if t.get_visible() and t.get_text():
            out.append((f"figure text {t.get_text()[:40]!r}", t.get_window_extent(renderer)))
    for k, ax in enumerate(fig.axes):
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            if t.get_visible() and t.get_text():
                out.append((f"axes {k} {t.get_text()[:40]!r}", t.get_window_extent(renderer)))
        if ax.get_legend() is not None:
            out.append((f"axes {k} legend", ax.get_legend().get_window_extent(renderer)))
    for j, lg in enumerate(fig.legends):
        out.append((f"figure legend {j}", lg.get_window_extent(renderer)))
    return out


def overlapping_texts(fig) -> list[tuple[str, str]]:
    """Pairs of titles, axis labels and legends whose bounding boxes overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = _boxes(fig, renderer)
    return [(a, b) for (a, ba), (b, bb) in combinations(boxes, 2) if ba.overlaps(bb)]


def legends_over_axes(fig) -> list[tuple[str, int]]:
    """(legend, axes index) for each figure legend that covers part of a panel."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [(f"figure legend {j}", k) for j, lg in enumerate(fig.legends) for k, ax in enumerate(fig.axes)
            if lg.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))]


def outside_page(fig) -> list[str]:
    """Titles, labels and legends that stick out of the figure (cut off when saved without bbox tight)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    return [name for name, b in _boxes(fig, renderer)
            if b.x0 < page.x0 - 1 or b.x1 > page.x1 + 1 or b.y0 < page.y0 - 1 or b.y1 > page.y1 + 1]


def single_point_lines(fig) -> list[tuple[int, str]]:
    """(axes index, label) of each drawn line that joins fewer than two finite points with a line style: a
    "curve" of one point. Markers alone (linestyle none) are fine."""
    import numpy as np

    out = []
    for k, ax in enumerate(fig.axes):
        for line in ax.get_lines():
            x, y = (np.asarray(v, float) for v in line.get_data())
            n = int((np.isfinite(x) & np.isfinite(y)).sum())
            if line.get_linestyle() not in ("None", "none", "", " ") and n < 2 and not _is_reference(line):
                out.append((k, line.get_label()))
    return out


def _is_reference(line) -> bool:
    """axhline / axvline (chance lines, points): drawn in axes coordinates on one axis, two points each."""
    return len(line.get_xdata()) == 2 or len(line.get_ydata()) == 2


def legends_over_data(fig) -> list[tuple[int, str]]:
    """(axes index, what) for each legend drawn inside a panel that covers one of the panel's data points: a
    line's vertex (its markers) or an error bar's end. Reference lines (axhline, axvline) do not count."""
    import numpy as np

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for k, ax in enumerate(fig.axes):
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        points = []
        for line in ax.get_lines():
            if not _is_reference(line):
                points.append((line.get_label(), line.get_transform().transform(line.get_xydata())))
        for coll in ax.collections:  # error bars (LineCollection), scatter offsets
            for path in coll.get_paths():
                points.append((type(coll).__name__, coll.get_transform().transform(path.vertices)))
            offsets = coll.get_offsets()
            if len(offsets) and coll.get_offset_transform() is not None:
                points.append((type(coll).__name__, coll.get_offset_transform().transform(offsets)))
        for what, xy in points:
            xy = np.asarray(xy, float).reshape(-1, 2)
            xy = xy[np.isfinite(xy).all(axis=1)]
            if any(box.contains(x, y) for x, y in xy):
                out.append((k, what))
    return out
