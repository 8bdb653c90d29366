"""The LightGBM boundary (``mcal._lightgbm``): what mcal checks of ``lightgbm_params`` before LightGBM sees them,
and LightGBM's own errors re-worded as a ``ValueError`` that names the parameter.

LightGBM judges the values of its own parameters (it prints ``[LightGBM] [Fatal] ...`` to standard error before it
raises); mcal checks only what LightGBM would silently ignore, change or crash on.
"""

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

import mcal  # noqa: E402
from mcal import MCGrad, _lightgbm  # noqa: E402

FAST = dict(n_estimators=3, max_rounds=1, early_stopping=None, n_jobs=1, random_state=0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 300)
    return p, (rng.random(p.size) < p).astype(float), rng.normal(size=(p.size, 2))


# LightGBM's checks, quoted without the source line it names ("at .../config_auto.cpp, line 375 .")
REJECTED_BY_LIGHTGBM = [
    ({"bagging_fraction": 2.0}, r"lightgbm_params\['bagging_fraction'\] must be a value that LightGBM accepts; "
                                r"got 2.0, which LightGBM rejected: Check failed: \(bagging_fraction\) <= \(1.0\)$"),
    # named by an alias: LightGBM's message names the parameter by its own name
    ({"subsample": 0.0}, r"lightgbm_params\['subsample'\] must be a value .*; got 0.0, .*\(bagging_fraction\) > "),
    ({"max_bin": 15.5}, r"lightgbm_params\['max_bin'\] .*: Parameter max_bin should be of type int, got \"15.5\"$"),
    ({"max_bin": True}, r"lightgbm_params\['max_bin'\] .*: Parameter max_bin should be of type int"),
    # named by the value that LightGBM quotes
    ({"max_delta_step": "abc"}, r"lightgbm_params\['max_delta_step'\] .*; got 'abc', .*: Unknown token abc"),
    ({"tree_learner": "bogus"}, r"lightgbm_params\['tree_learner'\] .*: Unknown tree learner type bogus$"),
    ({"extra_trees": "maybe"}, r"lightgbm_params\['extra_trees'\] .*: Parameter extra_trees should be \"true\""),
    ({"cegb_penalty_feature_lazy": [1.0]}, r"lightgbm_params\['cegb_penalty_feature_lazy'\] .*same size as feature"),
    ({"feature_contri": "1,1"}, r"lightgbm_params\['feature_contri'\] .*config->feature_contri.size\(\)\)$"),
    ({"linear_tree": True, "zero_as_missing": "true"},
     r"lightgbm_params\['zero_as_missing'\] .*zero_as_missing must be false when fitting linear trees"),
    # a message that names no parameter, or two: every parameter is named
    ({"label_gain": "a"}, r"lightgbm_params must be parameters that LightGBM accepts for these data; got "
                          r"\{'label_gain': 'a'\}, which LightGBM rejected: stod$"),
    ({"data_sample_strategy": "goss", "top_rate": 0.9, "other_rate": 0.5},
     r"lightgbm_params must be parameters .*top_rate \+ config_->other_rate\) <= \(1.0f\)$"),
    # "bagging" is one of LightGBM's names of bagging_fraction
    ({"data_sample_strategy": "goss", "bagging_freq": 1, "subsample": 0.5},
     r"lightgbm_params\['subsample'\] .*: Cannot use bagging in GOSS$"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("lightgbm_params", "match"), REJECTED_BY_LIGHTGBM, ids=[str(p) for p, _ in REJECTED_BY_LIGHTGBM]
)
def test_a_value_lightgbm_rejects_raises_value_error_naming_the_parameter(data, lightgbm_params, match):
    p, y, X = data
    with pytest.raises(ValueError, match=match):
        MCGrad(**FAST, lightgbm_params=lightgbm_params).fit(p, y, X=X)


@pytest.mark.parametrize(
    ("lightgbm_params", "match"),
    [
        ({"subsample": 0.5, "bagging_fraction": 0.6}, "must set each LightGBM parameter once; got 'subsample' and "
                                                       "'bagging_fraction', two names of one parameter"),
        ({"max_bn": 63}, r"got 'max_bn', which LightGBM does not know and would ignore \(did you mean 'max_bin'"),
        ({"output_model": "m.txt"}, "must hold training parameters; got 'output_model'"),
        ({"num_leaf": 7}, "must not set 'num_leaf'.*use the argument max_leaves="),
        ({"max_delta_step": 10**400}, r"lightgbm_params\['max_delta_step'\] must hold finite numbers; got 1000"),
        ({"max_delta_step": np.nan}, r"lightgbm_params\['max_delta_step'\] must hold finite numbers; got nan"),
        ({"max_bin": "63 num_iterations=3"}, "must be a string without whitespace or '='"),
    ],
    ids=["two names", "unknown", "not training", "reserved alias", "past a double", "nan", "a second parameter"],
)  # fmt: skip
def test_what_lightgbm_would_ignore_or_misread_is_refused_before_it_sees_it(data, capfd, lightgbm_params, match):
    # LightGBM uses one of two names, ignores unknown names, reads files, wraps around or splits the string
    p, y, X = data
    with pytest.raises(ValueError, match=match):
        MCGrad(**FAST, lightgbm_params=lightgbm_params).fit(p, y, X=X)
    assert "LightGBM" not in capfd.readouterr().err


@pytest.mark.parametrize("lightgbm_params", [
    {"extra_trees": "TRUE", "max_bin": "15", "lambda_l1": "0.5"}, {"data_sample_strategy": "GOSS"},
    {"cegb_penalty_feature_lazy": [1.0, 1.0, 1.0]}, {"feature_contri": "1,1,1"},
    {"monotone_constraints_method": "advanced"}, {"bagging_fraction": (0.5,)},
], ids=["words-and-numbers-as-text", "goss", "cegb-per-feature", "feature_contri-as-text",
        "monotone-method", "one-item-tuple"])  # fmt: skip
def test_values_lightgbm_accepts_pass_and_reach_the_boosters(data, lightgbm_params):
    p, y, X = data
    model = MCGrad(**FAST, lightgbm_params=lightgbm_params).fit(p, y, X=X)
    assert model.n_rounds_ == 1


def test_an_error_that_names_a_parameter_by_an_alias_names_it(data, monkeypatch):
    # a GPU that the build lacks: "device" is one of LightGBM's names of device_type
    p, y, X = data

    def refuse(*args, **kwargs):
        raise lgb.basic.LightGBMError("No OpenCL device found")

    monkeypatch.setattr(lgb, "train", refuse)
    with pytest.raises(
        ValueError,
        match=r"^lightgbm_params\['device_type'\] must be a value that LightGBM accepts; got 'gpu', which "
        r"LightGBM rejected: No OpenCL device found$",
    ):
        MCGrad(**FAST, lightgbm_params={"device_type": "gpu", "max_bin": 63}).fit(p, y, X=X)


def test_lightgbm_error_names_the_one_parameter_its_message_names():
    exc = lgb.basic.LightGBMError("Check failed: (max_bin) > (1) at /x/config_auto.cpp, line 527 .\n")
    error = _lightgbm.lightgbm_error({"max_bin": 1, "lambda_l1": 0.5}, exc)
    assert str(error) == (
        "lightgbm_params['max_bin'] must be a value that LightGBM accepts; got 1, which LightGBM rejected: "
        "Check failed: (max_bin) > (1)"
    )


def test_an_error_without_lightgbm_params_stays_lightgbms(data, monkeypatch):
    p, y, X = data

    def refuse(*args, **kwargs):
        raise lgb.basic.LightGBMError("out of memory")

    monkeypatch.setattr(lgb, "train", refuse)
    with pytest.raises(lgb.basic.LightGBMError, match="out of memory"):
        MCGrad(**FAST).fit(p, y, X=X)


SEQUENCES = [
    {"monotone_constraints": (1, 0, 0)}, {"monotone_constraints": np.array([1, 0, -1])},
    {"feature_contri": np.ones(3)}, {"cegb_penalty_feature_coupled": (1.0, 1.0, 1.0)},
    {"label_gain": np.array([0.0, 1.0, 3.0])}, {"interaction_constraints": ([0, 1], [2])},
]  # fmt: skip


@pytest.mark.parametrize("lightgbm_params", SEQUENCES, ids=[str(p) for p in SEQUENCES])
def test_tuples_and_1d_arrays_pass_as_lists_as_lightgbm_reads_them(data, lightgbm_params, tmp_path):
    # LightGBM joins a list, a tuple or a 1-D array with commas alike; mcal refused the last two with a TypeError
    p, y, X = data
    model = MCGrad(**FAST, lightgbm_params=lightgbm_params).fit(p, y, X=X)
    mcal.save(model, tmp_path / "m.json")
    loaded = mcal.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))


@pytest.mark.parametrize("value", [np.ones((3, 1)), [(0, 1), (2,)]], ids=["2-D array", "tuples in a list"])
def test_a_2d_array_or_tuples_inside_a_list_are_refused_by_type(value):
    # LightGBM refuses a 2-D array, and writes a tuple inside a list as "(0, 1)", whose space ends the value
    with pytest.raises(TypeError, match=r"must be a bool, number or string, a list \(tuple or 1-D numpy array\)"):
        _lightgbm.check_lightgbm_value("interaction_constraints", value)


def test_monotone_constraints_take_whole_floats_as_lightgbm_reads_them(data):
    # LightGBM reads "1.0,0,0" as 1,0,0 (a float array of signs is common); mcal refused floats
    p, y, X = data
    for value in ([1.0, 0.0, -1.0], np.array([0.0, 0.0, 1.0])):
        MCGrad(**FAST, lightgbm_params={"monotone_constraints": value}).fit(p, y, X=X)


@pytest.mark.parametrize("value", [[True, False, False], [0.9, 0, 0], [2, 0, 0], "1,0,x"], ids=str)
def test_monotone_constraints_refuse_what_lightgbm_reads_as_0(data, value):
    p, y, X = data
    with pytest.raises(ValueError, match=r"\['monotone_constraints'\] must hold 3 values in \{-1, 0, 1\}"):
        MCGrad(**FAST, lightgbm_params={"monotone_constraints": value}).fit(p, y, X=X)


@pytest.mark.parametrize(
    "lightgbm_params", [{"lambda_l1": 2**31}, {"cegb_tradeoff": 10**10}, {"feature_contri": [2**31, 1, 1]}], ids=str
)
def test_an_integer_beyond_int32_passes_for_a_real_valued_parameter_as_lightgbm_reads_it(data, lightgbm_params):
    # LightGBM reads a real-valued parameter as a double, whatever its digits; mcal refused such integers as int32
    p, y, X = data
    MCGrad(**FAST, lightgbm_params=lightgbm_params).fit(p, y, X=X)


def test_an_integer_beyond_int32_is_handed_on_as_a_float_that_lightgbm_refuses_for_an_integer_parameter(data):
    # LightGBM read bagging_freq=2**31 as a wrapped-around int32 without a word
    assert _lightgbm.forwarded({"bagging_freq": 2**31, "max_bin": 63, "x": [1, -(2**40)]}) == {
        "bagging_freq": 2.0**31,
        "max_bin": 63,
        "x": [1, -(2.0**40)],
    }
    p, y, X = data
    with pytest.raises(ValueError, match=r"lightgbm_params\['bagging_freq'\] .*should be of type int"):
        MCGrad(**FAST, lightgbm_params={"bagging_freq": 2**31}).fit(p, y, X=X)
