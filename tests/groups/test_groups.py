"""Tests of the group-based multicalibration baselines HKRR and DFMC."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from mcal import CalibrationWarning, load, save
from mcal.groups import DFMC, HKRR, hkrr_multicalibrate, hkrr_replay
from mcal.groups._inputs import group_masks
from mcal.metrics import ece, log_loss, mce

lightgbm = pytest.importorskip("lightgbm")

#: planted logit shifts of the first three groups; the others are calibrated
PLANTED = np.array([0.8, -0.6, 0.5])


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def make(rng, n, n_groups=8):
    rates = np.linspace(0.1, 0.5, n_groups)
    masks = rng.random((n, n_groups)) < rates
    p = expit(rng.normal(-0.5, 1.2, n))
    truth = expit(logit(p) + masks[:, :3] @ PLANTED)
    return p, (rng.random(n) < truth).astype(float), masks, truth


def group_mce(y, p, masks):
    """Multicalibration error over the given groups: max over groups of ECCE / sigma (MCGrad paper, eq. 2)."""
    return mce(y, p, segments=masks).mce_sigma


def feature_data(rng, n):
    """Raw features with a miscalibrated region (job == "b" and age > 50) that generated segments can find."""
    X = pd.DataFrame({"job": rng.choice(list("abcd"), n), "age": rng.uniform(20, 70, n)})
    p = expit(rng.normal(-0.5, 1.2, n))
    region = (X["job"].to_numpy() == "b") & (X["age"].to_numpy() > 50)
    y = (rng.random(n) < expit(logit(p) + 1.2 * region)).astype(float)
    return p, y, X


def test_hkrr_leaves_no_checked_cell_above_alpha_on_its_calibration_data(rng):
    p, y, masks, _ = make(rng, 20_000)
    w = np.ones_like(p)
    alpha, n_levels = 0.05, 10
    members = [np.flatnonzero(m) for m in masks.T]
    result = hkrr_multicalibrate(
        p, y, w, members, n_levels=n_levels, alpha=alpha, oracle=True, rng=np.random.default_rng(0), max_iter=1000
    )
    assert result.converged and result.update_deltas.size > 0
    q = result.predictions
    level = np.clip(np.ceil(q * n_levels) - 1, 0, n_levels - 1)
    worst = 0.0
    for m in masks.T:
        for v in range(n_levels):
            cell = m & (level == v)
            if cell.sum() >= alpha * (1 / n_levels) * m.sum() and cell.any():
                worst = max(worst, abs(y[cell].mean() - q[cell].mean()))
    # the stopping rule of the guess-and-check oracle: every checked cell is within 2 omega = alpha / 2
    assert worst < alpha / 2
    # and the uncalibrated scores were not: the planted shifts put cells far above alpha
    level0 = np.clip(np.ceil(p * n_levels) - 1, 0, n_levels - 1)
    cell = masks[:, 0] & (level0 == 3)
    assert abs(y[cell].mean() - p[cell].mean()) > alpha


def worst_checked_cell(y, q, masks, alpha, n_levels):
    """Largest |mean(y) - mean(q)| over (group, level) cells holding at least alpha / n_levels of their group."""
    level = np.clip(np.ceil(q * n_levels) - 1, 0, n_levels - 1)
    cells = [m & (level == v) for m in masks.T for v in range(n_levels)]
    return max(
        abs(y[c].mean() - q[c].mean())
        for c, m in zip(cells, np.repeat(masks.T, n_levels, axis=0), strict=False)
        if c.any() and c.sum() >= alpha / n_levels * m.sum()
    )


def test_hkrr_without_snap_leaves_no_cell_above_alpha_in_its_predictions_on_the_calibration_data(rng):
    p, y, masks, _ = make(rng, 20_000)
    unsnapped = HKRR(snap=False, random_state=0).fit(p, y, X=masks).predict(p, X=masks)
    assert worst_checked_cell(y, unsnapped, masks, 0.05, 10) < 0.05 / 2
    # the default snap to level means (Hansen et al.'s implementation) gives up that guarantee here
    snapped = HKRR(random_state=0).fit(p, y, X=masks).predict(p, X=masks)
    assert np.unique(snapped).size <= 10
    assert worst_checked_cell(y, snapped, masks, 0.05, 10) > 0.05


def test_hkrr_replay_reproduces_the_calibration_predictions_exactly(rng):
    p, y, masks, _ = make(rng, 5_000)
    members = [np.flatnonzero(m) for m in masks.T]
    result = hkrr_multicalibrate(
        p,
        y,
        np.ones_like(p),
        members,
        n_levels=10,
        alpha=0.05,
        oracle=True,
        rng=np.random.default_rng(1),
        max_iter=1000,
    )
    replayed = hkrr_replay(p, members, result.update_groups, result.update_levels, result.update_deltas, 10)
    assert np.array_equal(replayed, result.predictions)


def test_hkrr_fit_time_scores_of_zero_weight_rows_equal_their_replay_and_predict(rng):
    # the fit left rows of zero weight unpatched while the replay (and predict) patched them
    p, y, masks, _ = make(rng, 5_000)
    w = np.where(rng.random(p.size) < 0.2, 0.0, rng.uniform(0.5, 2.0, p.size))
    members = [np.flatnonzero(m) for m in masks.T]
    result = hkrr_multicalibrate(
        p, y, w, members, n_levels=10, alpha=0.05, oracle=True, rng=np.random.default_rng(3), max_iter=1000
    )
    zero = w == 0
    assert np.any(result.predictions[zero] != p[zero])  # zero-weight rows are patched with their cells
    replayed = hkrr_replay(p, members, result.update_groups, result.update_levels, result.update_deltas, 10)
    np.testing.assert_array_equal(replayed, result.predictions)
    predicted = HKRR(snap=False, random_state=3).fit(p, y, X=masks, sample_weight=w).predict(p, X=masks)
    np.testing.assert_array_equal(predicted, result.predictions)


def test_hkrr_fit_time_score_of_a_row_does_not_depend_on_its_weight(rng):
    p, y, masks, _ = make(rng, 3_000)
    # every row twice, once with weight 1 and once with weight 0: the fit is that of the weighted rows alone
    p2, y2, m2 = np.concatenate([p, p]), np.concatenate([y, y]), np.concatenate([masks, masks])
    w2 = np.concatenate([np.ones_like(p), np.zeros_like(p)])
    members = [np.flatnonzero(m) for m in m2.T]
    result = hkrr_multicalibrate(
        p2, y2, w2, members, n_levels=10, alpha=0.05, oracle=True, rng=np.random.default_rng(4), max_iter=1000
    )
    np.testing.assert_array_equal(result.predictions[: p.size], result.predictions[p.size :])


def test_hkrr_prediction_snaps_calibration_rows_to_the_level_means(rng):
    p, y, masks, _ = make(rng, 5_000)
    cal = HKRR(random_state=0).fit(p, y, X=masks)
    q = cal.predict(p, X=masks)
    assert set(np.unique(q)) <= set(cal.level_values_[cal.level_seen_])


@pytest.mark.parametrize(
    "make_cal", [lambda: HKRR(random_state=0), lambda: DFMC(n_jobs=1, random_state=0)], ids=["hkrr", "dfmc"]
)
def test_planted_group_miscalibration_is_reduced_on_held_out_data(rng, make_cal):
    p, y, masks, _ = make(rng, 20_000)
    pt, yt, mt, truth = make(rng, 20_000)
    q = make_cal().fit(p, y, X=masks).predict(pt, X=mt)
    # base: per-group MCE about 20 sigma (the planted shifts); the oracle, calibrated in every group, about 1-2
    base, fixed, best = group_mce(yt, pt, mt), group_mce(yt, q, mt), group_mce(yt, truth, mt)
    assert base > 10 and fixed < 5 and best < 3
    assert log_loss(yt, q) < log_loss(yt, pt) and ece(yt, q) < ece(yt, pt)


def test_dfmc_is_close_to_the_truth_when_groups_explain_the_miscalibration(rng):
    p, y, masks, _ = make(rng, 20_000)
    pt, yt, mt, truth = make(rng, 20_000)
    q = DFMC(n_jobs=1, random_state=0).fit(p, y, X=masks).predict(pt, X=mt)
    # 100 depth-2 trees fit the three planted shifts; the gap to the oracle's log loss stays below 0.003
    assert log_loss(yt, q) - log_loss(yt, truth) < 0.003


def hkrr_by_the_definition(p, y, w, masks, n_levels, alpha, seed):
    """Algorithm 1 of Hebert-Johnson et al. without the oracle, cell by cell: patch a (group, level) cell holding
    at least alpha * lambda of its group's weight by its mean residual when that is at least lambda / 10."""
    p, lam, rng = p.copy(), 1.0 / n_levels, np.random.default_rng(seed)
    group_order, level_order = rng.permutation(masks.shape[1]), rng.permutation(n_levels)
    while True:
        patched = False
        for g in group_order:
            group = masks[:, g] & (w > 0)
            for v in level_order:
                cell = group & (np.clip(np.ceil(p * n_levels) - 1, 0, n_levels - 1) == v)
                if w[cell].sum() > 0 and w[cell].sum() >= alpha * lam * w[group].sum():
                    gap = np.average(y[cell] - p[cell], weights=w[cell])
                    if abs(gap) >= lam / 10:
                        p[cell] = np.clip(p[cell] + gap, 0, 1)
                        patched = True
        if not patched:
            return p


@pytest.mark.parametrize("seed", range(5))
def test_hkrr_without_the_oracle_patches_as_the_definition_cell_by_cell(seed):
    rng = np.random.default_rng(seed)
    n = 40
    masks, p = rng.random((n, 3)) < 0.6, rng.random(n)
    y, w = (rng.random(n) < 0.5).astype(float), rng.integers(1, 4, n).astype(float)
    y[:2] = [0, 1]
    expected = hkrr_by_the_definition(p, y, w, masks, 5, 0.1, seed)
    cal = HKRR(lam=0.2, alpha=0.1, oracle=False, snap=False, random_state=seed).fit(p, y, X=masks, sample_weight=w)
    assert cal.update_deltas_.size > 0
    assert np.allclose(cal.predict(p, X=masks), expected, rtol=0, atol=1e-12)


def test_dfmc_one_tree_on_one_group_is_the_newton_step_of_the_log_loss_in_each_group(rng):
    group = rng.random(1_000) < 0.4
    p = np.full(group.size, 0.3)  # one score: the tree can split on the group only
    y = (rng.random(group.size) < np.where(group, 0.6, 0.3)).astype(float)
    w = rng.integers(1, 3, group.size).astype(float)
    q = (
        DFMC(n_estimators=1, learning_rate=1.0, n_jobs=1, random_state=0)
        .fit(p, y, X=group[:, None].astype(float), sample_weight=w)
        .predict(p, X=group[:, None].astype(float))
    )
    for m in (group, ~group):
        step = np.sum(w[m] * (y[m] - p[m])) / np.sum(w[m] * p[m] * (1 - p[m]))  # -gradient / hessian at logit(p)
        assert np.allclose(q[m], expit(logit(0.3) + step), rtol=0, atol=1e-6)  # LightGBM sums in float32


def test_hkrr_integer_weights_equal_duplicated_rows(rng):
    p, y, masks, _ = make(rng, 3_000)
    w = rng.integers(0, 4, p.size)
    rows = np.repeat(np.arange(p.size), w)
    weighted = HKRR(random_state=0).fit(p, y, X=masks, sample_weight=w).predict(p, X=masks)
    copied = HKRR(random_state=0).fit(p[rows], y[rows], X=masks[rows]).predict(p, X=masks)
    assert np.allclose(weighted, copied, rtol=0, atol=1e-12)


def test_dfmc_weights_move_the_fit_towards_the_duplicated_rows_fit(rng):
    # LightGBM's binning and min_child_samples count rows, so weight k is only close to k copies (documented)
    p, y, masks, _ = make(rng, 3_000)
    w = rng.integers(0, 4, p.size)
    rows = np.repeat(np.arange(p.size), w)
    copied = DFMC(n_jobs=1, random_state=0).fit(p[rows], y[rows], X=masks[rows]).predict(p, X=masks)
    weighted = DFMC(n_jobs=1, random_state=0).fit(p, y, X=masks, sample_weight=w).predict(p, X=masks)
    unweighted = DFMC(n_jobs=1, random_state=0).fit(p, y, X=masks).predict(p, X=masks)
    assert np.mean(np.abs(weighted - copied)) < 0.6 * np.mean(np.abs(unweighted - copied))


@pytest.mark.parametrize(
    "make_cal", [lambda: HKRR(random_state=0), lambda: DFMC(n_jobs=1, random_state=0)], ids=["hkrr", "dfmc"]
)
def test_save_load_round_trip_is_exact(rng, tmp_path, make_cal):
    p, y, masks, _ = make(rng, 3_000)
    cal = make_cal().fit(p, y, X=masks)
    save(cal, tmp_path / "m.json")
    again = load(tmp_path / "m.json")
    assert np.array_equal(again.predict(p, X=masks), cal.predict(p, X=masks))


def test_same_seed_same_fit_and_dataframe_equals_array(rng):
    p, y, masks, _ = make(rng, 3_000)
    frame = pd.DataFrame(masks, columns=[f"g{j}" for j in range(masks.shape[1])])
    for make_cal in (lambda: HKRR(random_state=3), lambda: DFMC(n_jobs=1, random_state=3)):
        a = make_cal().fit(p, y, X=masks).predict(p, X=masks)
        b = make_cal().fit(p, y, X=frame).predict(p, X=frame)
        assert np.array_equal(a, b)


def test_hkrr_rejects_group_columns_reordered_or_renamed_after_fit(rng, tmp_path):
    p, y, masks, _ = make(rng, 3_000)
    frame = pd.DataFrame(masks, columns=[f"g{j}" for j in range(masks.shape[1])])
    cal = HKRR(random_state=0).fit(p, y, X=frame)
    save(cal, tmp_path / "m.json")
    for model in (cal, load(tmp_path / "m.json")):
        with pytest.raises(
            ValueError, match="X must be a DataFrame with the group columns seen at fit, in the same order"
        ):
            model.predict(p, X=frame[frame.columns[::-1]])  # same shape: would patch the wrong groups
        with pytest.raises(ValueError, match="got an array without column names"):
            model.predict(p, X=masks)
        assert np.array_equal(model.predict(p, X=frame), cal.predict(p, X=frame))
    # a model file written before the names were recorded still loads, and predicts by position
    data = cal.to_dict()
    del data["state"]["group_names"]
    assert np.array_equal(HKRR.from_dict(data).predict(p, X=masks), cal.predict(p, X=frame))
    data["state"]["group_names"] = ["g0"]
    with pytest.raises(ValueError, match="state.group_names_ must be null or 8 column names"):
        HKRR.from_dict(data)


def test_hkrr_warns_when_max_iter_stops_it_early(rng):
    p, y, masks, _ = make(rng, 3_000)
    with pytest.warns(CalibrationWarning, match="max_iter=1"):
        HKRR(max_iter=1, random_state=0).fit(p, y, X=masks)


def test_dfmc_accepts_numeric_features_beside_group_indicators(rng):
    p, y, masks, _ = make(rng, 3_000)
    X = pd.DataFrame({"age": rng.normal(40, 10, p.size), "g0": masks[:, 0], "g1": masks[:, 1].astype(int)})
    X.loc[5, "age"] = np.nan  # missing values are LightGBM's "missing"
    q = DFMC(n_jobs=1, random_state=0).fit(p, y, X=X).predict(p, X=X)
    assert q.shape == p.shape and np.all((q > 0) & (q < 1))


def test_load_rejects_a_corrupted_model(rng):
    p, y, masks, _ = make(rng, 2_000)
    data = HKRR(random_state=0).fit(p, y, X=masks).to_dict()
    data["state"]["update_groups_"]["__ndarray__"][0] = 99
    with pytest.raises(ValueError, match="update_"):
        HKRR.from_dict(data)
    data = DFMC(n_jobs=1, random_state=0).fit(p, y, X=masks).to_dict()
    data["state"]["booster"] = "not a model"
    with pytest.raises(ValueError, match="LightGBM model text"):
        DFMC.from_dict(data)


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("leaf_value=", "leaf_value=0 ", "leaf_value must hold"),  # LightGBM aborted the process (tree_sizes)
        ("split_feature=", "split_feature=99 ", "split_feature must hold"),
        ("num_class=1", "num_class=3", "num_class= holds 1"),
    ],
)
def test_dfmc_load_checks_the_trees_before_lightgbm_parses_them(rng, old, new, match):
    p, y, masks, _ = make(rng, 2_000)
    data = DFMC(n_jobs=1, random_state=0).fit(p, y, X=masks).to_dict()
    data["state"]["booster"] = data["state"]["booster"].replace(old, new, 1)
    with pytest.raises(ValueError, match=f"state.booster.*{match}"):
        DFMC.from_dict(data)


@pytest.mark.parametrize(
    ("X", "match"),
    [
        (None, "X must hold"),
        (np.array([["a", "b"]] * 4), "boolean group indicators"),
        (np.array([[0.5, 1.0]] * 4), "column '0' holds values such as \\[0.5\\]"),
        (np.empty((4, 0)), "at least one group-indicator column"),
        (
            np.array([[1 + 1j], [0j], [1 + 0j], [0j]]),
            "column '0' holds values such as \\[\\(1\\+1j\\)",
        ),  # was cast to 1
    ],
)
def test_hkrr_rejects_anything_but_indicator_columns(X, match):
    with pytest.raises(ValueError, match=match):
        HKRR().fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1], X=X)


def test_dfmc_encodes_string_columns_as_categories_and_rejects_infinities(rng):
    p, y, masks, _ = make(rng, 3_000)
    X = pd.DataFrame({"g0": np.where(masks[:, 0], "in", "out"), "g1": masks[:, 1]})
    cal = DFMC(n_jobs=1, random_state=0).fit(p, y, X=X)
    assert cal.encoder_.categorical_ == [True, True]
    assert group_mce(y, cal.predict(p, X=X), masks[:, :2]) < group_mce(y, p, masks[:, :2])
    with pytest.raises(ValueError, match="infinite"):
        DFMC().fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1], X=np.array([[1.0], [np.inf], [0.0], [1.0]]))


def test_predict_rejects_a_different_number_of_groups(rng):
    p, y, masks, _ = make(rng, 2_000)
    for cal in (HKRR(random_state=0), DFMC(n_jobs=1, random_state=0)):
        cal.fit(p, y, X=masks)
        with pytest.raises(ValueError, match="as at fit"):
            cal.predict(p, X=masks[:, :3])


@pytest.mark.parametrize(
    ("cal", "match"),
    [
        (HKRR(lam=0.3), "lam must divide 1"),
        (HKRR(alpha=0.0), "alpha must be a number in \\(0, 1\\]; got 0.0$"),
        (HKRR(lam=np.nan), "lam must be a number in \\(0, 1\\]; got nan$"),
        (DFMC(max_depth=0), r"max_depth must be an integer >= 1 and <= 2147483647 \(LightGBM's int32\); got 0$"),
        # LightGBM reads these as int32: larger values wrapped around, as MCGrad's
        (DFMC(n_estimators=2**31), r"n_estimators must be an integer >= 1 and <= 2147483647 \(LightGBM's int32\)"),
        (DFMC(learning_rate=-0.1), "learning_rate must be a finite number > 0; got -0.1$"),
        (DFMC(max_leaves=1), "max_leaves must be an integer >= 2 and <= 131072; got 1$"),
        (DFMC(min_child_samples=0), r"min_child_samples must be an integer >= 1 and <= 2147483647"),
        (DFMC(l2_regularization=-1.0), "l2_regularization must be a finite number >= 0; got -1.0$"),
        (DFMC(n_jobs=0), "n_jobs must be None, an integer >= 1"),
        (HKRR(max_iter=0), "max_iter must be a positive integer; got 0$"),
    ],
)
def test_bad_parameter_values_raise_value_error_naming_them(cal, match):
    with pytest.raises(ValueError, match=match):
        cal.fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1], X=np.ones((4, 1), dtype=bool))


@pytest.mark.parametrize(
    ("cal", "match"),
    [
        # lam, alpha and DFMC's real and integer parameters of a wrong type were a ValueError
        (HKRR(lam="0.1"), r"lam must be a number in \(0, 1\]; got '0.1' of type str"),
        (HKRR(alpha=True), r"alpha must be a number in \(0, 1\]; got True of type bool"),
        (HKRR(oracle="yes"), "oracle must be True or False; got 'yes' of type str"),
        (HKRR(snap=1), "snap must be True or False; got 1 of type int"),
        (HKRR(max_iter=2.0), "max_iter must be a positive integer; got 2.0 of type float"),
        (HKRR(groups=None), "groups must be 'columns' or 'generated'; got None of type NoneType"),
        (
            HKRR(segment_params=[("max_depth", 2)]),
            r"segment_params must be None or a dict .*; got \[\('max_depth', "
            r"2\)\] of type list",
        ),
        (DFMC(n_estimators=10.0), "n_estimators must be an integer >= 1 .*; got 10.0 of type float"),
        (DFMC(max_depth=True), "max_depth must be an integer >= 1 .*; got True of type bool"),
        (DFMC(max_leaves="31"), "max_leaves must be an integer >= 2 .*; got '31' of type str"),
        (DFMC(min_child_samples=None), "min_child_samples must be an integer >= 1 .*; got None of type NoneType"),
        (DFMC(learning_rate="0.1"), "learning_rate must be a finite number > 0; got '0.1' of type str"),
        (DFMC(min_gain_to_split=None), "min_gain_to_split must be a finite number >= 0; got None of type NoneType"),
        (DFMC(min_sum_hessian_in_leaf=False), "min_sum_hessian_in_leaf must be a finite number >= 0; got False"),
        (DFMC(n_jobs=1.0), "n_jobs must be None, an integer >= 1, .*; got 1.0 of type float"),
        (DFMC(groups=1), "groups must be 'columns' or 'generated'; got 1 of type int"),
    ],
)
def test_parameters_of_a_bad_type_raise_type_error_naming_them(cal, match):
    with pytest.raises(TypeError, match=match):
        cal.fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1], X=np.ones((4, 1), dtype=bool))


@pytest.mark.parametrize("cls", [HKRR, DFMC])
@pytest.mark.parametrize(("seed", "error"), [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("0", TypeError)])
def test_random_state_must_be_none_or_a_non_negative_integer(cls, seed, error):
    # -1, 1.5 and "0" failed inside numpy without naming random_state; True fitted as the seed 1
    with pytest.raises(error, match=f"random_state must be None or a non-negative integer; got {seed!r}"):
        cls(random_state=seed).fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1], X=np.ones((4, 1), dtype=bool))


@pytest.mark.parametrize("cls", [HKRR, DFMC])
def test_load_rejects_a_model_file_with_an_invalid_random_state(rng, cls):
    p, y, masks, _ = make(rng, 2_000)
    data = cls(random_state=0).fit(p, y, X=masks).to_dict()
    data["params"]["random_state"] = -1  # loaded before, though no fit accepts it
    with pytest.raises(ValueError, match="invalid parameters.*random_state must be None"):
        cls.from_dict(data)


@pytest.mark.parametrize("cls", [HKRR, DFMC])
def test_a_generator_random_state_is_refused_at_fit_because_the_model_file_records_the_seed(rng, cls):
    p, y, masks, _ = make(rng, 2_000)
    with pytest.raises(TypeError, match=r"random_state must be None or a non-negative integer \(a model file records"):
        cls(random_state=np.random.default_rng(0)).fit(p, y, X=masks)


@pytest.mark.parametrize(("field", "value"), [("n_passes_", 0), ("n_passes_", -3), ("n_groups_", True)])
def test_hkrr_load_rejects_pass_and_group_counts_that_are_not_positive_integers(rng, field, value):
    p, y, masks, _ = make(rng, 2_000)
    data = HKRR(random_state=0).fit(p, y, X=masks).to_dict()
    data["state"][field] = value  # a negative pass count loaded; True passed as 1 group, then failed elsewhere
    with pytest.raises(ValueError, match=rf"state.{field} must be a positive integer; got {value}"):
        HKRR.from_dict(data)


def test_group_masks_accepts_bool_and_zero_one_columns():
    X = pd.DataFrame({"a": [True, False], "b": [0, 1], "c": [1.0, 0.0]})
    assert group_masks(X, 2).tolist() == [[True, False, True], [False, True, False]]


def test_bank_marketing_groups_match_the_benchmark_protocol_counts():
    from mcal.datasets import bank_marketing_groups, load_bank_marketing

    counts = bank_marketing_groups(load_bank_marketing()).sum().to_dict()
    # group sizes of the MCGrad benchmark (Hansen et al.'s dataloader), recounted on the whole dataset
    assert counts == {
        "job=management": 9458,
        "job=technician": 7597,
        "job=entrepreneur": 1487,
        "job=blue-collar": 9732,
        "job=retired": 2264,
        "marital=married": 27214,
        "marital=single": 12790,
        "education=primary": 6851,
        "education=secondary": 23202,
        "education=tertiary": 13301,
        "housing=yes": 25130,
        "housing=no": 20081,
        "age<30": 3050,
        "30<=age<40": 17359,
        "age>=50": 12185,
    }


@pytest.mark.parametrize(
    "make_cal",
    [lambda: HKRR(groups="generated", random_state=0), lambda: DFMC(groups="generated", n_jobs=1, random_state=0)],
    ids=["hkrr", "dfmc"],
)
def test_generated_segments_from_features_find_a_planted_region(rng, tmp_path, make_cal):
    p, y, X = feature_data(rng, 20_000)
    pt, yt, Xt = feature_data(rng, 20_000)
    cal = make_cal().fit(p, y, X=X)
    assert cal.segments_["parts"][0]["kind"] == "generated"
    q = cal.predict(pt, X=Xt)
    # MCE over the segments generated from the test features (depth 3): the base scores miss the region (about
    # 22 sigma); the region straddles an age tertile and HKRR snaps to 10 levels, so 0.6 of it is the bound
    assert mce(yt, q, X=Xt).mce_sigma < 0.6 * mce(yt, pt, X=Xt).mce_sigma
    save(cal, tmp_path / "m.json")
    assert np.array_equal(load(tmp_path / "m.json").predict(pt, X=Xt), q)


@pytest.mark.parametrize("cls", [HKRR, DFMC])
def test_segment_params_reach_the_segment_generator(rng, cls):
    p, y, X = feature_data(rng, 2_000)
    cal = cls(groups="generated", segment_params={"max_depth": 1}, random_state=0).fit(p, y, X=X)
    n = cal.n_groups_ if cls is HKRR else cal.n_features_in_
    assert n == 1 + 3 + 3  # the whole table, 3 job levels (2 most frequent + "other"), 3 age tertiles


@pytest.mark.parametrize("cls", [HKRR, DFMC])
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"groups": "auto"}, "groups must be 'columns' or 'generated'; got 'auto'"),
        ({"groups": "generated", "segment_params": {"depth": 2}}, "segment_params must be None or a dict"),
        ({"segment_params": {"max_depth": 2}}, "segment_params is only used with groups='generated'"),
    ],
)
def test_bad_group_settings_raise_clear_errors(cls, params, match):
    with pytest.raises(ValueError, match=match):
        cls(**params).fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1], X=np.ones((4, 1), dtype=bool))


def test_load_rejects_segment_definitions_of_the_wrong_size(rng):
    p, y, X = feature_data(rng, 2_000)
    data = HKRR(groups="generated", random_state=0).fit(p, y, X=X).to_dict()
    data["state"]["segments_"]["parts"][0]["segments"].pop()
    with pytest.raises(ValueError, match="segments_ must define"):
        HKRR.from_dict(data)


@pytest.mark.parametrize("cls", [HKRR, DFMC])
def test_generated_groups_record_the_dataframe_columns_their_segments_read_through_a_model_file(rng, tmp_path, cls):
    p, y, X = feature_data(rng, 2_000)
    X["unused"] = 1.0  # a single level: no segment reads it
    with pytest.warns(CalibrationWarning, match="'unused' has a single level"):
        cal = cls(groups="generated", random_state=0).fit(p, y, X=X)
    assert cal.segment_columns_ == ["job", "age"]
    save(cal, tmp_path / "m.json")
    assert load(tmp_path / "m.json").segment_columns_ == ["job", "age"]


@pytest.mark.parametrize("cls", [HKRR, DFMC])
def test_generated_groups_fitted_on_an_array_record_no_segment_columns(rng, cls):
    p, y, X = feature_data(rng, 2_000)
    assert cls(groups="generated", random_state=0).fit(p, y, X=X[["age"]].to_numpy()).segment_columns_ is None


@pytest.mark.parametrize("cls", [HKRR, DFMC])
def test_load_rejects_segment_columns_that_are_not_the_features_of_the_segments(rng, cls):
    p, y, X = feature_data(rng, 2_000)
    data = cls(groups="generated", random_state=0).fit(p, y, X=X).to_dict()
    data["state"]["segment_columns"] = ["job", "income"]
    with pytest.raises(
        ValueError,
        match=r"state.segment_columns must be null or the names of the features that "
        r"state.segments_ reads, \['job', 'age'\]; got \['job', 'income'\]",
    ):
        cls.from_dict(data)


def test_bank_marketing_groups_name_missing_columns():
    from mcal.datasets import bank_marketing_groups, load_bank_marketing

    data = load_bank_marketing().head(50).drop(columns=["housing", "age"])
    with pytest.raises(ValueError, match=r"data must hold the columns .*; got a frame missing \['housing', 'age'\]"):
        bank_marketing_groups(data)  # was pandas' KeyError for 'age' alone
    with pytest.raises(TypeError, match="data must be a DataFrame of Bank Marketing rows; got ndarray"):
        bank_marketing_groups(data.to_numpy())


def test_prediction_levels_put_a_score_on_an_edge_in_the_level_below_it():
    # levels (k lam, (k+1) lam]: 0.14 * 100 rounds to 14.000000000000002, yet 0.14 closes level 13
    from mcal.groups._hkrr import prediction_levels

    np.testing.assert_array_equal(prediction_levels(np.array([0.0, 0.1, 0.1 + 1e-9, 0.55, 1.0]), 10), [0, 0, 1, 5, 9])
    np.testing.assert_array_equal(prediction_levels(np.array([0.07, 0.14, 0.1400001, 0.56]), 100), [6, 13, 14, 55])


def test_hkrr_checks_a_cell_holding_exactly_alpha_lam_of_its_group():
    # one group of weight 8, 2 levels, alpha 0.5: tau = 0.5 * 0.5 * 8 = 2, the weight of level 0 (2 rows)
    p = np.array([0.2, 0.2, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7])
    y = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    result = hkrr_multicalibrate(p, y, np.ones(8), [np.arange(8)], n_levels=2, alpha=0.5, oracle=False,
                                 rng=np.random.default_rng(0), max_iter=10)  # fmt: skip
    assert result.update_levels.tolist() == [0]
    np.testing.assert_allclose(result.update_deltas, [0.8], rtol=1e-12)


@pytest.mark.parametrize("make_cal", [lambda: HKRR(groups="generated"), lambda: DFMC(n_jobs=1)], ids=["hkrr", "dfmc"])
def test_group_methods_refuse_a_column_of_date_objects_as_the_segments_do(rng, make_cal):
    # DFMC's encoding and HKRR's generated segments made one category per timestamp
    import datetime

    p, y, masks, _ = make(rng, 400)
    days = [datetime.date(2024, 1, 1) + datetime.timedelta(days=int(d)) for d in rng.integers(0, 30, p.size)]
    X = pd.DataFrame({"day": pd.Series(days, dtype=object), "g": masks[:, 0]})
    with pytest.raises(
        TypeError,
        match=r"X column 'day' must be converted to numbers .* or declared in "
        r"categorical_features; got dtype object holding date values",
    ):
        make_cal().fit(p, y, X=X)
