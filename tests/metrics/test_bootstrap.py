"""mcal.metrics.bootstrap and the interval tables built on it: coverage, weights, reproducibility, bad input."""

import re
import warnings
from functools import partial

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from mcal import CalibrationWarning
from mcal.metrics import (
    bootstrap,
    brier_score,
    calibration_summary,
    ecce,
    ecce_sigma,
    ece,
    f_rce,
    log_loss,
    mce,
    mce_sigma,
    roc_auc,
    segment_intervals,
    summary_intervals,
)
from mcal.metrics._bootstrap import bootstrap_metrics
from mcal.segments import generate_segments


def _calibrated(rng, n):
    p = rng.uniform(0, 1, n)
    return (rng.uniform(size=n) < p).astype(float), p


# p ~ U(0, 1), y ~ Bernoulli(p): E[(p - y)^2] = E[p (1 - p)] = 1/6. With weight 10 below p = 0.2 and 1 above:
# E[w p (1 - p)] / E[w] = (1/6 + 9 * (0.2^2 / 2 - 0.2^3 / 3)) / (1 + 9 * 0.2).
_BRIER = 1 / 6
_WEIGHTED_BRIER = (1 / 6 + 9 * (0.02 - 0.008 / 3)) / 2.8


@pytest.mark.parametrize("weighted", [False, True])
def test_percentile_interval_covers_the_population_brier_score_at_about_the_nominal_rate(rng, weighted):
    """A quick version of benchmarks/metrics/bootstrap_coverage.py: 120 data sets of 300 rows, 200 resamples each."""
    target = _WEIGHTED_BRIER if weighted else _BRIER
    covered = []
    for _ in range(120):
        y, p = _calibrated(rng, 300)
        w = np.where(p < 0.2, 10.0, 1.0) if weighted else None
        res = bootstrap(brier_score, y, p, sample_weight=w, n_resamples=200, random_state=rng)
        covered.append(res.low <= target <= res.high)
    assert 0.86 <= np.mean(covered) <= 1.0  # 0.95 nominal; a binomial sd of 0.02 over 120 data sets


def test_ignoring_the_weights_would_not_cover_the_weighted_value(rng):
    # the check above can fail: the unweighted interval misses the weighted population value
    y, p = _calibrated(rng, 5000)
    res = bootstrap(brier_score, y, p, n_resamples=200, random_state=0)
    assert not res.low <= _WEIGHTED_BRIER <= res.high


def test_same_seed_same_interval_and_estimate_is_the_metric(rng):
    y, p = _calibrated(rng, 400)
    a = bootstrap(log_loss, y, p, n_resamples=100, random_state=3)
    b = bootstrap(log_loss, y, p, n_resamples=100, random_state=3)
    assert a == b
    assert a.estimate == log_loss(y, p)
    assert a.low < a.estimate < a.high and a.standard_error > 0
    assert (a.confidence_level, a.n_resamples, a.method) == (0.95, 100, "percentile")


def test_scaling_the_weights_leaves_the_interval_unchanged(rng):
    y, p = _calibrated(rng, 400)
    w = rng.uniform(0.5, 2.0, p.size)
    a = bootstrap(log_loss, y, p, sample_weight=w, n_resamples=100, random_state=1)
    b = bootstrap(log_loss, y, p, sample_weight=7 * w, n_resamples=100, random_state=1)
    np.testing.assert_allclose([a.estimate, a.low, a.high], [b.estimate, b.low, b.high], rtol=1e-12)


def test_rows_of_zero_weight_are_absent_rows(rng):
    y, p = _calibrated(rng, 400)
    w = np.r_[np.ones(300), np.zeros(100)]
    a = bootstrap(brier_score, y, p, sample_weight=w, n_resamples=100, random_state=2)
    b = bootstrap(brier_score, y[:300], p[:300], n_resamples=100, random_state=2)
    assert a == b


def test_weight_k_is_one_resampled_unit_not_k_copies(rng):
    """Weights are sampling weights: the estimate equals that of k copies, the interval is that of the rows."""
    y, p = _calibrated(rng, 400)
    weighted = bootstrap(brier_score, y, p, sample_weight=np.full(p.size, 5.0), n_resamples=300, random_state=0)
    copies = bootstrap(brier_score, np.repeat(y, 5), np.repeat(p, 5), n_resamples=300, random_state=0)
    plain = bootstrap(brier_score, y, p, n_resamples=300, random_state=0)
    assert weighted.estimate == pytest.approx(copies.estimate, abs=1e-15)
    np.testing.assert_allclose([weighted.low, weighted.high], [plain.low, plain.high], rtol=1e-12)
    assert (weighted.high - weighted.low) / (copies.high - copies.low) > 1.8  # about sqrt(5)


def test_basic_and_bca_intervals(rng):
    y, p = _calibrated(rng, 100)
    basic = bootstrap(log_loss, y, p, n_resamples=200, method="basic", random_state=0)
    percentile = bootstrap(log_loss, y, p, n_resamples=200, random_state=0)
    # the basic interval reflects the percentile one around the estimate
    assert basic.low == pytest.approx(2 * percentile.estimate - percentile.high, abs=1e-12)
    bca = bootstrap(log_loss, y, p, n_resamples=200, method="bca", random_state=0)
    assert bca.low < bca.estimate < bca.high


def test_row_args_are_resampled_with_the_rows(rng):
    y, p = _calibrated(rng, 600)
    X = pd.DataFrame({"a": rng.choice(list("abc"), p.size)})
    segments = generate_segments(X, max_depth=1)
    masks = segments.to_masks()

    def mce_sigma(y_true, y_prob, *, segments, sample_weight=None):
        return mce(y_true, y_prob, segments=segments, sample_weight=sample_weight).mce_sigma

    res = bootstrap(mce_sigma, y, p, row_args={"segments": masks}, n_resamples=50, random_state=0)
    assert res.estimate == pytest.approx(mce(y, p, segments=segments).mce_sigma, rel=1e-12)
    assert res.low < res.high

    def aligned(y_true, y_prob, *, tag, sample_weight=None):  # 1 where each resampled row kept its own tag
        return float(np.array_equal(tag, y_prob))

    res = bootstrap(aligned, y, p, row_args={"tag": p.copy()}, n_resamples=50, random_state=0)
    assert (res.estimate, res.low, res.high) == (1.0, 1.0, 1.0)


def test_a_metric_undefined_on_some_resamples_is_a_clear_error(rng):
    y = np.r_[1.0, np.zeros(29)]
    p = rng.uniform(size=30)
    match = r"metric must be defined on every resample; it raised ValueError on \d+ of 100"
    with pytest.raises(ValueError, match=match):
        bootstrap(roc_auc, y, p, n_resamples=100, random_state=0)


def test_summary_intervals_leave_a_metric_undefined_on_some_resamples_without_an_interval(rng, capsys, tmp_path):
    # 1 positive in 30 rows: about a third of the resamples hold no positive, where the AUCs and PCOC are undefined.
    # Before, the whole table (and mcal evaluate --ci) failed; the other metrics keep their intervals.
    y = np.r_[1.0, np.zeros(29)]
    p = rng.uniform(size=30)
    with pytest.warns(CalibrationWarning, match=r"roc_auc of 'p' has no interval: it is undefined on \d+ of 100"):
        table = summary_intervals(y, {"p": p}, n_resamples=100)
    undefined = {"roc_auc", "pr_auc", "pcoc"}
    assert table.loc["p", [f"{m}_{end}" for m in undefined for end in ("low", "high")]].isna().all()
    direct = bootstrap(log_loss, y, p, n_resamples=100, random_state=0)
    assert (table.loc["p", "log_loss_low"], table.loc["p", "log_loss_high"]) == (direct.low, direct.high)
    from mcal.cli import main

    path = tmp_path / "rare.csv"
    pd.DataFrame({"p": p, "y": y}).to_csv(path, index=False)
    assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--ci", "--n-resamples", "100"]) == 0
    out, err = capsys.readouterr()
    assert re.search(r"\nroc_auc +\d\.\d+ \[–\]", out) and re.search(r"\nlog_loss +\d\.\d+ \[\d", out)
    assert "mcal: warning: roc_auc of 'p' has no interval" in err


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"metric": "log_loss"}, TypeError, "metric must be callable"),
        ({"y_prob": [0.1, np.nan, 0.3, 0.4]}, ValueError, "y_prob"),
        ({"y_prob": [0.1, 1.2, 0.3, 0.4]}, ValueError, "y_prob"),
        ({"y_prob": [[0.1, 0.2], [0.3, 0.4]]}, ValueError, "y_prob"),
        ({"y_true": [0, 1, 1]}, ValueError, "same number of samples"),
        ({"y_true": [1, 1, 1, 1], "metric": roc_auc}, ValueError, "both classes"),
        ({"n_resamples": 1}, ValueError, "n_resamples must be an integer >= 2; got 1"),
        ({"n_resamples": 10.0}, TypeError, "n_resamples must be an integer >= 2"),
        ({"confidence_level": 1.0}, ValueError, r"confidence_level must be a number in \(0, 1\); got 1.0"),
        ({"confidence_level": "0.9"}, TypeError, "confidence_level must be a number"),
        ({"method": "bootstrap-t"}, ValueError, "method must be 'percentile', 'basic' or 'bca'"),
        ({"row_args": {"field": [1, 2]}}, ValueError, r"row_args\['field'\] must have 4 rows"),
        ({"row_args": [("field", [1, 2, 3, 4])]}, TypeError, "row_args must be a mapping"),
        ({"sample_weight": [1, -1, 1, 1]}, ValueError, "sample_weight"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, error, match):
    args = {"metric": log_loss, "y_true": [0, 1, 0, 1], "y_prob": [0.1, 0.8, 0.3, 0.6], "n_resamples": 10} | kwargs
    with pytest.raises(error, match=match):
        bootstrap(args.pop("metric"), args.pop("y_true"), args.pop("y_prob"), **args)


def test_summary_intervals_hold_the_summary_and_match_bootstrap(rng):
    y, p = _calibrated(rng, 800)
    field = rng.choice(["x", "y"], p.size)
    probs = {"p": p, "q": np.clip(p + 0.1, 0, 1)}
    table = summary_intervals(y, probs, field=field, n_resamples=60)
    summary = calibration_summary(y, probs, field=field)
    assert list(table.index) == ["p", "q"]
    assert {"f_rce_low", "f_rce_high", "ecce_sigma_scale_low"} <= set(table.columns)
    assert not any(c.startswith(("ecce_pvalue", "mce")) for c in table.columns)
    for metric in ("log_loss", "brier_score", "roc_auc", "pcoc"):
        assert (table[f"{metric}_low"] <= summary[metric]).all() and (summary[metric] <= table[f"{metric}_high"]).all()
    # means get percentile intervals, the upward-biased metrics basic ones (benchmarks/results/bootstrap_intervals.md)
    for metric, method in ((log_loss, "percentile"), (partial(ece, n_bins=10), "basic"), (ecce, "basic")):
        direct = bootstrap(metric, y, probs["q"], n_resamples=60, method=method, random_state=0)
        name = getattr(metric, "func", metric).__name__
        assert (table.loc["q", f"{name}_low"], table.loc["q", f"{name}_high"]) == (direct.low, direct.high)
    direct = bootstrap(f_rce, y, probs["q"], row_args={"field": field}, n_resamples=60, method="basic", random_state=0)
    assert (table.loc["q", "f_rce_low"], table.loc["q", "f_rce_high"]) == (direct.low, direct.high)


def test_basic_interval_is_the_percentile_one_reflected_around_the_estimate(rng):
    y, p = _calibrated(rng, 600)
    metrics = {"ece": (partial(ece, n_bins=10), []), "log_loss": (log_loss, [])}
    mixed = bootstrap_metrics(metrics, y, p, n_resamples=80, method={"ece": "basic", "log_loss": "percentile"},
                              random_state=4)  # fmt: skip
    percentile = bootstrap(partial(ece, n_bins=10), y, p, n_resamples=80, random_state=4)
    basic = mixed["ece"]
    assert (basic.low, basic.high, basic.method) == (  # the lower bound cut at 0: the ECE is non-negative
        max(2 * percentile.estimate - percentile.high, 0.0), 2 * percentile.estimate - percentile.low, "basic")  # fmt: skip
    assert mixed["log_loss"] == bootstrap(log_loss, y, p, n_resamples=80, random_state=4)
    assert basic == bootstrap(partial(ece, n_bins=10), y, p, n_resamples=80, method="basic", random_state=4)


@pytest.mark.parametrize(
    ("method", "match"),
    [
        ({"ece": "basic"}, r"method must name the method of each metric \['ece', 'log_loss'\]; got \['ece'\]"),
        ({"ece": "bca", "log_loss": "percentile"}, "method 'bca' must be the method of every metric or of none"),
        ({"ece": "basic", "log_loss": "student"}, "method must be 'percentile', 'basic' or 'bca'; got 'student'"),
    ],
)
def test_methods_per_metric_are_checked(rng, method, match):
    y, p = _calibrated(rng, 100)
    metrics = {"ece": (partial(ece, n_bins=10), []), "log_loss": (log_loss, [])}
    with pytest.raises(ValueError, match=match):
        bootstrap_metrics(metrics, y, p, n_resamples=10, method=method)


def test_segment_intervals_resample_within_each_segment(rng):
    y, p = _calibrated(rng, 1000)
    p = np.where(np.arange(p.size) < 500, np.clip(p + 0.15, 0, 1), p)  # rows 0..499 over-predicted
    X = pd.DataFrame({"half": np.where(np.arange(p.size) < 500, "high", "ok")})
    segments = generate_segments(X, max_depth=1)
    result = mce(y, p, segments=segments)
    worst = result.table["segment"].head(3).tolist()
    table = segment_intervals(y, p, segments, worst, n_resamples=60)
    assert list(table.index) == worst
    for k, row in table.iterrows():
        value = result.table.set_index("segment").loc[k, "ecce_sigma"]
        assert row["ecce_sigma_low"] <= value * 1.5 and value <= row["ecce_sigma_high"] * 1.5
    assert table.loc[worst[0], "ecce_sigma_low"] > 3  # the over-predicted half is detected with its interval


# -- mcal evaluate --ci and the report ------------------------------------------------------------------------------


@pytest.fixture
def scores_table(tmp_path):
    rng = np.random.default_rng(5)
    n = 1500
    p = rng.uniform(0, 1, n)
    a = rng.choice(list("abc"), n)
    y = (rng.uniform(size=n) < np.clip(p + 0.15 * (a == "a"), 0, 1)).astype(int)
    path = tmp_path / "scores.csv"
    pd.DataFrame({"p": p, "y": y, "a": a, "w": rng.integers(1, 4, n)}).to_csv(path, index=False)
    return path


def test_evaluate_ci_adds_interval_columns_equal_to_summary_intervals(scores_table, capsys):
    import json

    from mcal.cli import main

    assert (
        main(
            [
                "evaluate",
                str(scores_table),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--weight-col",
                "w",
                "--segments",
                "a",
                "--ci",
                "0.9",
                "--n-resamples",
                "40",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    df = pd.read_csv(scores_table)
    segments = generate_segments(df[["a"]], max_depth=3)
    expected = summary_intervals(
        df["y"], {"p": df["p"]}, sample_weight=df["w"], segments=segments, n_resamples=40, confidence_level=0.9
    )
    metrics = out["metrics"]["p"]
    keys = list(metrics)
    assert keys.index("log_loss_low") == keys.index("log_loss") + 1 and "ecce_pvalue_low" not in metrics
    for column in expected.columns:
        assert metrics[column] == pytest.approx(expected.loc["p", column], rel=1e-12), column
    worst = out["segments"]["p"][0]
    assert worst["ecce_sigma_low"] <= worst["ecce_sigma"] <= worst["ecce_sigma_high"] * 1.5
    assert out["segments"]["p"][-1]["ecce_sigma_low"] is not None  # 4 segments: all among the 10 worst


def test_evaluate_without_ci_has_no_interval_columns(scores_table, capsys):
    from mcal.cli import main

    assert main(["evaluate", str(scores_table), "--score-col", "p", "--label-col", "y"]) == 0
    assert "_low" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--n-resamples", "50"], "--n-resamples needs --ci"),
        (["--ci", "--scheduler", "tcp://127.0.0.1:1"], "--ci needs the data in memory"),
    ],
)
def test_evaluate_ci_bad_options_fail_with_a_message(scores_table, capsys, extra, message):
    from mcal.cli import main

    assert main(["evaluate", str(scores_table), "--score-col", "p", "--label-col", "y", *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ci", "1.5"], "argument --ci: must be a number in (0, 1); got 1.5"),
        (["--ci", "--n-resamples", "1"], "argument --n-resamples: must be an integer >= 2; got 1"),
    ],
)
def test_evaluate_ci_values_out_of_bounds_are_usage_errors(scores_table, capsys, extra, message):
    from mcal.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["evaluate", str(scores_table), "--score-col", "p", "--label-col", "y", *extra])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_report_shows_intervals_for_metrics_mce_and_worst_segments(scores_table, tmp_path):
    from mcal.cli import main

    out = tmp_path / "r.html"
    assert (
        main(
            [
                "report",
                str(scores_table),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--segments",
                "a",
                "--ci",
                "--n-resamples",
                "30",
                "--quiet",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    html = out.read_text()
    # 8 core metrics, the MCE, and the 4 segments of column a (all among the worst 10)
    assert html.count('<span class="ci">') == 8 + 1 + 4
    assert "bootstrap interval (30 resamples" in html and "basic for ECE, ECCE, MCE and F-RCE" in html
    assert main(["report", str(scores_table), "--score-col", "p", "--label-col", "y", "--quiet", "-o", str(out)]) == 0
    assert '<span class="ci">' not in out.read_text()


def _resampling_case(rng, ties):
    n = 240
    p = rng.uniform(0, 1, n)
    if ties:  # blocks of equal scores, scores of exactly 0 and 1, and a negative in the top block
        p = np.round(p, 1)
        p[:5], p[5:10] = 0.0, 1.0
    y = (rng.uniform(size=n) < p).astype(float)
    y[5] = 0.0
    field = rng.choice(list("abc"), n)
    masks = np.stack([field == "a", p > 0.5, (field == "b") & (p < 0.3), np.ones(n, dtype=bool)], axis=1)
    return y, p, rng.uniform(0.1, 3.0, n), field, masks


@pytest.mark.parametrize("ties", [False, True])
def test_every_count_form_equals_its_metric_on_the_resampled_rows(rng, ties):
    from mcal.metrics import ecce, f_rce, pcoc, pr_auc
    from mcal.metrics._cumulative import ecce_in_sigmas
    from mcal.metrics._multicalibration import mce_sigma
    from mcal.metrics._resampled import SortedRows, resampled_metric

    y, p, w, field, masks = _resampling_case(rng, ties)
    rows = rng.integers(0, y.size, (5, y.size))
    cases = [(log_loss, {}), (brier_score, {}), (roc_auc, {}), (pr_auc, {}), (ece, {}), (partial(ece, n_bins=7), {}),
             (ecce, {}), (ecce_in_sigmas, {}), (pcoc, {}), (f_rce, {"field": field}),
             (mce_sigma, {"segments": masks})]  # fmt: skip
    for metric, args in cases:
        form = resampled_metric(metric, args)
        assert form is not None, metric
        sorted_rows = SortedRows(y, p, w, args)
        got = form(sorted_rows, sorted_rows.counts(rows))
        # the metric of the resampled rows, copies included: sigma adds w^2 p (1 - p) per copy, not (c w)^2
        expected = [metric(y[r], p[r], sample_weight=w[r], **{k: v[r] for k, v in args.items()}) for r in rows]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, err_msg=str(metric))


def test_the_resampled_mce_sorts_segments_and_finds_tie_ends_once_for_all_resamples(rng, monkeypatch):
    # the work that depends on the scores and segments only is done once; each resample only walks its weights
    from mcal._shared import walks
    from mcal.metrics import _resampled
    from mcal.metrics._multicalibration import mce_sigma

    y, p, w, _, masks = _resampling_case(rng, ties=True)
    calls = {"blocks": 0, "tie_ends": 0}

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(_resampled, "score_blocks", counted("blocks", _resampled.score_blocks))
    monkeypatch.setattr(_resampled, "tie_block_ends", counted("tie_ends", _resampled.tie_block_ends))
    monkeypatch.setattr(walks, "tie_block_ends", counted("tie_ends", walks.tie_block_ends))
    monkeypatch.setattr(_resampled, "segment_ecce", lambda *a, **k: pytest.fail("sorted the scores again"))
    seen = []
    for n_resamples in (2, 40):
        calls.update(blocks=0, tie_ends=0)
        bootstrap(mce_sigma, y, p, sample_weight=w, row_args={"segments": masks}, n_resamples=n_resamples)
        seen.append(dict(calls))
    assert seen[0] == seen[1] and seen[0]["blocks"] == 1  # not once per resample


def test_metrics_without_a_count_form_are_called_per_resample():
    from mcal.metrics._resampled import resampled_metric

    assert resampled_metric(partial(ece, strategy="quantile"), {}) is None  # its bins move with the weights
    assert resampled_metric(lambda y, p, *, sample_weight: 0.0, {}) is None
    assert resampled_metric(log_loss, {"field": np.zeros(3)}) is None  # an argument the form does not take


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_count_forms_give_the_intervals_of_one_call_per_resample_on_the_same_draws(rng, method):
    y, p, w, _, _ = _resampling_case(rng, ties=True)
    options = {"sample_weight": w, "n_resamples": 50, "method": method, "random_state": 3}
    for metric in (log_loss, roc_auc, partial(ece, n_bins=5)):
        fast = bootstrap(metric, y, p, **options)
        slow = bootstrap(lambda a, b, *, sample_weight, m=metric: m(a, b, sample_weight=sample_weight), y, p, **options)
        for name in ("estimate", "low", "high", "standard_error"):
            assert getattr(fast, name) == pytest.approx(getattr(slow, name), rel=1e-12, abs=1e-15)


def test_basic_interval_of_a_non_negative_metric_stops_at_zero(rng):
    # on calibrated scores the ECCE is mostly bias: reflected, the percentile interval would reach below 0
    y, p = _calibrated(rng, 1000)
    percentile = bootstrap(ecce, y, p, n_resamples=200, random_state=1)
    basic = bootstrap(ecce, y, p, n_resamples=200, method="basic", random_state=1)
    assert 2 * percentile.estimate - percentile.high < 0
    assert basic.low == 0.0 and basic.high == 2 * percentile.estimate - percentile.low
    # a metric whose resamples go below 0 keeps its reflected bound
    shifted = bootstrap(lambda yt, yp, sample_weight=None: ecce(yt, yp, sample_weight=sample_weight) - 0.05,
                        y, p, n_resamples=200, method="basic", random_state=1)  # fmt: skip
    assert shifted.low == pytest.approx(2 * percentile.estimate - percentile.high - 0.05, abs=1e-12)


def test_basic_interval_of_a_non_negative_metric_stays_ordered_at_0_when_bias_exceeds_the_estimate():
    # nearly calibrated scores whose resampled ECEs all exceed twice the ECE: the reflected interval lies wholly
    # below 0 ([2 * 0.0035 - 0.0075, ...] here), which mcal showed as "0.0 to -0.0007"; both ends are cut at 0
    rng = np.random.default_rng(162)
    p = rng.uniform(0.3, 0.7, 2000)
    y = (rng.random(2000) < p).astype(float)
    res = bootstrap(ece, y, p, n_resamples=200, method="basic", random_state=0)
    uncut = bootstrap(ece, y, p, n_resamples=200, method="percentile", random_state=0)
    assert 2 * res.estimate - uncut.low < 0  # the case: the reflected upper bound is negative
    assert (res.low, res.high) == (0.0, 0.0)
    table = summary_intervals(y, {"p": p}, n_resamples=200, random_state=0)
    assert (
        table[[f"{m}_low" for m in ("ece", "ecce")]].to_numpy() <= table[["ece_high", "ecce_high"]].to_numpy()
    ).all()


def test_basic_interval_of_an_infinite_estimate_is_infinite_not_nan():
    # scores of 0 and 1, all wrong: ECCE > 0 with sigma 0, so ECCE / sigma is inf on the data and every resample;
    # reflecting gave inf - inf = NaN, which a gate such as --fail-if "ecce_sigma_scale_low > 5" never fires on
    y = np.tile([0.0, 1.0, 1.0], 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # ecce_sigma's note on its meaning since mcal 0.2
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's standard error of resamples that are all inf
        res = bootstrap(ecce_sigma, y, 1.0 - y, n_resamples=20, method="basic", random_state=0)
    assert (res.estimate, res.low, res.high) == (np.inf, np.inf, np.inf)


def one_row_dominated(seed=0, n=8000):
    """Scores near 1e-7 in segment g=h, whose only positive makes all of its ECCE (issue 32's over-fitted model:
    `evaluate --ci` printed an MCE interval [0, 45.2] around 42.2), beside a mildly miscalibrated segment g=a."""
    rng = np.random.default_rng(seed)
    g = rng.choice(list("abcdefgh"), n)
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < expit(logit(p) + 0.35 * (g == "a"))).astype(float)
    tiny = np.flatnonzero(g == "h")
    p[tiny] = rng.uniform(2.5e-7, 7.5e-7, tiny.size)
    y[tiny] = 0.0
    y[tiny[0]] = 1.0
    return y, p, g, tiny[0]


def test_an_mce_that_one_row_drives_gets_the_percentile_interval_not_a_lower_bound_of_0():
    y, p, g, _ = one_row_dominated()
    segments = generate_segments(pd.DataFrame({"g": g}), max_values_per_feature=8)
    estimate = mce(y, p, segments=segments).mce_sigma
    assert estimate > 20  # the positive at a score near 1e-7: residual 1 against a sigma of about 0.03
    with pytest.warns(CalibrationWarning, match=r"one row \(label 1 at score .*\) makes 100% of the ECCE of the worst"):
        table = summary_intervals(y, {"p": p}, segments=segments, n_resamples=200)
    low, high = table.loc["p", ["mce_sigma_low", "mce_sigma_high"]]
    # the resamples hold that row 0, 1, 2, ... times: the MCE is about 0x, 1x, 2x the estimate. The basic interval
    # reflected that tail to [0, 1.9x] (before the fix); the percentile interval keeps the estimate inside, above 0
    masks = segments.to_masks()
    percentile = bootstrap(mce_sigma, y, p, row_args={"segments": masks}, n_resamples=200, random_state=0)
    assert (low, high) == pytest.approx((percentile.low, percentile.high), rel=1e-12)
    assert 0 < low < estimate < high
    k = segments.descriptions.index("g=h")
    with pytest.warns(CalibrationWarning, match="of segment 'g=h'"):
        listed = segment_intervals(y, p, segments, [k], n_resamples=200)
    assert listed.loc[k, "ecce_sigma_low"] > 0  # the basic interval of that segment was [0, ...] too


def test_an_mce_that_no_single_row_drives_keeps_the_basic_interval():
    y, p, g, row = one_row_dominated()
    keep = np.arange(y.size) != row  # without the positive, g=h is calibrated: no row makes half of any ECCE
    segments = generate_segments(pd.DataFrame({"g": g[keep]}), max_values_per_feature=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        table = summary_intervals(y[keep], {"p": p[keep]}, segments=segments, n_resamples=100)
    masks = segments.to_masks()
    basic = bootstrap(mce_sigma, y[keep], p[keep], row_args={"segments": masks}, n_resamples=100, random_state=0,
                      method="basic")  # fmt: skip
    assert tuple(table.loc["p", ["mce_sigma_low", "mce_sigma_high"]]) == pytest.approx((basic.low, basic.high))
