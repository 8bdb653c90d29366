"""The checks of ``lightgbm_params`` (``mcal._lightgbm_params``): LightGBM's own rules, made before LightGBM prints.

LightGBM writes ``[LightGBM] [Fatal] ...`` to the process's standard error for every parameter value it rejects,
before it raises; mcal checks the values first, so that a rejected parameter raises mcal's ValueError alone.
The rules are LightGBM 4.7's: a test trains LightGBM itself on each boundary, so a LightGBM release that changes
them fails here.
"""

import re

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

import mcal  # noqa: E402
from mcal import MCGrad  # noqa: E402
from mcal import _lightgbm_params as params  # noqa: E402

FAST = dict(n_estimators=3, max_rounds=1, early_stopping=None, n_jobs=1, random_state=0)

#: A value on each side of every range rule: (rejected, accepted).
BOUNDARY = {
    "> 0": ([0], [1]),
    ">= 0": ([-1], [0]),
    "> 1": ([1], [2]),
    "in (0, 1]": ([0.0, 1.5], [1.0]),
    "in [0, 1]": ([-0.5, 1.5], [0.0, 1.0]),
    "in [1, 2)": ([0.5, 2.0], [1.0]),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 300)
    return p, (rng.random(p.size) < p).astype(float), rng.normal(size=(p.size, 2))


def _lightgbm_accepts(name, value):
    """Whether LightGBM itself trains with ``{name: value}`` (its own check, which prints when it rejects)."""
    rng = np.random.default_rng(1)
    data = lgb.Dataset(rng.normal(size=(50, 3)), (rng.random(50) < 0.5).astype(float))
    try:
        lgb.train({"objective": "cross_entropy", "verbosity": -1, "num_threads": 1, name: value}, data, 1)
    except lgb.basic.LightGBMError:
        return False
    return True


@pytest.mark.parametrize("name", sorted({**params._INTEGERS, **params._NUMBERS}))
def test_the_range_of_each_number_is_lightgbms_own(name, capfd):
    rule = {**params._INTEGERS, **params._NUMBERS}[name]
    bad, good = BOUNDARY.get(rule, ([], [0]))
    cast = int if name in params._INTEGERS else float
    for value in map(cast, bad):
        message = rf"lightgbm_params\['{name}'\] must be an? (integer|number) {re.escape(rule)}; got"
        with pytest.raises(ValueError, match=message):
            params.check_lightgbm_param(name, value)
        assert not _lightgbm_accepts(name, value)
    for value in map(cast, good):
        params.check_lightgbm_param(name, value)
        assert _lightgbm_accepts(name, value)
    if name in params._INTEGERS:  # LightGBM reads no fraction, not even 2.0, as an integer
        with pytest.raises(ValueError, match="must be an integer"):
            params.check_lightgbm_param(name, 2.0)
        assert not _lightgbm_accepts(name, 2.0)
    capfd.readouterr()


@pytest.mark.parametrize("name", sorted(params._BOOLS))
def test_each_bool_takes_true_false_and_lightgbms_words_but_not_numbers(name):
    for value in (True, False, np.bool_(True), "TRUE", "-"):
        params.check_lightgbm_param(name, value)
    with pytest.raises(ValueError, match=rf"lightgbm_params\['{name}'\] must be True or False; got 1"):
        params.check_lightgbm_param(name, 1)


@pytest.mark.parametrize("name", sorted(params._CHOICES))
def test_each_choice_is_one_of_lightgbms_words_in_any_case(name, capfd):
    first = params._CHOICES[name][0]
    params.check_lightgbm_param(name, first.upper())
    assert _lightgbm_accepts(name, first.upper())
    with pytest.raises(ValueError, match=rf"lightgbm_params\['{name}'\] must be one of \['{first}'"):
        params.check_lightgbm_param(name, "bogus")
    capfd.readouterr()


def test_every_lightgbm_parameter_is_refused_or_has_a_rule():
    # a parameter of a newer LightGBM would reach LightGBM's own checks, which print before they raise
    names = set(lgb.basic._ConfigAliases._get_all_param_aliases())
    ruled = (set(params._reserved_names()) | params._not_training_names() | params._RULED | params._TEXTS
             | set(params._MONOTONE))  # fmt: skip
    assert names - ruled == set()


REJECTED = [
    ({"bagging_fraction": 2.0}, r"lightgbm_params\['bagging_fraction'\] must be a number in \(0, 1\]; got 2.0"),
    ({"subsample": 0.0}, r"lightgbm_params\['subsample'\] must be a number in \(0, 1\]; got 0.0"),
    ({"max_bin": 1}, r"lightgbm_params\['max_bin'\] must be an integer > 1; got 1"),
    ({"max_bin": 15.5}, r"lightgbm_params\['max_bin'\] must be an integer > 1; got 15.5"),
    ({"max_delta_step": "abc"}, r"lightgbm_params\['max_delta_step'\] must be a number; got 'abc'"),
    ({"bagging_fraction": [0.5, 0.5]}, r"lightgbm_params\['bagging_fraction'\] must be a single value, not a list"),
    ({"extra_trees": "maybe"}, r"lightgbm_params\['extra_trees'\] must be True or False; got 'maybe'"),
    ({"tree_learner": "bogus"}, r"lightgbm_params\['tree_learner'\] must be one of \['serial'"),
    ({"cegb_penalty_feature_lazy": [1.0]}, r"lightgbm_params\['cegb_penalty_feature_lazy'\] must hold 3 numbers, "
                                           r"one per column of X and then one for the score; got \[1.0\]"),
    ({"feature_contri": "1,1"}, r"lightgbm_params\['feature_contri'\] must hold 3 numbers"),
    ({"label_gain": "a"}, r"lightgbm_params\['label_gain'\] must be a list of numbers; got 'a'"),
    ({"data_sample_strategy": "goss", "top_rate": 0.9, "other_rate": 0.5},
     r"top_rate \+ other_rate <= 1 with data_sample_strategy='goss'; got top_rate=0.9 and other_rate=0.5"),
    ({"data_sample_strategy": "goss", "bagging_freq": 1, "subsample": 0.5},
     r"must not combine data_sample_strategy='goss' with bagging .*\{'bagging_freq': 1, 'subsample': 0.5\}"),
    ({"linear_tree": True, "zero_as_missing": "true"}, "must not combine linear_tree=True with zero_as_missing=True"),
    ({"subsample": 0.5, "bagging_fraction": 0.6},
     "must set each LightGBM parameter once; got 'subsample' and 'bagging_fraction', two names of 'bagging_fraction'"),
]  # fmt: skip


@pytest.mark.parametrize(("lightgbm_params", "match"), REJECTED, ids=[str(p) for p, _ in REJECTED])
def test_a_rejected_parameter_raises_mcals_error_and_lightgbm_prints_nothing(data, capfd, lightgbm_params, match):
    # each printed "[LightGBM] [Fatal] ..." to stderr before mcal's ValueError (or, for a repeated name, warned)
    p, y, X = data
    capfd.readouterr()
    with pytest.raises(ValueError, match=match):
        MCGrad(**FAST, lightgbm_params=lightgbm_params).fit(p, y, X=X)
    out, err = capfd.readouterr()
    assert "LightGBM" not in out + err


@pytest.mark.parametrize("lightgbm_params", [
    {"extra_trees": "TRUE", "max_bin": "15", "lambda_l1": "0.5"}, {"data_sample_strategy": "GOSS"},
    {"cegb_penalty_feature_lazy": [1.0, 1.0, 1.0]}, {"feature_contri": "1,1,1"},
    {"monotone_constraints_method": "advanced"},
], ids=["words-and-numbers-as-text", "goss", "cegb-per-feature", "feature_contri-as-text",
        "monotone-method"])  # fmt: skip
def test_values_lightgbm_accepts_pass_and_reach_the_boosters(data, lightgbm_params):
    p, y, X = data
    model = MCGrad(**FAST, lightgbm_params=lightgbm_params).fit(p, y, X=X)
    assert model.n_rounds_ == 1


def test_an_error_lightgbm_still_raises_names_the_parameters(data, monkeypatch):
    # what no rule here covers (a GPU the build lacks) stays LightGBM's error, named as a ValueError
    p, y, X = data

    def refuse(*args, **kwargs):
        raise lgb.basic.LightGBMError("No OpenCL device found")

    monkeypatch.setattr(lgb, "train", refuse)
    with pytest.raises(
        ValueError,
        match=r"lightgbm_params must be parameters that LightGBM accepts for these data; "
        r"got \{'device_type': 'gpu'\}, which LightGBM rejected: No OpenCL",
    ):
        MCGrad(**FAST, lightgbm_params={"device_type": "gpu"}).fit(p, y, X=X)


SEQUENCES = [
    {"monotone_constraints": (1, 0, 0)}, {"monotone_constraints": np.array([1, 0, -1])},
    {"feature_contri": np.ones(3)}, {"cegb_penalty_feature_coupled": (1.0, 1.0, 1.0)},
    {"label_gain": np.array([0.0, 1.0, 3.0])}, {"interaction_constraints": ([0, 1], [2])},
]  # fmt: skip


@pytest.mark.parametrize("lightgbm_params", SEQUENCES, ids=[str(p) for p in SEQUENCES])
def test_tuples_and_1d_arrays_pass_as_lists_as_lightgbm_reads_them(data, lightgbm_params, tmp_path):
    # LightGBM joins a list, a tuple or a 1-D array with commas alike; mcal refused the last two with a TypeError
    p, y, X = data
    rng = np.random.default_rng(1)
    lgb.train(
        {"objective": "cross_entropy", "verbosity": -1, "num_threads": 1, **lightgbm_params},
        lgb.Dataset(rng.normal(size=(50, 3)), (rng.random(50) < 0.5).astype(float)),
        1,
    )
    model = MCGrad(**FAST, lightgbm_params=lightgbm_params).fit(p, y, X=X)
    mcal.save(model, tmp_path / "m.json")
    loaded = mcal.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))


@pytest.mark.parametrize("value", [np.ones((3, 1)), [(0, 1), (2,)]], ids=["2-D array", "tuples in a list"])
def test_a_2d_array_or_tuples_inside_a_list_are_refused_by_type(value):
    # LightGBM refuses a 2-D array, and writes a tuple inside a list as "(0, 1)", whose space ends the value
    with pytest.raises(TypeError, match=r"must be a bool, number or string, a list \(tuple or 1-D numpy array\)"):
        params.check_lightgbm_param("interaction_constraints", value)


def test_a_single_valued_parameter_refuses_a_tuple_or_array_as_a_list():
    for value in ((0.5,), np.array([0.5])):
        with pytest.raises(ValueError, match=r"lightgbm_params\['bagging_fraction'\] must be a single value, not a"):
            params.check_lightgbm_param("bagging_fraction", value)


def test_monotone_constraints_take_whole_floats_as_lightgbm_reads_them(data):
    # LightGBM reads "1.0,0,0" as 1,0,0 (a float array of signs is common); mcal refused floats
    p, y, X = data
    for value in ([1.0, 0.0, -1.0], np.array([0.0, 0.0, 1.0])):
        MCGrad(**FAST, lightgbm_params={"monotone_constraints": value}).fit(p, y, X=X)


@pytest.mark.parametrize("value", [[True, False, False], [0.9, 0, 0]], ids=["bools", "fraction"])
def test_monotone_constraints_refuse_bools_and_fractions_that_lightgbm_reads_as_0(data, value):
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


def test_an_integer_past_the_largest_double_is_refused_as_not_finite():
    with pytest.raises(ValueError, match=r"lightgbm_params\['max_delta_step'\] must hold finite numbers; got 1000"):
        params.check_lightgbm_param("max_delta_step", 10**400)
    with pytest.raises(ValueError, match=r"\['bagging_freq'\] must fit LightGBM's int32; got 2147483648"):
        params.check_lightgbm_param("bagging_freq", 2**31)
