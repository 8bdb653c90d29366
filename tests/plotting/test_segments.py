"""Tests of the segment figures of mcal.plotting (Agg backend, set in conftest)."""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from mcal.metrics import mce
from mcal.plotting import plot_segment_errors, plot_worst_segment_curves
from mcal.segments import from_labels, generate_segments


@pytest.fixture
def sample(rng):
    n = 3000
    X = pd.DataFrame({"job": rng.choice(["admin", "tech", "other"], n), "age": rng.normal(40, 10, n)})
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < np.where(X["job"] == "admin", np.clip(p + 0.2, 0, 1), p)).astype(int)
    segs = generate_segments(X, max_depth=2)
    return y, p, segs, mce(y, p, segments=segs)


def test_segment_errors_draws_every_segment_and_numbers_the_worst(sample):
    _, _, segs, result = sample
    before = dict(matplotlib.rcParams)
    ax = plot_segment_errors(result, n_labels=3)
    try:
        assert isinstance(ax, matplotlib.axes.Axes)
        offsets = ax.collections[0].get_offsets()
        assert len(offsets) == segs.n_segments
        texts = [t.get_text() for t in ax.texts]
        assert texts == ["1", "2", "3"]  # a numbered key to the table, not overlapping descriptions
        first = ax.texts[0].xy
        assert first == (result.table["size"].iloc[0], result.table["ecce_sigma"].iloc[0])
        assert ax.get_xscale() == "log"
        assert dict(matplotlib.rcParams) == before
    finally:
        plt.close(ax.figure)


def test_segment_errors_numbers_the_given_segments_in_their_order(sample):
    _, _, _, result = sample
    chosen = result.table["segment"].iloc[[4, 0]].tolist()
    ax = plot_segment_errors(result, numbered=chosen)
    try:
        assert [t.get_text() for t in ax.texts] == ["1", "2"]
        assert ax.texts[0].xy == (result.table["size"].iloc[4], result.table["ecce_sigma"].iloc[4])
    finally:
        plt.close(ax.figure)


def test_worst_segment_curves_draw_k_labelled_curves_on_a_given_axes(sample):
    y, p, segs, result = sample
    fig, ax = plt.subplots()
    try:
        assert plot_worst_segment_curves(y, p, segments=segs, result=result, k=2, ax=ax) is ax
        labels = [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]
        assert len(labels) == 2 and labels[0].startswith("job=admin (")
    finally:
        plt.close(fig)


def test_worst_segment_curves_compute_the_result_when_missing(sample):
    y, p, segs, _ = sample
    ax = plot_worst_segment_curves(y, p, segments=segs, k=1)
    try:
        assert next(line.get_label() for line in ax.lines if not line.get_label().startswith("_")).startswith(
            "job=admin"
        )
    finally:
        plt.close(ax.figure)


def test_plot_functions_reject_bad_arguments(sample):
    y, p, segs, result = sample
    with pytest.raises(TypeError, match="MCEResult"):
        plot_segment_errors(result.table)
    with pytest.raises(ValueError, match="n_labels must be an integer >= 0; got -1$"):
        plot_segment_errors(result, n_labels=-1)
    with pytest.raises(TypeError, match="n_labels must be an integer >= 0; got 2.0 of type float$"):  # a ValueError
        plot_segment_errors(result, n_labels=2.0)
    with pytest.raises(TypeError, match="segments must be a Segments"):
        plot_worst_segment_curves(y, p, segments=np.ones((len(y), 1), dtype=bool))
    with pytest.raises(ValueError, match="k must be a positive integer"):
        plot_worst_segment_curves(y, p, segments=segs, k=0)
    with pytest.raises(ValueError, match="y_true must have 3000 rows"):
        plot_worst_segment_curves(y[:10], p[:10], segments=segs, result=result)
    other = generate_segments(pd.DataFrame({"c": np.arange(len(y)) % 2}), max_depth=1)
    with pytest.raises(ValueError, match="result must come from these"):
        plot_worst_segment_curves(y, p, segments=other, result=result)


def test_segment_descriptions_with_dollar_signs_are_drawn_as_written(rng):
    # "$\frac{x$" made matplotlib's mathtext parser raise when the figure was drawn; "$5 to $10" drew as math
    n = 400
    X = pd.DataFrame({"price": rng.choice(["$5 to $10", r"$\frac{x$"], n)})
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < p).astype(int)
    segs = generate_segments(X, max_depth=1)
    result = mce(y, p, segments=segs)
    ax = plot_segment_errors(result, n_labels=3)
    curves = plot_worst_segment_curves(y, p, segments=segs, result=result, k=3)
    try:
        ax.figure.canvas.draw()
        curves.figure.canvas.draw()
        texts = [t.get_text() for t in ax.texts] + [t.get_text() for t in curves.get_legend().get_texts()]
        assert len(texts) == 6 and not any(matplotlib.cbook.is_math_text(t) for t in texts)
    finally:
        plt.close(ax.figure)
        plt.close(curves.figure)


@pytest.mark.parametrize(("k", "error"), [(0, ValueError), (1.0, TypeError), (True, TypeError)])
def test_worst_segment_curves_refuse_a_bad_k(sample, k, error):
    y, p, segs, result = sample
    with pytest.raises(error, match="k must be a positive integer"):
        plot_worst_segment_curves(y, p, segments=segs, result=result, k=k)


def test_numbered_labels_do_not_overlap_even_where_points_crowd(rng):
    # many segments of one size and nearly one ECCE / sigma: their numbers would sit on top of each other
    n = 6000
    labels = rng.choice([f"g{k}" for k in range(12)], n)
    p = rng.uniform(0.2, 0.8, n)
    y = (rng.random(n) < p + 0.02).astype(int)
    result = mce(y, p, segments=from_labels(labels))
    ax = plot_segment_errors(result, n_labels=12)
    try:
        renderer = ax.figure.canvas.get_renderer()
        boxes = [t.get_window_extent(renderer) for t in ax.texts]
        assert len(boxes) == 12
        overlaps = [(i, j) for i in range(12) for j in range(i) if boxes[i].overlaps(boxes[j])]
        assert overlaps == []
    finally:
        plt.close(ax.figure)
