"""Tests of mcal.monitor: per-window metrics, the e-process drift alarm and the HTML page."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from mcal._monitoring.eprocess import INTERCEPTS, N_ALTERNATIVES, SLOPES, log_evalues, log_likelihood_ratios
from mcal._monitoring.windows import parse_times, window_starts
from mcal.metrics import ecce, ecce_pvalue, log_loss, mce, pcoc
from mcal.monitor import monitor, monitor_report
from mcal.segments import generate_segments

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def stream(rng, n_windows, rows, *, change=None, shift=0.0):
    """Scores from a Beta(1.5, 5) in ``n_windows`` numeric windows; labels calibrated, then shifted on the logit scale
    from window ``change`` on."""
    p = rng.beta(1.5, 5.0, n_windows * rows)
    t = np.repeat(np.arange(n_windows), rows).astype(float)
    drift = np.where(t >= (n_windows if change is None else change), shift, 0.0)
    y = (rng.random(p.size) < expit(logit(p) + drift)).astype(float)
    return y, p, t


def test_every_likelihood_ratio_has_mean_one_under_calibration(rng):
    p = np.concatenate([rng.uniform(0.001, 0.999, 50), [1e-9, 1 - 1e-9]])
    for pi in p:  # E[LR] = p LR(1) + (1 - p) LR(0) = q + (1 - q) = 1 for each alternative
        one = np.exp(log_likelihood_ratios(np.array([1.0]), np.array([pi]), np.array([1.0])))
        zero = np.exp(log_likelihood_ratios(np.array([0.0]), np.array([pi]), np.array([1.0])))
        np.testing.assert_allclose(pi * one + (1 - pi) * zero, 1.0, rtol=1e-9)


def test_likelihood_ratio_of_one_row_matches_the_recalibrated_probability():
    p, j = 0.2, 3
    q = expit(INTERCEPTS[j] + SLOPES[j] * logit(p))
    got = log_likelihood_ratios(np.array([1.0, 0.0]), np.array([p, p]), np.array([1.0, 2.0]))[j]
    assert got == pytest.approx(np.log(q / p) + 2 * np.log((1 - q) / (1 - p)), rel=1e-12)


def test_scores_of_zero_or_one_are_not_bet_on():
    out = log_likelihood_ratios(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.ones(2))
    np.testing.assert_array_equal(out, np.zeros(N_ALTERNATIVES))


def test_evalue_starts_from_the_mean_of_the_first_window_ratios():
    sums = np.linspace(-1, 1, N_ALTERNATIVES)[None, :]  # one window: the fixed share changes nothing yet
    assert np.exp(log_evalues(sums))[0] == pytest.approx(np.mean(np.exp(sums)), rel=1e-12)


def test_per_window_metrics_equal_the_metrics_on_the_window_rows(rng):
    y, p, t = stream(rng, 4, 300, change=2, shift=0.5)
    X = pd.DataFrame({"a": rng.integers(0, 3, p.size), "b": rng.normal(size=p.size)})
    result = monitor(y, p, t, window=1, X=X)
    segments = generate_segments(X)
    for k, row in result.table.iterrows():
        rows = t == k
        assert row["n_samples"] == rows.sum()
        assert row["log_loss"] == pytest.approx(log_loss(y[rows], p[rows]), rel=1e-10)
        assert row["ecce"] == pytest.approx(ecce(y[rows], p[rows]), rel=1e-12)
        assert row["ecce_pvalue"] == pytest.approx(ecce_pvalue(y[rows], p[rows]), rel=1e-9)
        assert row["pcoc"] == pytest.approx(pcoc(y[rows], p[rows]), rel=1e-12)
        window_mce = mce(y[rows], p[rows], segments=segments.apply(X[rows].reset_index(drop=True)))
        assert row["mce_sigma"] == pytest.approx(window_mce.mce_sigma, rel=1e-12)
        assert row["mce_pvalue_adjusted"] == pytest.approx(window_mce.pvalue_adjusted, rel=1e-12)


def test_intervals_are_the_normal_intervals_of_hand_computed_standard_errors():
    y = np.array([1.0, 0.0, 0.0, 1.0])
    p = np.array([0.8, 0.3, 0.4, 0.6])
    table = monitor(y, p, np.zeros(4), window=1, confidence_level=0.9).table
    loss = -np.log([0.8, 0.7, 0.6, 0.6])
    se_loss = np.sqrt(np.sum((loss - loss.mean()) ** 2)) / 4
    ratio = p.sum() / y.sum()
    se_pcoc = np.sqrt(np.sum((p - ratio * y) ** 2)) / y.sum()
    z = 1.6448536269514722
    assert table["log_loss_low"][0] == pytest.approx(loss.mean() - z * se_loss, rel=1e-12)
    assert table["log_loss_high"][0] == pytest.approx(loss.mean() + z * se_loss, rel=1e-12)
    assert table["pcoc_low"][0] == pytest.approx(ratio - z * se_pcoc, rel=1e-12)
    assert table["pcoc_high"][0] == pytest.approx(ratio + z * se_pcoc, rel=1e-12)


def test_weight_k_equals_k_copies(rng):
    y, p, t = stream(rng, 3, 100)
    w = rng.integers(1, 4, p.size).astype(float)
    reps = w.astype(int)
    weighted = monitor(y, p, t, window=1, sample_weight=w).table
    copied = monitor(np.repeat(y, reps), np.repeat(p, reps), np.repeat(t, reps), window=1).table
    # not ecce_sigma_scale: sigma of weighted rows is sqrt(sum w^2 p (1 - p)) / W (MCGrad paper), not that of copies
    columns = ["weight", "log_loss", "ecce", "pcoc", "evalue"]
    np.testing.assert_allclose(weighted[columns], copied[columns], rtol=1e-9)


def test_row_order_changes_nothing(rng):
    y, p, t = stream(rng, 5, 200, change=2, shift=0.4)
    order = rng.permutation(p.size)
    a = monitor(y, p, t, window=1).table
    b = monitor(y[order], p[order], t[order], window=1).table
    pd.testing.assert_frame_equal(a, b, rtol=1e-10)


@pytest.mark.slow
def test_false_alarm_rate_stays_below_alpha_on_calibrated_streams(rng):
    """60 calibrated streams of 30 windows: the e-process may fire on at most alpha of them (Ville); observed 0-2."""
    fired = [monitor(*stream(rng, 30, 100), window=1).alarm for _ in range(60)]
    assert np.mean(fired) <= 0.05


def test_alarm_fires_within_three_windows_of_a_planted_shift(rng):
    """A logit shift of 0.5 from window 20 of 500 rows: the alarm fires at windows 20-22, never before."""
    for _ in range(5):
        result = monitor(*stream(rng, 30, 500, change=20, shift=0.5), window=1)
        assert 20 <= result.alarm_window <= 22


@pytest.mark.slow  # a benchmark's quick mode
def test_quick_benchmark_bounds_false_alarms_and_detects_drifts():
    folders = [str(BENCH / "monitor"), str(BENCH / "common")]
    sys.path[:0] = folders
    try:
        bench = importlib.import_module("monitor_drift")
    finally:
        for folder in folders:
            sys.path.remove(folder)
    null, drifts = bench.run(quick=True)
    assert null["eprocess_false_alarm_rate"] <= null["alpha"] < null["naive_ecce_false_alarm_rate"]
    assert all(row["detected"] >= 0.9 and row["p90_delay"] <= 12 for row in drifts)


def test_windows_of_datetimes_are_days_from_the_epoch_in_utc():
    times = pd.to_datetime(["2024-03-01 23:30", "2024-03-02 00:10", "2024-03-01 01:00"]).tz_localize("Europe/Zurich")
    starts = window_starts(times, "1D")  # 23:30 and 00:10 in Zurich are 22:30 and 23:10 UTC; 01:00 is 00:00 UTC
    np.testing.assert_array_equal(starts, np.array(["2024-03-01", "2024-03-01", "2024-03-01"], dtype="datetime64[ns]"))
    six_hours = window_starts(pd.Series(["2024-03-01 05:00", "2024-03-01 07:00"]), "6h")
    assert six_hours[1] == np.datetime64("2024-03-01T06:00")


def test_iso_8601_text_in_mixed_precision_reads_as_the_same_datetimes():
    text = ["2026-01-01T00:03:11", "2026-01-01T00:03:11.5", "2026-01-01", "2026-01-01T23:59:59.999999+00:00"]
    expected = [pd.Timestamp(2026, 1, 1, 0, 3, 11), pd.Timestamp(2026, 1, 1, 0, 3, 11, 500000),
                pd.Timestamp(2026, 1, 1), pd.Timestamp(2026, 1, 1, 23, 59, 59, 999999)]  # fmt: skip
    parsed = parse_times(text)
    assert parsed.dtype == "datetime64[ns]" and (parsed == expected).all()
    np.testing.assert_array_equal(window_starts(text, "1h"), np.array(["2026-01-01T00", "2026-01-01T00",
                                                                       "2026-01-01T00", "2026-01-01T23"],
                                                                      dtype="datetime64[ns]"))  # fmt: skip
    # one format that is not ISO 8601 is still read, as pandas infers it from the first value
    assert parse_times(["03/04/2024 10:00", "03/05/2024 11:00"])[1] == pd.Timestamp("2024-03-05 11:00")


def test_windows_of_numbers_are_multiples_of_the_window():
    np.testing.assert_array_equal(window_starts([0.5, 2.9, -0.1, 7.0], 2.5), [0.0, 2.5, -2.5, 5.0])


@pytest.mark.parametrize(
    ("times", "window", "error", "match"),
    [
        (["2024-01-01", None], "1D", ValueError, "times must not be missing; got 1 missing"),
        (["2024-01-01"], "1M", ValueError, "window must be a fixed length"),
        (["2024-01-01"], "-1D", ValueError, "window must be a positive length"),
        (["2024-01-01"], 3, TypeError, "window must be a timedelta string"),
        ([1.0, 2.0], "1D", TypeError, "window must be a positive number for numeric times"),
        ([1.0, 2.0], 0.0, ValueError, "window must be a positive finite number"),
        ([1.0, np.nan], 1.0, ValueError, "times must be finite"),
        ([b"x", b"y"], "1D", TypeError, "times must be datetimes or numbers"),
        (["2024-01-01"], "5", ValueError, "window must be a length with a unit such as '1D' or '6h' for datetime "
         "times; got '5'"),
        (["2024-01-01T00:00", "2024-01-01T00:00:01.5", "soon", "later"], "1D", ValueError,
         r"times must be datetimes, numbers or dates as text \(ISO 8601 such as 2026-01-01T00:03:11.5\); got 'soon' "
         "at index 2"),
    ],
)  # fmt: skip
def test_bad_times_or_window_are_clear_errors(times, window, error, match):
    with pytest.raises(error, match=match):
        window_starts(times, window)


def test_bad_inputs_name_the_argument(rng):
    y, p, t = stream(rng, 2, 10)
    with pytest.raises(ValueError, match="same number of samples"):
        monitor(y, p, t[:-1], window=1)
    with pytest.raises(ValueError, match="alpha must be a number in"):
        monitor(y, p, t, window=1, alpha=1.0)
    with pytest.raises(ValueError, match="X must hold the segment features"):
        monitor(y, p, t, window=1, segments=generate_segments(pd.DataFrame({"a": np.arange(p.size) % 2})))


def test_a_window_without_positives_has_an_undefined_pcoc_and_other_metrics():
    table = monitor([0, 0, 1, 0], [0.2, 0.3, 0.4, 0.5], [0, 0, 1, 1], window=1).table
    assert np.isnan(table["pcoc"][0]) and np.isfinite(table["ecce"][0]) and table["pcoc"][1] == pytest.approx(0.9)


def test_report_is_self_contained_with_one_figure_per_metric(rng, tmp_path):
    y, p, t = stream(rng, 6, 200, change=3, shift=1.0)
    X = pd.DataFrame({"a": rng.integers(0, 2, p.size)})
    result = monitor(y, p, pd.Timestamp("2024-01-01") + pd.to_timedelta(t, unit="D"), X=X)
    path = monitor_report(result, tmp_path / "m.html", title="Daily <scores>")
    html = path.read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == 5  # log loss, ECCE, PCOC, MCE, e-process
    assert "Daily &lt;scores&gt;" in html and "http" not in html.replace("http-equiv", "")
    assert result.alarm and "fired in the window starting 2024-01-0" in html


def test_report_leaves_no_file_when_drawing_fails(rng, tmp_path, monkeypatch):
    import matplotlib.figure

    result = monitor(*stream(rng, 2, 50), window=1)
    out = tmp_path / "m.html"
    out.write_text("old")

    def fail(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        monitor_report(result, out)
    assert out.read_text() == "old" and [f.name for f in tmp_path.iterdir()] == ["m.html"]


def test_a_pyarrow_table_of_features_gives_the_mce_of_the_pandas_frame(rng):
    pa = pytest.importorskip("pyarrow")
    y, p, t = stream(rng, 3, 200)
    X = pd.DataFrame({"a": rng.integers(0, 3, p.size).astype(str), "b": rng.normal(size=p.size)})
    expected = monitor(y, p, t, window=1, X=X).table["mce_sigma"]
    got = monitor(y, p, t, window=1, X=pa.Table.from_pandas(X)).table["mce_sigma"]
    pd.testing.assert_series_equal(got, expected)


def test_intervals_cover_the_true_values_at_about_the_nominal_rate():
    """400 calibrated windows of 200 rows: the 95% intervals hold PCOC = 1 and the expected log loss (the mean
    entropy of the scores) in 92-98% of them (observed 95.0% and 94.0% with this seed)."""
    rng = np.random.default_rng(1)
    y, p, t = stream(rng, 400, 200)
    table = monitor(y, p, t, window=1).table
    q = rng.beta(1.5, 5.0, 2_000_000)
    entropy = float(np.mean(-(q * np.log(q) + (1 - q) * np.log1p(-q))))
    assert 0.92 <= np.mean((table["pcoc_low"] <= 1) & (table["pcoc_high"] >= 1)) <= 0.98
    assert 0.92 <= np.mean((table["log_loss_low"] <= entropy) & (table["log_loss_high"] >= entropy)) <= 0.98


def test_ecce_sigma_and_mce_get_bootstrap_intervals_in_every_window(rng):
    y, p, t = stream(rng, 4, 300, change=2, shift=1.5)
    X = pd.DataFrame({"a": rng.integers(0, 3, p.size)})
    table = monitor(y, p, t, window=1, X=X, n_resamples=100).table
    for name in ("ecce_sigma_scale", "mce_sigma"):
        low, high = table[f"{name}_low"].to_numpy(), table[f"{name}_high"].to_numpy()
        assert np.isfinite(low).all() and (low < high).all()
        # the drifted windows (2, 3) lie far from the calibrated ones (0, 1): their intervals do not meet
        assert low[2:].min() > high[:2].max()
    # the interval is mcal.metrics.bootstrap of the window's rows (in score order), seed 0, 100 resamples, basic
    # (bias-corrected: benchmarks/results/bootstrap_intervals.md)
    from mcal.metrics import bootstrap, ecce_sigma

    rows = np.flatnonzero(t == 0)
    rows = rows[np.lexsort((np.ones(rows.size), y[rows], p[rows]))]
    with pytest.warns(FutureWarning):
        expected = bootstrap(ecce_sigma, y[rows], p[rows], n_resamples=100, method="basic", random_state=0)
    assert (table["ecce_sigma_scale_low"][0], table["ecce_sigma_scale_high"][0]) == pytest.approx(
        (expected.low, expected.high), rel=1e-12
    )


def test_no_resamples_leave_the_bootstrap_intervals_undefined(rng):
    y, p, t = stream(rng, 2, 50)
    table = monitor(y, p, t, window=1, n_resamples=0).table
    assert table[["ecce_sigma_scale_low", "ecce_sigma_scale_high"]].isna().all().all()
    assert np.isfinite(table["ecce_sigma_scale"]).all()
    with pytest.raises(ValueError, match=r"n_resamples must be 0 \(no bootstrap intervals\) or an integer >= 2; got 1"):
        monitor(y, p, t, window=1, n_resamples=1)


def test_evalues_stay_finite_on_a_badly_calibrated_stream(rng, tmp_path):
    # issue 32: the e-value overflowed to inf from the 4th window on, with a numpy warning in the HTML page
    import warnings

    y, p, t = stream(rng, 12, 1500, change=0, shift=2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = monitor(y, p, t, window=1)
        monitor_report(result, tmp_path / "m.html")
    table = result.table
    log_e = log_evalues(np.stack([log_likelihood_ratios(y[t == k], p[t == k], np.ones(1500)) for k in range(12)]))
    assert log_e[-1] > 3 * np.log(1e300)  # far beyond the float range
    np.testing.assert_allclose(table["log10_evalue"], log_e / np.log(10), rtol=1e-12)
    assert np.isfinite(table["evalue"]).all() and table["evalue"].max() == 1e300
    np.testing.assert_array_equal(table["alarm"], np.logical_or.accumulate(log_e >= np.log(20)))
    assert result.alarm_window == 0.0


def test_summary_prints_the_windows_with_log10_evalues_and_the_alarm(rng):
    y, p, t = stream(rng, 6, 800, change=3, shift=1.5)
    result = monitor(y, p, t, window=1)
    lines = result.summary(width=200).splitlines()
    head = lines[0].split()
    assert head == ["window_start", "n_samples", "log_loss", "ecce_sigma_scale", "pcoc", "log10_evalue", "alarm"]
    shown = [float(line.split()[head.index("log10_evalue")]) for line in lines[1:7]]
    np.testing.assert_allclose(shown, result.table["log10_evalue"], rtol=1e-5)
    assert lines[-1] == f"drift alarm: fired in the window starting {result.alarm_window} (e-value >= 20, " \
                        "log10_evalue >= 1.3; level 0.05)"  # fmt: skip
    assert str(result) == result.summary() and max(len(line) for line in result.summary(width=60).splitlines()) <= 60
    with pytest.raises(ValueError, match="^width must"):  # textwrap's "invalid width 0 (must be > 0)" before
        result.summary(width=0)
