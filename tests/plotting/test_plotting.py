"""Figures: each draws what mcal.metrics computes, returns its Axes and leaves matplotlib's global style alone."""

import matplotlib
import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mcal._shared.brownian import brownian_range_sf
from mcal.metrics import ecce, ecce_pvalue, ecce_std, reliability_intervals
from mcal.plotting import plot_cumulative_differences, plot_reliability_diagram, plot_score_histogram


@pytest.fixture
def sample(rng):
    p = rng.beta(2, 4, 5000)
    y = (rng.uniform(size=p.size) < np.clip(1.2 * p, 0, 1)).astype(float)
    return y, p, rng.uniform(0.5, 2.0, p.size)


def _ax():
    return Figure().add_subplot()


def test_every_plot_returns_its_axes_and_leaves_rcparams_untouched(sample):
    y, p, w = sample
    before = dict(matplotlib.rcParams)
    for draw in (
        lambda ax: plot_reliability_diagram(y, p, sample_weight=w, confidence=0.9, ax=ax),
        lambda ax: plot_score_histogram(p, sample_weight=w, ax=ax),
        lambda ax: plot_cumulative_differences(y, p, sample_weight=w, ax=ax),
    ):
        ax = _ax()
        assert draw(ax) is ax and isinstance(ax, Axes)
    assert dict(matplotlib.rcParams) == before


def test_plots_make_their_own_axes_when_none_is_given(sample):
    import matplotlib.pyplot as plt

    y, p, _ = sample
    ax = plot_cumulative_differences(y, p)
    assert isinstance(ax, Axes)
    plt.close(ax.figure)


def test_reliability_error_bars_are_the_wilson_intervals(sample):
    y, p, w = sample
    ax = plot_reliability_diagram(y, p, sample_weight=w, n_bins=8, confidence=0.9, ax=_ax())
    iv = reliability_intervals(y, p, sample_weight=w, n_bins=8, confidence=0.9)
    keep = ~iv.curve.empty
    segments = ax.containers[0].lines[2][0].get_segments()
    np.testing.assert_allclose([s[0][1] for s in segments], iv.lower[keep], rtol=1e-12)
    np.testing.assert_allclose([s[1][1] for s in segments], iv.upper[keep], rtol=1e-12)
    line = ax.lines[1]  # lines[0] is the diagonal
    np.testing.assert_allclose(line.get_ydata(), iv.curve.fraction_positive[keep])
    np.testing.assert_allclose(line.get_xdata(), iv.curve.mean_predicted[keep])


def test_reliability_diagram_without_confidence_has_no_error_bars(sample):
    y, p, _ = sample
    ax = plot_reliability_diagram(y, p, label="p", ax=_ax())
    assert ax.containers == []
    assert [line.get_label() for line in ax.lines][1:] == ["p"]


def test_score_histogram_shows_the_share_of_weight_per_bin(sample):
    _, p, w = sample
    ax = plot_score_histogram(p, sample_weight=w, n_bins=20, ax=_ax())
    data = ax.patches[0].get_data()
    counts, edges = np.histogram(p, bins=20, range=(0, 1), weights=w)
    np.testing.assert_allclose(data.values, counts / w.sum(), rtol=1e-12)
    np.testing.assert_allclose(data.edges, edges)
    assert data.values.sum() == pytest.approx(1.0)


def test_cumulative_plot_range_is_ecce_and_the_bar_is_the_five_percent_range(sample):
    y, p, w = sample
    ax = plot_cumulative_differences(y, p, sample_weight=w, max_points=500, ax=_ax())
    walk, bar = ax.lines[1], ax.lines[2]
    heights = walk.get_ydata()
    assert len(heights) <= 500
    assert heights.max() - heights.min() == pytest.approx(ecce(y, p, sample_weight=w), rel=1e-12)
    bar_height = np.ptp(bar.get_ydata())
    sigma = ecce_std(y, p, sample_weight=w)
    assert brownian_range_sf(bar_height / sigma)[0] == pytest.approx(0.05, abs=1e-8)
    assert bar_height / sigma == pytest.approx(2.4977, abs=1e-4)  # the MCGrad paper's threshold
    pvalue = ecce_pvalue(y, p, sample_weight=w)
    assert (f"p = {pvalue:.2g}" if pvalue > 0 else "p < 1e-15") in walk.get_label()


def test_cumulative_plot_label_reads_a_p_value_below_its_floor_as_below_it(rng):
    p = np.full(5000, 0.1)
    y = (rng.uniform(size=p.size) < 0.9).astype(float)  # a p-value far below 1e-15, computed as 0
    label = plot_cumulative_differences(y, p, ax=_ax()).lines[1].get_label()
    assert ecce_pvalue(y, p) == 0.0 and label.endswith("p < 1e-15"), label


def test_cumulative_plot_of_a_large_sample_draws_a_bounded_number_of_points(rng):
    p = rng.uniform(size=300_000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    ax = plot_cumulative_differences(y, p, ax=_ax())
    assert len(ax.lines[1].get_xdata()) <= 2000


@pytest.mark.parametrize(
    ("alpha", "error"), [(0, ValueError), (1, ValueError), (-0.5, ValueError), ("0.05", TypeError), (True, TypeError)]
)
def test_bad_alpha_is_rejected(alpha, error):
    with pytest.raises(error, match="alpha must be a number in \\(0, 1\\)"):
        plot_cumulative_differences([0, 1], [0.2, 0.8], alpha=alpha, ax=_ax())


@pytest.mark.parametrize(("n_bins", "error"), [(0, ValueError), (-3, ValueError), (2.5, TypeError), (True, TypeError)])
def test_histogram_rejects_bad_n_bins(n_bins, error):
    with pytest.raises(error, match="n_bins must be a positive integer"):
        plot_score_histogram([0.2, 0.8], n_bins=n_bins, ax=_ax())


def test_histogram_rejects_scores_outside_the_unit_interval():
    with pytest.raises(ValueError, match="y_prob must lie in \\[0, 1\\]"):
        plot_score_histogram([0.2, 1.8], ax=_ax())
