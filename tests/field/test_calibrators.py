"""Tests of the field-aware baselines: NeuCalib, AdaCalib and PerFieldCalibrator."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from mcal import (
    AdaCalib,
    CalibrationWarning,
    IsotonicCalibration,
    NeuCalib,
    PerFieldCalibrator,
    PlattScaling,
    load,
    save,
)
from mcal.metrics import ece, f_rce, log_loss

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

#: true calibrated logit 0.5 s + SHIFT[field]: scores over-confident everywhere, and shifted per field
SHIFT = {"a": 0.8, "b": -0.6, "c": 0.0, "rare": 1.5}
FAST = {"max_iter": 150, "random_state": 0}


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def make(rng, counts):
    field = np.concatenate([[k] * v for k, v in counts.items()])
    s = rng.normal(-1.0, 2.0, field.size)
    truth = expit(0.5 * s + np.vectorize(SHIFT.get)(field))
    return expit(s), (rng.random(field.size) < truth).astype(float), pd.DataFrame({"f": field}), truth


def fit_data(rng):
    return make(rng, {"a": 1000, "b": 1000, "c": 1000, "rare": 10})


def test_data_is_miscalibrated_globally_and_per_field(rng):
    p, y, X, truth = make(rng, {"a": 3000, "b": 3000, "c": 3000})
    assert ece(y, p) > 0.08 and f_rce(y, p, field=X["f"]) > 0.2 and ece(y, truth) < 0.02


@pytest.mark.parametrize(
    ("make_cal", "ll_margin", "ece_bound", "frce_bound"),
    [
        # well-specified for all three; margins from the oracle's log loss (0.533) and ECE (0.012) here
        (lambda: NeuCalib(field="f", **FAST), 0.01, 0.03, 0.08),
        (lambda: AdaCalib(field="f", **FAST), 0.01, 0.03, 0.08),
        (lambda: PerFieldCalibrator(PlattScaling(), field="f"), 0.005, 0.02, 0.06),
    ],
    ids=["neucalib", "adacalib", "per-field-platt"],
)
def test_field_calibrators_recover_the_planted_map_better_than_the_identity(
    rng, make_cal, ll_margin, ece_bound, frce_bound
):
    p, y, X, _ = fit_data(rng)
    pt, yt, Xt, truth = make(rng, {"a": 3000, "b": 3000, "c": 3000})
    q = make_cal().fit(p, y, X=X).predict(pt, X=Xt)
    # identity: log loss 0.61, ECE 0.09, F-RCE 0.25
    assert log_loss(yt, q) < log_loss(yt, truth) + ll_margin < log_loss(yt, pt)
    assert ece(yt, q) < ece_bound < ece(yt, pt)
    assert f_rce(yt, q, field=Xt["f"]) < frce_bound < f_rce(yt, pt, field=Xt["f"])


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
def test_a_field_with_ten_rows_uses_the_fallback_fitted_on_all_rows(rng, cls):
    p, y, X, _ = fit_data(rng)
    cal = cls(field="f", **FAST).fit(p, y, X=X)
    assert dict(zip(cal.field_values_, cal.field_slots_.tolist(), strict=False)) == {"a": 0, "b": 1, "c": 2, "rare": -1}
    grid = np.linspace(0.02, 0.98, 30)
    rare = cal.predict(grid, X=pd.DataFrame({"f": ["rare"] * 30}))
    with pytest.warns(CalibrationWarning, match="unseen"):
        unseen = cal.predict(grid, X=pd.DataFrame({"f": ["zz"] * 30}))
    assert np.array_equal(rare, unseen)
    # the fallback is a global calibration: on the pooled fields it beats the identity
    pt, yt, _Xt, _ = make(rng, {"a": 3000, "b": 3000, "c": 3000})
    pooled = cal.predict(pt, X=pd.DataFrame({"f": ["rare"] * pt.size}))
    assert log_loss(yt, pooled) < log_loss(yt, pt) - 0.05


def test_per_field_calibrator_falls_back_to_the_global_calibrator_for_a_field_with_ten_rows(rng):
    p, y, X, _ = fit_data(rng)
    cal = PerFieldCalibrator(field="f").fit(p, y, X=X)
    assert cal.field_slots_.tolist() == [0, 1, 2, -1] and len(cal.field_calibrators_) == 3
    rare = X["f"].to_numpy() == "rare"
    assert np.array_equal(cal.predict(p[rare], X=X[rare]), cal.global_calibrator_.predict(p[rare]))
    assert isinstance(cal.global_calibrator_, IsotonicCalibration)  # the documented default
    own = X["f"].to_numpy() == "b"
    assert np.array_equal(cal.predict(p[own], X=X[own]), cal.field_calibrators_[1].predict(p[own]))


def test_per_field_calibrator_warns_for_a_frequent_field_with_one_class(rng):
    p, y, X, _ = fit_data(rng)
    y[X["f"].to_numpy() == "c"] = 0.0
    with pytest.warns(CalibrationWarning, match="single class"):
        cal = PerFieldCalibrator(PlattScaling(), field="f").fit(p, y, X=X)
    assert cal.field_slots_.tolist() == [0, 1, -1, -1]


def test_adacalib_is_strictly_increasing_in_the_score_for_every_field(rng):
    p, y, X, _ = fit_data(rng)
    cal = AdaCalib(field="f", **FAST).fit(p, y, X=X)
    grid = np.linspace(0.0, 1.0, 2001)
    for value in ["a", "b", "c", "rare"]:
        assert np.all(np.diff(cal.predict(grid, X=pd.DataFrame({"f": [value] * grid.size}))) > 0)


def test_neucalib_order_penalty_keeps_knot_values_nearly_increasing(rng):
    p, y, X, _ = fit_data(rng)
    values = NeuCalib(field="f", **FAST).fit(p, y, X=X).module_["knot_values"].detach().numpy()
    free = NeuCalib(field="f", monotonic_penalty=0.0, max_iter=150, learning_rate=0.05, random_state=0)
    free_values = free.fit(p, y, X=X).module_["knot_values"].detach().numpy()
    # the penalty (Pan et al. 2020) holds violations to a fraction of the unpenalised fit's
    assert np.max(values[:-1] - values[1:], initial=0.0) < 0.02
    assert np.max(values[:-1] - values[1:], initial=0.0) < np.max(free_values[:-1] - free_values[1:])


@pytest.mark.parametrize(
    "make_cal",
    [lambda: NeuCalib(field="f", **FAST), lambda: AdaCalib(field="f", **FAST), lambda: PerFieldCalibrator(field="f")],
    ids=["neucalib", "adacalib", "per-field-isotonic"],
)
@pytest.mark.slow
def test_integer_weights_equal_duplicated_rows(rng, make_cal):
    p, y, X, _ = fit_data(rng)
    w = rng.integers(0, 4, p.size)
    rows = np.repeat(np.arange(p.size), w)
    weighted = make_cal().fit(p, y, X=X, sample_weight=w).predict(p, X=X)
    copied = make_cal().fit(p[rows], y[rows], X=X.iloc[rows]).predict(p, X=X)
    assert np.allclose(weighted, copied, rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    "make_cal",
    [
        lambda: NeuCalib(field="f", **FAST),
        lambda: AdaCalib(field="f", **FAST),
        lambda: PerFieldCalibrator(PlattScaling(), field="f"),
    ],
    ids=["neucalib", "adacalib", "per-field-platt"],
)
@pytest.mark.slow
def test_save_load_round_trip_is_exact(rng, tmp_path, make_cal):
    p, y, X, _ = fit_data(rng)
    cal = make_cal().fit(p, y, X=X)
    save(cal, tmp_path / "m.json")
    again = load(tmp_path / "m.json")
    assert np.array_equal(again.predict(p, X=X), cal.predict(p, X=X))
    assert any(tmp_path.glob("m.*.safetensors")) == isinstance(cal, (NeuCalib, AdaCalib))


def test_load_rejects_weights_of_the_wrong_shape(rng):
    p, y, X, _ = fit_data(rng)
    cal = AdaCalib(field="f", **FAST).fit(p, y, X=X)
    tensors = cal._get_tensors()
    tensors["attention"] = tensors["attention"][:-1]
    with pytest.raises(ValueError, match="attention' must have shape"):
        AdaCalib.from_dict(cal.to_dict(), tensors)


def test_load_rejects_a_swapped_or_missing_weights_file_with_a_clear_error(rng, tmp_path):
    p, y, X, _ = fit_data(rng)
    neu = save(NeuCalib(field="f", max_iter=5, random_state=0).fit(p, y, X=X), tmp_path / "neu.json")
    save(AdaCalib(field="f", max_iter=5, random_state=0).fit(p, y, X=X), tmp_path / "ada.json")
    (neu_weights,), (ada_weights,) = tmp_path.glob("neu.*.safetensors"), tmp_path.glob("ada.*.safetensors")
    neu_weights.write_bytes(ada_weights.read_bytes())
    with pytest.raises(ValueError, match="does not match the checksum recorded in .*neu.json"):
        load(neu)
    neu_weights.unlink()
    with pytest.raises(
        FileNotFoundError, match=r"weights file .*neu\.\w+\.safetensors', which model file .*neu.json' names"
    ):
        load(neu)


def test_a_failed_save_of_a_network_model_leaves_no_weights_file(rng, tmp_path, disk_full_on_model_files):
    p, y, X, _ = fit_data(rng)
    cal = NeuCalib(field="f", max_iter=5, random_state=0).fit(p, y, X=X)
    with pytest.raises(OSError, match="No space left"):
        save(cal, tmp_path / "m.json")
    assert list(tmp_path.iterdir()) == []


def test_load_rejects_malformed_field_slots(rng):
    p, y, X, _ = fit_data(rng)
    data = PerFieldCalibrator(field="f").fit(p, y, X=X).to_dict()
    data["state"]["field_slots_"]["__ndarray__"] = [0, 2, 1, -1]
    with pytest.raises(ValueError, match="field_slots_"):
        PerFieldCalibrator.from_dict(data)


@pytest.mark.slow
def test_same_seed_gives_the_same_fit_and_an_array_field_column_works(rng):
    p, y, X, _ = fit_data(rng)
    arr = np.column_stack([X["f"].to_numpy(), np.zeros(p.size)])
    a = AdaCalib(field=0, **FAST).fit(p, y, X=arr).predict(p, X=arr)
    b = AdaCalib(field="f", **FAST).fit(p, y, X=X).predict(p, X=X)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib, PerFieldCalibrator])
def test_missing_field_or_features_raise_clear_errors(rng, cls):
    p, y, X, _ = fit_data(rng)
    with pytest.raises(TypeError, match="field must be a column name"):
        cls().fit(p, y, X=X)
    with pytest.raises(ValueError, match="X must hold the field column 'f'"):
        cls(field="f").fit(p, y)
    with pytest.raises(ValueError, match="X must have the field column 'g'"):
        cls(field="g").fit(p, y, X=X)


@pytest.mark.parametrize(
    ("cal", "match"),
    [
        (PerFieldCalibrator(AdaCalib(), field="f"), "calibrator must be univariate"),
        (PerFieldCalibrator(min_samples_per_field=0, field="f"), "min_samples_per_field must be a positive integer"),
        (AdaCalib(field="f", bin_counts=(10, 5)), "bin_counts must be a non-empty increasing"),
        (AdaCalib(field="f", bin_counts=()), "bin_counts must be a non-empty sequence"),
        (AdaCalib(field="f", bin_counts=(5, 0)), "bin_counts\\[1\\] must be a positive integer"),
        (NeuCalib(field=" "), "field must be a column name \\(non-empty str\\)"),
        (AdaCalib(field="f", min_samples_per_bin=0), "min_samples_per_bin must be a positive integer"),
        (NeuCalib(field="f", n_knots=1), "n_knots must be an integer >= 2"),
        (NeuCalib(field="f", monotonic_penalty=-1.0), "monotonic_penalty must be a non-negative"),
        (NeuCalib(field="f", learning_rate=0.0), "learning_rate must be a positive finite number"),
        (AdaCalib(field="f", max_iter=0), "max_iter must be a positive integer"),
        (AdaCalib(field="f", hidden_dim=0), "hidden_dim must be a positive integer"),
        (NeuCalib(field="f", embedding_dim=0), "embedding_dim must be a positive integer"),
        (NeuCalib(field="f", n_threads=0), "n_threads must be a positive integer"),
    ],
)
def test_bad_parameters_raise_clear_errors(rng, cal, match):
    p, y, X, _ = fit_data(rng)
    with pytest.raises(ValueError, match=match):
        cal.fit(p, y, X=X)


#: One row per kind of parameter: a value of the wrong type raises TypeError naming the parameter (bools are not
#: integers nor numbers, as everywhere in mcal).
WRONG_TYPES = {
    "integer": [
        (NeuCalib, "n_knots", "20"),
        (NeuCalib, "max_iter", 2.5),
        (AdaCalib, "hidden_dim", True),
        (AdaCalib, "min_samples_per_bin", 20.0),
        (PerFieldCalibrator, "min_samples_per_field", "100"),
        (NeuCalib, "n_threads", 1.0),
    ],
    "real": [(NeuCalib, "learning_rate", [0.1]), (AdaCalib, "alpha", "1"), (NeuCalib, "monotonic_penalty", None)],
    "integer sequence": [
        (AdaCalib, "bin_counts", 5),
        (AdaCalib, "bin_counts", "5,10"),
        (AdaCalib, "bin_counts[1]", (5, 10.0)),
    ],
    "column": [(NeuCalib, "field", 1.5), (AdaCalib, "field", True), (PerFieldCalibrator, "field", None)],
    "column sequence": [
        (NeuCalib, "auxiliary_features", "w"),
        (AdaCalib, "auxiliary_features", 3),
        (NeuCalib, "auxiliary_features[0]", [None]),
    ],
    "seed": [(AdaCalib, "random_state", 1.5)],
}


@pytest.mark.parametrize("kind", WRONG_TYPES)
def test_a_parameter_of_the_wrong_type_raises_type_error_naming_it(rng, kind):
    p, y, X, _ = make(rng, {"a": 200, "b": 200})
    for cls, name, value in WRONG_TYPES[kind]:
        param = name.split("[")[0]
        cal = cls(**{"field": "f", param: value})
        with pytest.raises(TypeError, match=f"^{re.escape(name)} must be ") as info:
            cal.fit(p, y, X=X)
        assert not isinstance(info.value, ValueError)


def test_a_non_calibrator_is_rejected_with_a_type_error(rng):
    p, y, X, _ = fit_data(rng)
    with pytest.raises(TypeError, match="calibrator must be an mcal calibrator or None; got str"):
        PerFieldCalibrator("isotonic", field="f").fit(p, y, X=X)


def test_seen_values_raise_no_warning_at_predict(rng):
    p, y, X, _ = fit_data(rng)
    cal = PerFieldCalibrator(field="f").fit(p, y, X=X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cal.predict(p, X=X)


def with_feature(rng, counts):
    """The planted data plus a numeric column w that moves the true logit by 0.8 w."""
    p, _y, X, truth = make(rng, counts)
    w = rng.normal(size=p.size)
    truth = expit(np.log(truth / (1 - truth)) + 0.8 * w)
    return p, (rng.random(p.size) < truth).astype(float), X.assign(w=w), truth


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
@pytest.mark.slow
def test_auxiliary_features_feed_an_auxiliary_network(rng, tmp_path, cls):
    p, y, X, _ = with_feature(rng, {"a": 1000, "b": 1000, "c": 1000, "rare": 10})
    pt, yt, Xt, truth = with_feature(rng, {"a": 3000, "b": 3000, "c": 3000})
    plain = cls(field="f", **FAST).fit(p, y, X=X).predict(pt, X=Xt)
    cal = cls(field="f", auxiliary_features=["w"], **FAST).fit(p, y, X=X)
    q = cal.predict(pt, X=Xt)
    # the score ignores w; only the auxiliary network can use it (oracle log loss 0.50 here)
    assert log_loss(yt, q) < log_loss(yt, plain) - 0.03
    assert log_loss(yt, q) < log_loss(yt, truth) + 0.02
    save(cal, tmp_path / "m.json")
    assert np.array_equal(load(tmp_path / "m.json").predict(pt, X=Xt), q)


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
@pytest.mark.slow
def test_auxiliary_l2_keeps_noise_features_from_being_memorised(rng, cls):
    # 60 pure-noise auxiliary columns on 1,000 calibration rows: unpenalised and without early stopping, the
    # perceptron memorises the calibration set (held-out log loss 1.8-2.4 against 0.56 for the plain fit); the
    # defaults (a small L2 penalty, early stopping on 20 % of the rows) keep most of it away (0.62-0.67 here:
    # so many pure-noise columns on so few rows still cost something)
    p, y, X, _ = make(rng, {"a": 500, "b": 500})
    pt, yt, Xt, _ = make(rng, {"a": 3000, "b": 3000})
    noise = [f"n{j}" for j in range(60)]
    X = X.join(pd.DataFrame(rng.normal(size=(p.size, 60)), columns=noise))
    Xt = Xt.join(pd.DataFrame(rng.normal(size=(pt.size, 60)), columns=noise))
    plain = log_loss(yt, cls(field="f", **FAST).fit(p, y, X=X).predict(pt, X=Xt))
    free = cls(field="f", auxiliary_features=noise, auxiliary_l2=0.0, validation_fraction=0.0, **FAST)
    free = log_loss(yt, free.fit(p, y, X=X).predict(pt, X=Xt))
    default = log_loss(yt, cls(field="f", auxiliary_features=noise, **FAST).fit(p, y, X=X).predict(pt, X=Xt))
    assert free > plain + 1.0
    assert default < plain + 0.15


def test_adacalib_with_auxiliary_features_stays_increasing_in_the_score(rng):
    p, y, X, _ = with_feature(rng, {"a": 1000, "b": 1000, "c": 1000})
    cal = AdaCalib(field="f", auxiliary_features=["w"], **FAST).fit(p, y, X=X)
    grid = np.linspace(0.001, 0.999, 500)
    for value, w in [("a", -2.0), ("b", 0.0), ("unseen", 1.5)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CalibrationWarning)
            q = cal.predict(grid, X=pd.DataFrame({"f": [value] * grid.size, "w": w}))
        assert np.all(np.diff(q) > 0)


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
@pytest.mark.parametrize(
    ("aux", "match"),
    [
        ([], "auxiliary_features must be None or a non-empty sequence"),
        (["f"], "auxiliary feature columns must be numeric"),
        (["zz"], "auxiliary feature columns \\['zz'\\]"),
    ],
)
def test_bad_auxiliary_features_raise_clear_errors(rng, aux, match, cls):
    p, y, X, _ = with_feature(rng, {"a": 200, "b": 200})
    with pytest.raises(ValueError, match=match):
        cls(field="f", auxiliary_features=aux, max_iter=5).fit(p, y, X=X)


def field_balance(y, q, field):
    """MCNet eq. 11-12 by hand: population std over fields of sum_{i in c} (q_i - y_i) / n."""
    diff = pd.Series(q - y).groupby(np.asarray(field)).sum() / y.size
    return float(np.sqrt(((diff - diff.mean()) ** 2).mean()))


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
@pytest.mark.slow
def test_field_balance_penalty_lowers_the_spread_of_per_field_errors(rng, cls):
    # every value is below min_samples_per_field, so one shared map of the score serves all fields and cannot
    # fit each field's shift; the fields' scores lie in different ranges (centres +1.5, -1.5, 0), so the map can
    # trade log loss for balance by bending differently there: without the penalty the per-field errors differ
    field = np.repeat(["a", "b", "c"], 1500)
    s = rng.normal(np.repeat([1.5, -1.5, 0.0], 1500), 1.0)
    truth = expit(0.5 * s + np.vectorize(SHIFT.get)(field))
    p, y, X = expit(s), (rng.random(field.size) < truth).astype(float), pd.DataFrame({"f": field})
    off = cls(field="f", min_samples_per_field=10_000, **FAST).fit(p, y, X=X).predict(p, X=X)
    on = cls(field="f", min_samples_per_field=10_000, alpha=20.0, **FAST).fit(p, y, X=X).predict(p, X=X)
    assert field_balance(y, on, X["f"]) < 0.5 * field_balance(y, off, X["f"])
    assert log_loss(y, on) > log_loss(y, off)  # the price of the balance: the penalty is really in the loss


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
@pytest.mark.parametrize("param", ["alpha", "auxiliary_l2"])
@pytest.mark.parametrize(
    ("value", "error"), [(-1.0, ValueError), (np.nan, ValueError), ("1", TypeError), (True, TypeError)]
)
def test_bad_penalty_weights_raise_a_clear_error(rng, cls, param, value, error):
    p, y, X, _ = make(rng, {"a": 200, "b": 200})
    with pytest.raises(error, match=f"{param} must be a non-negative finite number"):
        cls(field="f", max_iter=5, **{param: value}).fit(p, y, X=X)


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
def test_fit_and_predict_restore_the_torch_thread_setting(rng, cls):
    p, y, X, _ = fit_data(rng)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        cal = cls(field="f", max_iter=5, n_threads=1, random_state=0).fit(p, y, X=X)
        cal.predict(p, X=X)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
@pytest.mark.parametrize(
    ("fraction", "error"), [(1.0, ValueError), (-0.1, ValueError), ("0.2", TypeError), (True, TypeError)]
)
def test_bad_validation_fraction_raises_a_clear_error(rng, cls, fraction, error):
    p, y, X, _ = make(rng, {"a": 200, "b": 200})
    with pytest.raises(error, match="validation_fraction must be None or a number in \\[0, 1\\)"):
        cls(field="f", validation_fraction=fraction, max_iter=5).fit(p, y, X=X)


def test_early_stopping_keeps_the_best_checked_parameters():
    # train towards x = 3 while the held-out loss wants x = 1: Adam (step 0.1) passes x = 1 near step 10, and
    # the kept parameter is the best of those checked every 10 steps, never the last one
    from mcal.field._network import make_parameters, train_full_batch

    module = make_parameters({"x": np.zeros(())})
    checked = []

    def held_out():
        checked.append(float(module["x"].detach()))
        return (module["x"] - 1.0) ** 2

    train_full_batch(module, lambda: (module["x"] - 3.0) ** 2, learning_rate=0.1, max_iter=500, held_out=held_out)
    best = min(checked, key=lambda x: (x - 1.0) ** 2)
    assert float(module["x"].detach()) == best and abs(best - 1.0) < 0.2
    assert len(checked) < 12  # stopped after 5 checks without improvement, not after 500 steps


def test_a_diverging_fit_is_a_value_error_naming_the_learning_rate():
    # Adam's first step of 100 takes x past 50, where the loss -x + 0 sqrt(50 - x) is NaN (it was a RuntimeError)
    from mcal.field._network import make_parameters, train_full_batch

    module = make_parameters({"x": np.zeros(())})
    with pytest.raises(ValueError, match=r"learning_rate must be low enough .*; got 100\.0, with which the loss"):
        train_full_batch(
            module, lambda: -module["x"] + 0.0 * torch.sqrt(50.0 - module["x"]), learning_rate=100.0, max_iter=50
        )


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
@pytest.mark.parametrize(
    ("seed", "error"),
    [
        (-1, ValueError),
        (1.5, TypeError),
        (True, TypeError),
        ("0", TypeError),
        (np.random.default_rng(0), TypeError),
    ],  # a Generator: the fitted model could not be saved
)
def test_a_bad_random_state_raises_a_clear_error(rng, cls, seed, error):
    p, y, X, _ = fit_data(rng)
    with pytest.raises(error, match="random_state must be None or a non-negative integer"):
        cls(field="f", max_iter=1, random_state=seed).fit(p, y, X=X)


@pytest.mark.parametrize(
    ("make_cal", "attr"),
    [
        (lambda: NeuCalib(field="f", max_iter=5), "knots_"),
        (lambda: NeuCalib(field="f", max_iter=5), "auxiliary_mean_"),
        (lambda: AdaCalib(field="f", max_iter=5), "keypoints_"),
        (lambda: AdaCalib(field="f", max_iter=5), "keypoint_groups_"),
        (lambda: AdaCalib(field="f", max_iter=5), "candidate_mask_"),
    ],
)
def test_load_rejects_a_fitted_array_that_is_not_an_array(rng, make_cal, attr):
    p, y, X, _ = fit_data(rng)
    cal = make_cal().fit(p, y, X=X)
    data = cal.to_dict()
    data["state"][attr] = None
    with pytest.raises(ValueError, match=f"state.{attr} must be an array of .*; got NoneType"):
        type(cal).from_dict(data, cal._get_tensors())


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_load_rejects_weights_of_another_dtype(rng, dtype):
    p, y, X, _ = fit_data(rng)
    cal = NeuCalib(field="f", max_iter=5).fit(p, y, X=X)
    tensors = cal._get_tensors()
    tensors["knot_values"] = tensors["knot_values"].astype(dtype)
    with pytest.raises(
        ValueError, match=f"weight 'knot_values' must be float64, as mcal.save writes it; got {np.dtype(dtype)}"
    ):
        NeuCalib.from_dict(cal.to_dict(), tensors)


@pytest.mark.parametrize("cls", [NeuCalib, AdaCalib])
def test_pickles_hold_arrays_only_and_round_trip_exactly(rng, cls):
    import pickle

    p, y, X, _ = fit_data(rng)
    cal = cls(field="f", max_iter=5, random_state=0).fit(p, y, X=X)
    state = cal.__getstate__()
    assert set(state["module_"]) == set(cal._shapes())
    assert all(type(v) is np.ndarray and v.dtype == np.float64 for v in state["module_"].values())
    assert "module_" in cal.__dict__ and not isinstance(cal.__dict__["module_"], dict)  # the instance keeps its module
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(cal)).predict(p, X=X), cal.predict(p, X=X))


def test_cli_reads_field_codes_as_text_so_that_digit_codes_keep_their_leading_zeros(rng, tmp_path, capsys):
    from mcal.cli import main

    p, y, X, _ = fit_data(rng)
    codes = X["f"].map({"a": "01", "b": "02", "c": "x1", "rare": "x2"})
    pd.DataFrame({"p": p, "y": y, "f": codes}).to_csv(tmp_path / "fit.csv", index=False)
    new = pd.DataFrame({"p": p, "f": codes})[codes.isin(["01", "02"])]  # digits only: read as numbers, 01 became 1
    new.to_csv(tmp_path / "new.csv", index=False)
    model_path = tmp_path / "m.json"
    assert (
        main(
            [
                "fit",
                str(tmp_path / "fit.csv"),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                "per-field-isotonic",
                "--field",
                "f",
                "-o",
                str(model_path),
            ]
        )
        == 0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no value is unseen
        assert main(["predict", str(model_path), str(tmp_path / "new.csv"), "-o", str(tmp_path / "out.csv")]) == 0
    model = load(model_path)
    assert model.field_values_ == ["01", "02", "x1", "x2"]
    expected = model.predict(new["p"].to_numpy(), X=new[["f"]])
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "out.csv")["p_calibrated"].to_numpy(), expected)
    capsys.readouterr()


@pytest.mark.slow
def test_neucalib_is_close_to_isotonic_on_an_over_confident_base(rng):
    # the base reports expit(4 z) for true log-odds z ~ N(-1, 1.5^2): two thirds of its logits lie beyond +-3,
    # where knots fixed at logit(k / 21) left only the extension of the outer segments, started at the identity
    # (held-out log loss 0.52 against isotonic's 0.48; base 0.86)
    def draw(n):
        z = rng.normal(-1.0, 1.5, n)
        return expit(4.0 * z), (rng.random(n) < expit(z)).astype(float), pd.DataFrame({"f": rng.choice(["a", "b"], n)})

    p, y, X = draw(20_000)
    pt, yt, Xt = draw(20_000)
    iso = log_loss(yt, IsotonicCalibration().fit(p, y).predict(pt))
    neu = NeuCalib(field="f", random_state=0).fit(p, y, X=X)
    assert log_loss(yt, pt) > 0.8
    assert log_loss(yt, neu.predict(pt, X=Xt)) < iso + 0.01


def test_neucalib_knots_are_the_weighted_quantiles_of_the_calibration_logits():
    # logits -4, -2, 0, 2, 4 with weights 1, 1, 2, 1, 1 (W = 6); n_knots=3 -> levels 0, 1/2, 1: the smallest logit,
    # the first with cumulative weight >= 3 (0, cumulative 4) and the largest
    s = np.array([-4.0, -2.0, 0.0, 2.0, 4.0])
    X = pd.DataFrame({"f": ["a"] * 5})
    cal = NeuCalib(field="f", n_knots=3, max_iter=1, min_samples_per_field=1, random_state=0)
    cal.fit(expit(s), np.array([0.0, 1.0, 0.0, 1.0, 1.0]), X=X, sample_weight=np.array([1.0, 1.0, 2.0, 1.0, 1.0]))
    np.testing.assert_allclose(cal.knots_, [-4.0, 0.0, 4.0], atol=1e-9)
    # one distinct score: a unit interval around its logit
    one = NeuCalib(field="f", max_iter=1, min_samples_per_field=1).fit(np.full(5, 0.5), [0, 1, 0, 1, 1], X=X)
    np.testing.assert_allclose(one.knots_, [-1.0, 1.0], atol=1e-12)
