"""Tests of MCGrad.compile: the rounds compiled by lleaves predict what LightGBM predicts, and the edges around it."""

import pickle
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

pytest.importorskip("lightgbm")

import mcal
from mcal import CalibrationWarning, MCGrad
from mcal._optional import is_available
from mcal.cli import main
from tests.mcgrad.test_estimator import segment_data

# lleaves compiles the boosters with LLVM, seconds per model: slow (tests/README.md)
pytestmark = pytest.mark.slow
needs_lleaves = pytest.mark.skipif(not is_available("lleaves"), reason="lleaves is not installed (mcal[compiled])")

# Several rounds of small boosters; early stopping off so that the number of rounds is known.
FAST = dict(
    n_estimators=20,
    learning_rate=0.2,
    min_child_samples=20,
    max_rounds=4,
    early_stopping=None,
    n_jobs=1,
    random_state=0,
)


def mixed_data(n, seed):
    """test_mcgrad's segment data with 5 % of the segments missing and 10 % of the numeric column NaN."""
    X, p, y = segment_data(n, seed)
    rng = np.random.default_rng(seed + 100)
    return X.assign(segment=X["segment"].where(rng.random(n) >= 0.05), x=X["x"].where(rng.random(n) >= 0.1)), p, y


@pytest.fixture(scope="module")
def data():
    return mixed_data(5000, seed=3), mixed_data(3000, seed=4)


@pytest.fixture(scope="module")
def fitted(data):
    (X, p, y), _ = data
    return MCGrad(**FAST).fit(p, y, X=X)


@pytest.fixture
def compiled(fitted):
    pytest.importorskip("lleaves")
    return pickle.loads(pickle.dumps(fitted)).compile()  # a copy: the module's model stays uncompiled


def _without_lleaves(monkeypatch):
    monkeypatch.setitem(sys.modules, "lleaves", None)  # makes `import lleaves` fail


# -- agreement with the LightGBM path ----------------------------------------------------------------------
@needs_lleaves
def test_compiled_batch_predict_equals_the_lightgbm_path(fitted, compiled, data):
    _, (Xt, pt, _) = data
    assert fitted.n_rounds_ == 4 and compiled._compiled is not None
    assert np.all(fitted.feature_importances_ > 0)  # the rounds split on both columns, NaNs included
    np.testing.assert_allclose(compiled.predict(pt, X=Xt), fitted.predict(pt, X=Xt), rtol=0, atol=1e-12)


@needs_lleaves
def test_compiled_batch_predict_does_not_call_booster_predict(compiled, data, monkeypatch):
    import lightgbm

    def refuse(*args, **kwargs):
        raise AssertionError("Booster.predict was called")

    _, (Xt, pt, _) = data
    monkeypatch.setattr(lightgbm.Booster, "predict", refuse)
    assert compiled.predict(pt[:100], X=Xt.iloc[:100]).shape == (100,)


@needs_lleaves
def test_unseen_categories_predict_as_missing_on_both_paths(fitted, compiled, data):
    _, (Xt, pt, _) = data
    unseen = Xt.assign(segment=pd.Categorical(np.where(np.arange(len(Xt)) % 3 == 0, "new", Xt["segment"].astype(str))))
    with pytest.warns(CalibrationWarning, match="unseen"):
        expected = fitted.predict(pt, X=unseen)
    with pytest.warns(CalibrationWarning, match="unseen"):
        got = compiled.predict(pt, X=unseen)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    as_missing = Xt.assign(segment=Xt["segment"].where(np.arange(len(Xt)) % 3 != 0))
    np.testing.assert_allclose(got, fitted.predict(pt, X=as_missing), rtol=0, atol=1e-12)


@needs_lleaves
@pytest.mark.parametrize(
    "extra",
    [{}, {"zero_as_missing": True}, {"use_missing": False}],
    ids=["nan-missing", "zero-as-missing", "no-missing"],
)
def test_compiled_predict_follows_lightgbm_missing_value_handling(data, extra):
    (X, p, y), (Xt, pt, _) = data
    model = MCGrad(**{**FAST, "max_rounds": 2, "lightgbm_params": extra}).fit(p, y, X=X)
    expected = model.predict(pt, X=Xt)
    np.testing.assert_allclose(model.compile().predict(pt, X=Xt), expected, rtol=0, atol=1e-12)


@needs_lleaves
def test_threaded_compiled_predict_equals_one_thread(data):
    # 25,000 rows reach the threaded branch (one thread per 10,000 rows, here 2).
    (X, p, y), _ = data
    model = MCGrad(**{**FAST, "max_rounds": 2}).fit(p, y, X=X)
    big_X, big_p, _ = mixed_data(25_000, seed=5)
    one = model.compile(n_jobs=1).predict(big_p, X=big_X)
    two = model.compile(n_jobs=2).predict(big_p, X=big_X)
    assert model._compiled.n_jobs == 2
    np.testing.assert_array_equal(two, one)


@needs_lleaves
def test_zero_rounds_compile_and_stay_the_identity(data):
    (X, p, y), (Xt, pt, _) = data
    model = MCGrad(**{**FAST, "max_rounds": 0}).fit(p, y, X=X).compile()
    assert model.n_rounds_ == 0
    np.testing.assert_array_equal(model.predict(pt, X=Xt), pt)


@needs_lleaves
def test_one_row_predict_after_compile_keeps_the_single_row_path(fitted, compiled, data):
    # One-row calls go through LightGBM's single-row C path (faster than lleaves for one row), hence equal
    # exactly to the uncompiled model's one-row calls.
    _, (Xt, pt, _) = data
    single = [compiled.predict(pt[i : i + 1], X=Xt.iloc[i : i + 1])[0] for i in range(10)]
    assert compiled._single_row is not None
    np.testing.assert_array_equal(single, [fitted.predict(pt[i : i + 1], X=Xt.iloc[i : i + 1])[0] for i in range(10)])
    np.testing.assert_allclose(single, compiled.predict(pt[:10], X=Xt.iloc[:10]), rtol=0, atol=1e-12)


# -- state ---------------------------------------------------------------------------------------------------
@needs_lleaves
def test_refit_drops_the_compiled_rounds(data):
    (X, p, y), (Xt, pt, yt) = data
    model = MCGrad(**FAST).fit(p, y, X=X).compile()
    model.fit(pt, yt, X=Xt)
    assert model._compiled is None
    fresh = MCGrad(**FAST).fit(pt, yt, X=Xt)
    np.testing.assert_array_equal(model.predict(p, X=X), fresh.predict(p, X=X))


@needs_lleaves
def test_model_files_do_not_carry_compiled_code_and_a_loaded_model_compiles_again(fitted, compiled, data, tmp_path):
    _, (Xt, pt, _) = data
    plain, built = mcal.save(fitted, tmp_path / "plain.json"), mcal.save(compiled, tmp_path / "compiled.json")
    assert plain.read_bytes() == built.read_bytes()
    loaded = mcal.load(built)
    assert getattr(loaded, "_compiled", None) is None
    np.testing.assert_array_equal(loaded.predict(pt, X=Xt), fitted.predict(pt, X=Xt))
    np.testing.assert_allclose(loaded.compile().predict(pt, X=Xt), fitted.predict(pt, X=Xt), rtol=0, atol=1e-12)


@needs_lleaves
def test_clone_and_pickle_of_a_compiled_model(fitted, compiled, data):
    _, (Xt, pt, _) = data
    assert clone(compiled).get_params() == fitted.get_params()
    assert not clone(compiled).__sklearn_is_fitted__()
    restored = pickle.loads(pickle.dumps(compiled))
    assert getattr(restored, "_compiled", None) is None
    np.testing.assert_array_equal(restored.predict(pt, X=Xt), fitted.predict(pt, X=Xt))


@needs_lleaves
def test_compile_leaves_no_temporary_file(fitted, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    pickle.loads(pickle.dumps(fitted)).compile()
    assert list(tmp_path.iterdir()) == []


# -- errors --------------------------------------------------------------------------------------------------
def test_compile_before_fit_raises_not_fitted():
    with pytest.raises(NotFittedError):
        MCGrad().compile()


@pytest.mark.parametrize(("n_jobs", "error"), [(0, ValueError), (1.5, TypeError), (True, TypeError)])
def test_compile_rejects_a_bad_n_jobs(fitted, n_jobs, error):
    # a float or bool n_jobs was a ValueError
    with pytest.raises(error, match=rf"n_jobs must be None, an integer >= 1, .*; got {n_jobs!r}"):
        fitted.compile(n_jobs=n_jobs)


def test_compile_without_lleaves_names_the_extra(fitted, monkeypatch):
    _without_lleaves(monkeypatch)
    with pytest.raises(ImportError, match=r"pip install 'mcal\[compiled\]'"):
        pickle.loads(pickle.dumps(fitted)).compile()


@needs_lleaves
def test_compile_with_an_llvmlite_without_pass_manager_builder_names_the_conflict(fitted, monkeypatch):
    # llvmlite 0.45 removed PassManagerBuilder, which lleaves 1.3 calls while compiling.
    import llvmlite.binding

    monkeypatch.delattr(llvmlite.binding, "PassManagerBuilder")
    model = pickle.loads(pickle.dumps(fitted))
    with pytest.raises(ImportError, match=r"cannot compile with llvmlite .*issues/95.*install llvmlite<0\.45"):
        model.compile()
    assert getattr(model, "_compiled", None) is None


@needs_lleaves
def test_compile_rejects_linear_trees_which_lleaves_does_not_evaluate(data):
    (X, p, y), _ = data
    model = MCGrad(**{**FAST, "max_rounds": 1, "lightgbm_params": {"linear_tree": True}}).fit(p, y, X=X)
    with pytest.raises(ValueError, match=r"boosters_\[0\] must have constant leaves to be compiled; got linear"):
        model.compile()


# -- command line --------------------------------------------------------------------------------------------
@pytest.fixture
def table(tmp_path, data):
    (X, p, y), _ = data
    path = tmp_path / "data.csv"
    X.assign(p=p, y=y).to_csv(path, index=False)
    return path


def _fit_cli(table, tmp_path, method="mcgrad"):
    model = tmp_path / "model.json"
    extra = (
        ["--features", "segment,x", "--param", "early_stopping=null", "--param", "max_rounds=2", "--n-jobs", "1"]
        if method == "mcgrad"
        else []
    )
    assert (
        main(
            [
                "fit",
                str(table),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                method,
                "--quiet",
                "--random-state",
                "0",
                "-o",
                str(model),
                *extra,
            ]
        )
        == 0
    )
    return model


@needs_lleaves
def test_cli_predict_compile_equals_predict(table, tmp_path):
    model = _fit_cli(table, tmp_path)
    plain, built = tmp_path / "plain.csv", tmp_path / "compiled.csv"
    assert main(["predict", str(model), str(table), "-o", str(plain)]) == 0
    assert main(["predict", str(model), str(table), "-o", str(built), "--compile"]) == 0
    expected, got = pd.read_csv(plain)["p_calibrated"], pd.read_csv(built)["p_calibrated"]
    assert not np.allclose(expected, pd.read_csv(plain)["p"])  # the model changes the scores
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_cli_predict_compile_refuses_other_methods(table, tmp_path, capsys):
    model, out = _fit_cli(table, tmp_path, method="platt"), tmp_path / "o.csv"
    assert main(["predict", str(model), str(table), "-o", str(out), "--compile"]) == 2
    assert "--compile applies to MCGrad models only" in capsys.readouterr().err
    assert not out.exists()


def test_cli_predict_compile_without_lleaves_names_the_extra(table, tmp_path, capsys, monkeypatch):
    model, out = _fit_cli(table, tmp_path), tmp_path / "o.csv"
    _without_lleaves(monkeypatch)
    assert main(["predict", str(model), str(table), "-o", str(out), "--compile"]) == 2
    assert "mcal[compiled]" in capsys.readouterr().err
    assert not out.exists()
