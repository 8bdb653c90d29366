"""The fitted-state tables (``_state_constraints``): every fitted attribute of every registered calibrator has a
rule, a model file whose field breaks its rule is refused with a message naming the field, and the rules of
:mod:`mcal._persistence.state` say what they found."""

import re

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal._persistence.state import Array, Each, NoneOr, Number, NumberOr, check_rule
from mcal._registry import METHODS, MULTICLASS_METHODS, ONE_VS_REST, class_by_name

_CLASSES = sorted({t.rpartition(":")[2] for t in [*METHODS.values(), *MULTICLASS_METHODS.values(), ONE_VS_REST[1]]})


@pytest.mark.parametrize("name", _CLASSES)
def test_every_fitted_attribute_of_every_registered_calibrator_has_a_rule(name):
    cls = class_by_name(name)
    assert [a for a in cls._state_attrs if a not in cls._state_constraints] == []
    assert set(cls._state_constraints) <= set(cls._state_attrs) | {"classes_", "n_classes_"}  # no stale rule


def _multiclass_mcgrad(data):
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), 300)
    y = np.array([rng.choice(3, p=row) for row in p])
    X = pd.DataFrame({"f": rng.normal(size=300)})
    params = {"early_stopping": None, "max_rounds": 2, "n_estimators": 5, "n_jobs": 1, "random_state": 0}
    return mcal.multiclass.MulticlassMCGrad(**params).fit(p, y, X=X)


def _neucalib_with_auxiliary_features(data):
    pytest.importorskip("torch").set_num_threads(1)
    p, y, field = data
    X = pd.DataFrame({"f": field, "x": np.linspace(0.0, 1.0, p.size)})
    return mcal.NeuCalib(field="f", auxiliary_features=["x"], max_iter=5, random_state=0).fit(p, y, X=X)


def _set(field, value):
    return lambda state: state.__setitem__(field, value)


def _set_value(field, value, *index):
    """Set the first value of the encoded array ``state[field]`` (``state[field][index]`` for a list of them)."""

    def edit(state):
        array = state[field]
        for i in index:
            array = array[i]
        array["__ndarray__"][0] = value

    return edit


#: class -> (its registered method, or a function of ``small_data`` that fits one; an edit of the file's state, the message of the table's rule)
_TAMPERED = {
    "MCGrad": (
        "mcgrad",
        _set_value("feature_importances_", -1.0),
        r"model data field state\.feature_importances_ must hold values >= 0; got -1\.0$",
    ),
    "MulticlassMCGrad": (
        _multiclass_mcgrad,
        _set("input_factor_", "1.0"),
        r"model data field state\.input_factor_ must be a finite number; got '1\.0'$",
    ),
    "MCNet": ("mcnet", _set("n_epochs_", -1), r"model data field state\.n_epochs_ must be an integer >= 0; got -1$"),
    "VennAbers": (
        "venn-abers",
        lambda state: state["f0_"][0].update(dtype="str", __ndarray__=list("x" * len(state["f0_"][0]["__ndarray__"]))),
        r"model data field state\.f0_\[0\] must be a 1-D array of numbers; got shape \(\d+,\), dtype <U1$",
    ),
    "PerFieldCalibrator": (
        "per-field-isotonic",
        _set("global_calibrator_", {"__calibrator__": {"class": "PlattScaling", "params": {}, "state": None}}),
        r"model data field state\.global_calibrator_ must be a fitted univariate mcal calibrator; got an unfitted "
        r"PlattScaling$",
    ),
    "NeuCalib": (
        _neucalib_with_auxiliary_features,
        _set_value("auxiliary_scale_", 0.0),
        r"model data field state\.auxiliary_scale_ must hold values > 0; got 0\.0$",
    ),
    "HKRR": (
        "hkrr",
        _set("segments_", {"parts": "all"}),
        r"model data field state\.segments_ must hold generated segment definitions$",
    ),
}


def _load_error(path):
    try:
        mcal.load(path)
    except Exception as exc:  # any failure but the table's
        return exc
    return None


@pytest.mark.parametrize("name", sorted(_TAMPERED))
def test_a_field_breaking_its_rule_is_refused_by_the_class_table_alone(
    name, tmp_path, small_data, fit_registered, rewrite_model, monkeypatch
):
    fit, edit, match = _TAMPERED[name]
    model = fit(small_data) if callable(fit) else fit_registered(fit)[0]
    cls = type(model)
    assert cls.__name__ == name
    path = mcal.save(model, tmp_path / "m.json")
    rewrite_model(path, lambda doc: edit(doc["model"]["state"]))
    with pytest.raises(ValueError, match=match):
        mcal.load(path)
    # the rule is the table's alone: without it the file loads, or fails in some other way
    monkeypatch.setattr(cls, "_state_constraints", {})
    error = _load_error(path)
    assert error is None or not re.search(match, str(error)), error


@pytest.mark.parametrize(
    "rule, value, message",
    [
        (Number(0), -2, "x must be >= 0; got -2$"),
        (Number(0, strict=True, why=" (a scale)"), 0.0, r"x must be > 0 \(a scale\); got 0\.0$"),
        (Array(values=Number(0)), np.array([1.0, -0.5, -1.0]), r"x must hold values >= 0; got -0\.5$"),
        (Array(ndim=None, values=Number(1, strict=True)), np.array([[2, 1]]), "x must hold values > 1; got 1$"),
        (NumberOr(Array("f", "floats")), np.array([1, 2]), "x must be a 1-D array of floats; got shape"),
        (NumberOr(Array("f", "floats")), "1", "x must be a finite number; got '1'$"),
        (NoneOr(Number()), float("nan"), "x must be a finite number; got nan$"),
        (Each(Number(0)), [1, 2, -3], r"x\[2\] must be >= 0; got -3$"),
        (Each(Number(0)), (1, 2), "x must be a list; got tuple$"),
        (Each(Number(0), of=dict), {"10": 0.5, "20": -1.0}, r"x\['20'\] must be >= 0; got -1\.0$"),
        (Each(Each(Array())), [[np.zeros(2)], [np.zeros(2), "a"]], r"x\[1\]\[1\] must be a 1-D array of numbers"),
    ],
)
def test_each_rule_names_the_value_the_rule_and_what_it_got(rule, value, message):
    with pytest.raises(ValueError, match=message):
        check_rule(rule, "x", value)


@pytest.mark.parametrize(
    "rule, value",
    [
        (Number(0), 0),
        (Array(values=Number(0)), np.array([0.0, 2.0])),
        (NumberOr(Array("f", "floats")), 2.5),
        (NumberOr(Array("f", "floats")), np.array([0.5, 2.0])),
        (NoneOr(Number()), None),
        (Each(Number(0), of=dict), {}),
        (Each(Array()), [np.zeros(0), np.ones(3)]),
    ],
)
def test_each_rule_accepts_what_it_allows(rule, value):
    check_rule(rule, "x", value)


def test_a_function_is_a_rule_as_a_check_method_is():
    seen = []
    check_rule(lambda name, value: seen.append((name, value)), "x", 3)
    check_rule(Each(lambda name, value: seen.append((name, value))), "y", [4])
    assert seen == [("x", 3), ("y[0]", 4)]
