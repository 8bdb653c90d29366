"""mcal.select_calibrator: shared folds, the one-standard-error rule, and what it chooses on planted data."""

import json
import warnings
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal.metrics import log_loss
from mcal.selection import COMPLEXITY_ORDER, select_calibrator


def _calibrated(rng, n):
    p = rng.uniform(0.02, 0.98, n)
    return p, (rng.uniform(size=n) < p).astype(int)


class _Spy(mcal.BaseCalibrator):
    """The identity, recording the scores of the rows of every fit."""

    seen: ClassVar[list] = []
    _state_attrs: ClassVar[tuple[str, ...]] = ("n_",)

    def __init__(self, tag=None):
        self.tag = tag

    def _fit(self, y_prob, y, sample_weight, X):
        type(self).seen.append((self.tag, np.sort(y_prob)))
        self.n_ = y_prob.size

    def _predict(self, y_prob, X):
        return y_prob.copy()


class _Failing(_Spy):
    def _fit(self, y_prob, y, sample_weight, X):
        raise ValueError("no luck")


def test_on_calibrated_scores_auto_keeps_the_identity_or_a_map_indistinguishable_from_it():
    chosen = []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        p, y = _calibrated(rng, 5000)
        selection = select_calibrator(p, y, random_state=seed)
        chosen.append(selection.chosen)
        assert np.max(np.abs(selection.calibrator.predict(p) - p)) < 0.03
    # the best of six methods is the identity in 4 of these 8 draws; the one-SE rule keeps it in 7
    assert chosen.count("identity") >= 7, chosen


def test_a_planted_monotone_distortion_without_features_gets_a_univariate_method(rng):
    p = rng.uniform(0.02, 0.98, 4000)
    y = (rng.uniform(size=4000) < p**2).astype(int)
    selection = select_calibrator(p, y, random_state=0)
    assert selection.chosen in {"platt", "beta", "histogram", "isotonic"}
    assert selection.table.loc["identity", "delta"] > 5 * selection.table.loc["identity", "delta_se"]
    assert "mcgrad" not in selection.table.index  # no features: not a default candidate


def test_a_planted_segment_bias_with_features_gets_mcgrad(rng):
    n = 6000
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.choice(["u", "v", "w"], n)})
    p = rng.uniform(0.05, 0.9, n)
    y = (rng.uniform(size=n) < np.where(X["b"] == "u", np.minimum(1.6 * p, 0.99), p)).astype(int)
    selection = select_calibrator(p, y, X=X, random_state=0, candidates=["identity", "platt", "isotonic", "mcgrad"])
    assert selection.chosen == "mcgrad"
    refit = selection.calibrator
    assert isinstance(refit, mcal.MCGrad) and refit.n_features_in_ == 2
    # refitted with the rounds that early stopping chose on the first fold, without another early stopping
    assert refit.early_stopping is None and refit.n_rounds_ == refit.max_rounds > 0
    assert selection.table.loc["mcgrad", "mce_sigma"] < selection.table.loc["isotonic", "mce_sigma"]
    assert selection.n_segments > 1


def test_every_candidate_is_fitted_on_the_same_rows_of_the_same_folds(rng):
    p, y = _calibrated(rng, 600)
    _Spy.seen.clear()
    selection = select_calibrator(p, y, candidates={"a": _Spy(tag="a"), "b": _Spy(tag="b")}, cv=4, random_state=3)
    fits = {tag: [rows for t, rows in _Spy.seen if t == tag] for tag in "ab"}
    assert len(fits["a"]) == 4 + 1  # four folds, then the chosen one ("a", the first of equals) on all rows
    for rows_a, rows_b in zip(fits["a"][:4], fits["b"], strict=True):
        np.testing.assert_array_equal(rows_a, rows_b)
    for k in range(4):  # fold k's fit saw every row but those of fold k
        np.testing.assert_array_equal(fits["a"][k], np.sort(p[selection.folds != k]))
    np.testing.assert_array_equal(fits["a"][4], np.sort(p))


def test_mcgrad_chooses_its_rounds_on_the_folds_pooled_and_is_scored_and_refitted_with_that_count(rng):
    n = 4000
    X = pd.DataFrame({"b": rng.choice(["u", "v", "w"], n)})  # categorical: the bins do not depend on the rows
    p = rng.uniform(0.05, 0.9, n)
    y = (rng.uniform(size=n) < np.where(X["b"] == "u", np.minimum(1.5 * p, 0.99), p)).astype(int)
    selection = select_calibrator(p, y, X=X, candidates=["identity", "mcgrad"], random_state=1)
    rounds, seed = selection.calibrator.n_rounds_, selection.calibrator.random_state
    assert selection.chosen == "mcgrad" and rounds > 0

    def held_out_loss(t):  # independent fits of t rounds on each fold's training rows, scored on its rows
        held_out = np.empty(n)
        for k in range(5):
            tr, te = selection.folds != k, selection.folds == k
            model = mcal.MCGrad(random_state=seed, early_stopping=None, max_rounds=t).fit(p[tr], y[tr], X=X[tr])
            held_out[te] = model.predict(p[te], X=X[te])
        return log_loss(y, held_out)

    # the table scores MCGrad by those fits at the chosen count, which early stopping chose on the pooled loss
    losses = [held_out_loss(t) for t in (rounds - 1, rounds, rounds + 1)]
    assert selection.table.loc["mcgrad", "log_loss"] == pytest.approx(losses[1], rel=0, abs=1e-9)
    assert losses[1] < losses[0] and losses[2] >= losses[1]
    direct = mcal.MCGrad(random_state=seed, early_stopping=None, max_rounds=rounds).fit(p, y, X=X)
    np.testing.assert_allclose(selection.calibrator.predict(p, X=X), direct.predict(p, X=X), rtol=0, atol=1e-12)


def test_the_folds_are_seeded_and_stratified(rng):
    p, y = _calibrated(rng, 1000)
    first = select_calibrator(p, y, candidates=["identity", "platt"], random_state=7).folds
    np.testing.assert_array_equal(
        first, select_calibrator(p, y, candidates=["identity", "platt"], random_state=7).folds
    )
    assert not np.array_equal(first, select_calibrator(p, y, candidates=["identity", "platt"], random_state=8).folds)
    positives = np.bincount(first[y == 1], minlength=5)
    assert set(np.bincount(first, minlength=5)) <= {200} and positives.max() - positives.min() <= 1


def test_the_table_holds_held_out_log_loss_and_paired_standard_errors_computed_independently(rng):
    p = rng.uniform(0.02, 0.98, 3000)
    y = (rng.uniform(size=3000) < p**1.5).astype(int)
    w = rng.uniform(0.5, 2.0, 3000)
    selection = select_calibrator(p, y, sample_weight=w, candidates=["identity", "platt"], random_state=0)
    held_out = np.empty(p.size)
    for k in range(5):
        train, test = selection.folds != k, selection.folds == k
        held_out[test] = mcal.PlattScaling().fit(p[train], y[train], sample_weight=w[train]).predict(p[test])
    table = selection.table
    assert table.loc["platt", "log_loss"] == pytest.approx(log_loss(y, held_out, sample_weight=w), abs=1e-7)
    assert table.loc["identity", "log_loss"] == pytest.approx(log_loss(y, p, sample_weight=w), abs=1e-12)
    d = -(y * np.log(p / held_out) + (1 - y) * np.log((1 - p) / (1 - held_out)))  # identity's minus Platt's
    mean = np.average(d, weights=w)
    se = np.sqrt(np.sum(w**2 * (d - mean) ** 2)) / w.sum()
    assert selection.best == "platt"
    assert table.loc["identity", "delta"] == pytest.approx(mean, rel=1e-5)
    assert table.loc["identity", "delta_se"] == pytest.approx(se, rel=1e-5)
    assert table.loc["platt", "delta"] == 0 and table.loc["platt", "delta_se"] == 0


def test_the_simplest_method_within_the_tolerance_is_chosen_and_zero_tolerance_chooses_the_best(rng):
    p = rng.uniform(0.02, 0.98, 3000)
    y = (rng.uniform(size=3000) < p**1.3).astype(int)
    table = select_calibrator(p, y, random_state=0).table
    within = table.index[table["delta"] <= table["delta_se"]]
    assert table.index[table["chosen"]].tolist() == [within[0]]
    best = select_calibrator(p, y, random_state=0, se_tolerance=0.0)
    assert best.chosen == best.best == table["log_loss"].idxmin()


def test_the_chosen_method_is_refitted_on_all_rows_as_a_direct_fit_would_be(rng):
    p = rng.uniform(0.02, 0.98, 2000)
    y = (rng.uniform(size=2000) < p**2).astype(int)
    selection = select_calibrator(p, y, candidates=["identity", "beta"], random_state=0)
    assert selection.chosen == "beta"
    direct = mcal.BetaCalibration().fit(p, y)
    np.testing.assert_allclose(selection.calibrator.predict(p), direct.predict(p), rtol=0, atol=1e-9)


def test_unknown_or_repeated_candidate_names_are_refused_with_the_valid_list(rng):
    p, y = _calibrated(rng, 200)
    with pytest.raises(ValueError, match=r"candidates must be names among \['identity', 'temperature'.*got \['nope'\]"):
        select_calibrator(p, y, candidates=["identity", "nope"])
    with pytest.raises(ValueError, match="each method once; got \\['platt'\\]"):
        select_calibrator(p, y, candidates=["platt", "identity", "platt"])
    with pytest.raises(ValueError, match="at least two methods"):
        select_calibrator(p, y, candidates=["platt"])
    with pytest.raises(TypeError, match="candidates must be a list of method names"):
        select_calibrator(p, y, candidates="platt")
    with pytest.raises(TypeError, match=r"candidates\['x'\] must be an unfitted mcal calibrator"):
        select_calibrator(p, y, candidates={"x": object(), "y": mcal.PlattScaling()})
    with pytest.raises(ValueError, match="candidate 'hkrr' needs features: pass X; got X=None"):
        select_calibrator(p, y, candidates=["identity", "hkrr"])  # needs features
    assert COMPLEXITY_ORDER[0] == "identity" and COMPLEXITY_ORDER.index("isotonic") < COMPLEXITY_ORDER.index("mcgrad")


def test_bad_arguments_are_refused_naming_them(rng):
    p, y = _calibrated(rng, 200)
    with pytest.raises(ValueError, match="cv must be an integer >= 2; got 1"):
        select_calibrator(p, y, cv=1)
    with pytest.raises(ValueError, match="se_tolerance must be a real number >= 0; got -1"):
        select_calibrator(p, y, se_tolerance=-1)
    with pytest.raises(ValueError, match="y must have at least cv=5 rows of each class"):
        select_calibrator(p[:6], np.array([0, 0, 0, 1, 1, 1]))
    with pytest.raises(ValueError, match="field must name a column of X; got 'f' and X=None|got field='f'"):
        select_calibrator(p, y, field="f")
    with pytest.raises(ValueError, match="X must have 200 rows"):
        select_calibrator(p, y, X=np.zeros((10, 2)))


def test_a_failing_candidate_is_reported_and_never_chosen(rng):
    p, y = _calibrated(rng, 500)
    with pytest.warns(mcal.CalibrationWarning, match="candidate 'bad' failed and cannot be chosen: no luck"):
        selection = select_calibrator(p, y, candidates={"bad": _Failing(), "platt": mcal.PlattScaling()})
    assert selection.chosen == "platt"
    assert selection.table.loc["bad", "note"] == "failed: no luck" and np.isnan(selection.table.loc["bad", "log_loss"])


def test_the_result_reads_as_text_and_as_json_data(rng):
    p = rng.uniform(0.02, 0.98, 2000)
    y = (rng.uniform(size=2000) < p**2).astype(int)
    selection = select_calibrator(p, y, random_state=0)
    text = selection.summary(width=100)
    assert f"chosen: {selection.chosen}" in text and all(len(line) <= 100 for line in text.splitlines())
    assert "note" in selection.summary(width=160)
    with pytest.raises(ValueError, match="^width must"):
        selection.summary(width=0)
    data = json.loads(json.dumps(selection.to_dict(), allow_nan=False))
    assert data["chosen"] == selection.chosen and list(data["table"]) == list(selection.table.index)
    assert data["table"][selection.chosen]["chosen"] is True and data["n_folds"] == 5


def test_field_candidates_join_with_a_field_column(rng):
    n = 3000
    X = pd.DataFrame({"site": rng.choice(["a", "b"], n)})
    p = rng.uniform(0.05, 0.9, n)
    y = (rng.uniform(size=n) < np.where(X["site"] == "a", p**2, p)).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcal.CalibrationWarning)  # MCGrad: early stopping may choose few rounds
        selection = select_calibrator(p, y, X=X, field="site", random_state=0)
    assert list(selection.table.index) == [*["identity", "temperature", "platt", "beta", "histogram", "isotonic"],
                                           "per-field-isotonic", "mcgrad"]  # fmt: skip
    assert selection.chosen in {"per-field-isotonic", "mcgrad"}


def test_the_report_shows_a_comparison_when_given_one_and_refuses_it_for_regression(rng, tmp_path):
    from mcal.report import make_report

    p = rng.uniform(0.02, 0.98, 1000)
    y = (rng.uniform(size=1000) < p**2).astype(int)
    selection = select_calibrator(p, y, candidates=["identity", "platt"], random_state=0)
    html = make_report(y, {"p": p}, path=tmp_path / "r.html", method_comparison=selection).read_text()
    section = html[html.index('<section id="methods">') :]
    assert section.index('data-method="identity"') < section.index('data-method="platt" class="best"')
    assert f"Chosen: <strong>{selection.chosen}</strong>" in section
    with pytest.raises(ValueError, match="method_comparison applies to binary labels"):
        make_report(p, {"p": p}, path=tmp_path / "s.html", outcome="regression", method_comparison=selection)


def test_a_simpler_method_within_the_log_loss_noise_but_worse_on_the_mce_is_passed_over(rng):
    from mcal.selection._result import comparison_table

    w = np.ones(2000)
    best = rng.uniform(0.1, 1.0, 2000)
    losses = {"a": best + rng.normal(0.0005, 0.05, 2000), "b": best}  # "a" trails by about 0.4 SE
    seconds, args = {"a": 0.0, "b": 0.0}, ({}, 1.0)
    table, _, chosen = comparison_table(losses, w, {"a": (5.0, 0.01), "b": (3.0, 0.2)}, seconds, *args)
    assert table.loc["a", "delta"] <= table.loc["a", "delta_se"] and chosen == "b"  # MCE 2 sigma above the best's
    assert "MCE 2.0 sigma above" in table.loc["a", "note"]
    assert comparison_table(losses, w, {"a": (3.9, 0.1), "b": (3.0, 0.2)}, seconds, *args)[2] == "a"  # 0.9 sigma
    # without segments the MCE is the global ECCE, which the log loss weighs already: log loss alone decides
    assert comparison_table(losses, w, {"a": (5.0, 0.01), "b": (3.0, 0.2)}, seconds, *args, segmented=False)[2] == "a"
