"""Tests of mcal.dask for real-valued outcomes: DaskRegressionMCGrad, the regression metrics and the command line.

The session's LocalCluster (the ``client`` fixture of conftest.py); tiny data; one LightGBM thread.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before any OpenMP runtime starts in this process or the workers

import json

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal.metrics import mse
from tests.dask.test_dask import _chunked

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # a Dask cluster: slow (tests/README.md)

FAST = dict(n_estimators=20, learning_rate=0.2, min_child_samples=20, max_rounds=2, n_jobs=1, random_state=0)
X_COLS = ["group", "x"]


def table(n, seed):
    """A linear prediction blind to a per-group shift of the mean and to a nonlinearity; columns group, x, p, y."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"group": pd.Categorical(rng.choice(["a", "b", "c"], n)), "x": rng.normal(size=n)})
    frame["p"] = 2.0 + 0.5 * frame["x"]
    shift = frame["group"].map({"a": -1.0, "b": 0.0, "c": 1.0}).astype(float)
    frame["y"] = frame["p"] + shift + 0.5 * np.sin(2 * frame["x"]) + rng.normal(size=n)
    return frame


@pytest.fixture(scope="module")
def frames():
    return table(6000, seed=1), table(20000, seed=2)


@pytest.fixture(scope="module")
def fitted(client, frames):
    import dask.dataframe as dd

    from mcal.dask import DaskRegressionMCGrad

    ddf = dd.from_pandas(frames[0], npartitions=3)
    return DaskRegressionMCGrad(client=client, early_stopping=None, **FAST).fit(ddf["p"], ddf["y"], X=ddf[X_COLS])


# -- DaskRegressionMCGrad ----------------------------------------------------------------------------------
def test_distributed_and_local_regression_mcgrad_agree_on_held_out_mse(fitted, frames):
    """Same rounds: held-out MSE within 0.01 of the local fit's, for a gain over the input of about 0.5.

    Data-parallel LightGBM bins each feature on the workers' own rows, so the boosters differ slightly. Measured
    with this data and these settings: |dask - local| about 0.003 (MSE about 1.03 against 1.54 for the input);
    0.01 is three times that and a fiftieth of the gain.
    """
    train, test = frames
    local = mcal.RegressionMCGrad(early_stopping=None, **FAST).fit(train["p"], train["y"], X=train[X_COLS])
    base = mse(test["y"], test["p"])
    local_mse = mse(test["y"], local.predict(test["p"], X=test[X_COLS]))
    dask_mse = mse(test["y"], fitted.predict(test["p"], X=test[X_COLS]))
    assert base - local_mse > 0.3
    assert abs(dask_mse - local_mse) < 0.01
    assert fitted.n_rounds_ == local.n_rounds_ == 2
    assert type(fitted.to_local()) is mcal.RegressionMCGrad


@pytest.mark.filterwarnings("ignore:early stopping chose max_rounds")
@pytest.mark.parametrize("early_stopping", ["holdout", "kfold"])
def test_dask_regression_early_stopping_chooses_the_best_round_of_the_validation_mse(client, frames, early_stopping):
    import dask.dataframe as dd

    from mcal.dask import DaskRegressionMCGrad

    train, test = frames
    ddf = dd.from_pandas(train, npartitions=2)
    model = DaskRegressionMCGrad(client=client, early_stopping=early_stopping, n_folds=2, **{**FAST, "max_rounds": 3})
    model.fit(ddf["p"], ddf["y"], X=ddf[X_COLS])
    losses = model.validation_losses_
    assert losses.size >= 2 and model.n_rounds_ == int(np.argmin(losses)) >= 1
    if early_stopping == "kfold":  # index 0: the input's MSE pooled over the folds, i.e. on every row
        assert abs(losses[0] - mse(train["y"], train["p"])) < 1e-9
    assert mse(test["y"], model.predict(test["p"], X=test[X_COLS])) < mse(test["y"], test["p"]) - 0.3


def test_dask_poisson_regression_mcgrad_corrects_a_multiplicative_bias(client):
    import dask.dataframe as dd

    from mcal.dask import DaskRegressionMCGrad

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"group": pd.Categorical(rng.choice(["a", "b"], 8000))})
    frame["p"] = 2.0
    frame["y"] = rng.poisson(np.where(frame["group"] == "a", 1.0, 4.0)).astype(float)
    ddf = dd.from_pandas(frame, npartitions=2)
    model = DaskRegressionMCGrad(client=client, loss="poisson", early_stopping=None, **FAST)
    fitted = model.fit(ddf["p"], ddf["y"], X=ddf[["group"]]).predict(frame["p"], X=frame[["group"]])
    assert abs(fitted[frame["group"] == "a"].mean() - 1.0) < 0.1  # group means 1 and 4 from a prediction of 2
    assert abs(fitted[frame["group"] == "b"].mean() - 4.0) < 0.2


def test_dask_regression_mcgrad_has_the_parameters_of_regression_mcgrad_plus_client_and_timeout():
    from mcal.dask import DaskMCGrad, DaskRegressionMCGrad

    params = DaskRegressionMCGrad(loss="tweedie").get_params()
    assert params.pop("client") is None and params.pop("timeout") is None
    assert params == mcal.RegressionMCGrad(loss="tweedie").get_params()
    assert "loss" not in DaskMCGrad().get_params()  # DaskMCGrad's signature is its own
    with pytest.raises(ValueError, match="loss must be .squared_error., .poisson. or .tweedie.; got .huber."):
        DaskRegressionMCGrad(loss="huber", client=None).fit(None, None)


def test_rescaling_factor_of_the_squared_error_from_dask_reductions_is_the_closed_form(client):
    import dask.array as da

    from mcal.dask._engine import DaskEngine
    from mcal.mcgrad.engine import SquaredError, rescale_factor

    rng = np.random.default_rng(3)
    z = rng.normal(0, 3, 5000)
    y = 0.7 * z + rng.normal(size=5000)
    w = rng.uniform(0, 2, 5000)
    engine = DaskEngine(client, {}, 1, [], timeout=60, objective=SquaredError())
    got = rescale_factor(engine, *(da.from_array(v, chunks=1200) for v in (y, z, w)))
    assert abs(got - np.sum(w * z * y) / np.sum(w * z * z)) < 1e-9
    assert abs(got - 0.7) < 0.05  # the data's own factor


def test_model_file_of_dask_regression_mcgrad_loads_as_regression_mcgrad(fitted, frames, tmp_path):
    import dask.dataframe as dd

    _, test = frames
    path = mcal.save(fitted, tmp_path / "model.json")
    loaded = mcal.load(path)
    assert (
        type(loaded) is mcal.RegressionMCGrad and json.loads(path.read_text())["model"]["class"] == "RegressionMCGrad"
    )
    assert loaded.get_params() == fitted.to_local().get_params()
    expected = fitted.predict(test["p"], X=test[X_COLS])
    np.testing.assert_array_equal(loaded.predict(test["p"], X=test[X_COLS]), expected)
    ddf = dd.from_pandas(test, npartitions=4)
    np.testing.assert_array_equal(fitted.predict(ddf["p"], X=ddf[X_COLS]).compute().to_numpy(), expected)
    with pytest.raises(ValueError, match="DaskRegressionMCGrad saves a RegressionMCGrad model"):
        type(fitted).from_dict({})


def _bad(values, row, value):
    out = np.array(values, dtype=float)
    out[row] = value
    return out


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(p=_bad(np.full(100, 2.0), 70, np.nan)), r"y_pred must be finite.*in partition 1"),
        (dict(p=_bad(np.full(100, 2.0), 10, np.inf)), r"y_pred must be finite.*in partition 0"),
        (dict(y=_bad(np.arange(100.0), 60, np.nan)), r"y must be finite.*in partition 1"),
        (dict(y=_bad(np.arange(100.0), 99, -np.inf)), r"y must be finite.*in partition 1"),
        (dict(y=np.full(100, 3.0)), "y must hold at least two distinct values with positive weight; got only 3.0"),
        (dict(w=_bad(np.ones(100), 5, -1.0)), r"sample_weight must be non-negative.*in partition 0"),
        (dict(w=_bad(np.ones(100), 5, np.nan)), r"sample_weight.*(finite|NaN).*in partition 0"),
        (dict(y=np.r_[np.full(50, 3.0), np.arange(50.0)], w=np.r_[np.ones(50), np.zeros(50)]),
         "y must hold at least two distinct values with positive weight"),
        (dict(p=_bad(np.full(100, 2.0), 80, 0.0), loss="poisson"), r"y_pred must be greater than 0.*in partition 1"),
        (dict(y=_bad(np.arange(100.0), 3, -1.0), loss="tweedie"), r"y must be at least 0.*in partition 0"),
    ],
)  # fmt: skip
def test_dask_regression_mcgrad_refuses_bad_input_by_name_and_partition(client, change, match):
    import dask.array as da

    from mcal.dask import DaskRegressionMCGrad

    values = {"p": np.full(100, 2.0), "y": np.arange(100.0), "w": None, "loss": "squared_error", **change}
    chunked = {k: None if v is None else da.from_array(v, chunks=50) for k, v in values.items() if k != "loss"}
    model = DaskRegressionMCGrad(client=client, loss=values["loss"], early_stopping=None, **FAST)
    with pytest.raises(ValueError, match=match):
        model.fit(chunked["p"], chunked["y"], sample_weight=chunked["w"])


def test_dask_regression_mcgrad_refuses_bad_x_and_non_dask_input(client):
    import dask.array as da
    import dask.dataframe as dd

    from mcal.dask import DaskRegressionMCGrad

    model = DaskRegressionMCGrad(client=client, early_stopping=None, **FAST)
    p, y = np.full(100, 2.0), np.arange(100.0)
    with pytest.raises(TypeError, match="y_pred must be a dask Array, DataFrame or Series"):
        model.fit(p, da.from_array(y))
    frame = pd.DataFrame({"p": p, "y": y, "x": np.r_[np.ones(99), np.inf]})
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match=r"X .*(finite|infinit).*in partition 1"):
        model.fit(ddf["p"], ddf["y"], X=ddf[["x"]])


# -- command line ------------------------------------------------------------------------------------------
def test_cli_fits_regression_mcgrad_on_a_cluster(client, frames, tmp_path, capsys):
    from mcal.cli import main

    train, test = frames
    folder = tmp_path / "train"
    folder.mkdir()
    stored = train.assign(group=train["group"].astype(str))
    for k in range(3):
        stored.iloc[k * 2000 : (k + 1) * 2000].to_parquet(folder / f"part-{k}.parquet", index=False)
    model_path = tmp_path / "model.json"
    args = ["fit", str(folder / "*.parquet"), "--score-col", "p", "--label-col", "y", "--method", "regression-mcgrad",
            "--features", "group,x", "--param", "max_rounds=2", "--param", "n_estimators=20", "--random-state", "0",
            "--scheduler", client.scheduler.address, "-o", str(model_path)]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    assert "RegressionMCGrad fitted with Dask on 3 partitions" in capsys.readouterr().out
    model = mcal.load(model_path)
    assert type(model) is mcal.RegressionMCGrad and model.n_rounds_ >= 1
    X = test[X_COLS].assign(group=test["group"].astype(str))
    assert mse(test["y"], model.predict(test["p"], X=X)) < mse(test["y"], test["p"]) - 0.3
    assert main([*args[:-2], "--pos-label", "1", "-o", str(tmp_path / "other.json")]) == 2  # a usage error
    assert "--pos-label applies to binary labels" in capsys.readouterr().err


def test_cli_evaluates_a_continuous_label_on_a_cluster_as_in_memory(client, frames, tmp_path, capsys):
    from mcal.cli import main

    train, _ = frames
    folder = tmp_path / "scores"
    folder.mkdir()
    stored = train.assign(group=train["group"].astype(str), q=train["p"] + 0.3)
    for k in range(3):
        stored.iloc[k * 2000 : (k + 1) * 2000].to_parquet(folder / f"part-{k}.parquet", index=False)
    args = [str(folder), "--score-col", "p", "--score-col", "q", "--label-col", "y", "--outcome", "regression", "--segments", "group,x",
            "--json"]  # fmt: skip
    assert main(["evaluate", *args]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["evaluate", *args, "--scheduler", client.scheduler.address]) == 0, capsys.readouterr().err
    remote = json.loads(capsys.readouterr().out)
    for name in ("p", "q"):
        assert set(remote["metrics"][name]) == set(local["metrics"][name]) >= {"mse", "ecce_pvalue", "mce_sigma"}
        for key, value in local["metrics"][name].items():
            assert remote["metrics"][name][key] == pytest.approx(value, rel=1e-9, abs=1e-12), (name, key)
    assert [s["description"] for s in remote["segments"]["q"]] == [s["description"] for s in local["segments"]["q"]]


# -- metrics -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_scored():
    """Real outcomes with predictions of many ties (the scale reads ties in input order), zero weights, segments."""
    rng = np.random.default_rng(7)
    n = 4003
    p = rng.choice(np.round(rng.normal(10.0, 3.0, 150), 2), n)
    group = rng.choice(["ad", "feed", "search", "video"], n)
    y = p + 0.3 * (p - 10.0) + (group == "feed") * 1.5 + rng.normal(0.0, 2.0, n)
    w = rng.uniform(0, 2, n)
    w[rng.random(n) < 0.05] = 0.0
    return y, p, w, group


@pytest.mark.filterwarnings("ignore:ecce_sigma returns ECCE / sigma:FutureWarning")
@pytest.mark.parametrize("name", ["ecce", "ecce_std", "ecce_sigma", "ecce_pvalue", "mse", "mae"])
def test_distributed_regression_metric_equals_local_metric(client, real_scored, name):
    from mcal.dask import metrics as dmetrics

    y, p, w, _ = real_scored
    kwargs = {} if name in ("mse", "mae") else {"outcome": "regression"}
    local = getattr(mcal.metrics, name)(y, p, sample_weight=w, **kwargs)
    got = getattr(dmetrics, name)(_chunked(y), _chunked(p), sample_weight=_chunked(w), **kwargs)
    assert abs(got - local) <= 1e-9 * max(1.0, abs(local))
    if name == "ecce_std":  # the input order of ties matters: reversed rows give another value, also on dask
        flipped = mcal.metrics.ecce_std(y[::-1], p[::-1], sample_weight=w[::-1], outcome="regression")
        assert abs(flipped - local) > 1e-6
        got = dmetrics.ecce_std(_chunked(y[::-1]), _chunked(p[::-1]), sample_weight=_chunked(w[::-1]),
                                  outcome="regression")  # fmt: skip
        assert abs(got - flipped) <= 1e-9 * flipped


def test_distributed_regression_mce_equals_local_mce_over_the_same_segments(client, real_scored):
    import dask.dataframe as dd

    from mcal.dask import metrics as dmetrics
    from mcal.segments import generate_segments

    y, p, w, group = real_scored
    rng = np.random.default_rng(9)
    X = pd.DataFrame({"group": group, "age": rng.integers(18, 80, y.size).astype(float)})
    segments = generate_segments(X, max_depth=2)
    local = mcal.metrics.mce(y, p, segments=segments, sample_weight=w, outcome="regression")
    ddf = dd.from_pandas(X.assign(y=y, p=p, w=w), npartitions=6)
    got = dmetrics.mce(ddf["y"], ddf["p"], X=ddf[["group", "age"]], segments=segments, sample_weight=ddf["w"],
                       outcome="regression")  # fmt: skip
    assert local.n_segments == got.n_segments > 10
    assert abs(got.mce_sigma - local.mce_sigma) < 1e-9 * local.mce_sigma
    assert got.table["size"].tolist() == local.table["size"].tolist()
    means = ["mean_prediction", "mean_outcome"]
    np.testing.assert_allclose(got.table[["weight", "ecce", "sigma", *means]], local.table[["weight", "ecce", "sigma", *means]],
                               rtol=1e-9, atol=1e-12)  # fmt: skip
    assert got.table["direction"].tolist() == local.table["direction"].tolist()
    assert "" not in set(got.table["direction"])  # every segment has a direction
    assert np.isnan(got.minority_prevalence) and np.isnan(local.minority_prevalence)
    for field in ("global_ecce", "global_ecce_sigma", "sigma", "mce_absolute", "pvalue"):
        assert abs(getattr(got, field) - getattr(local, field)) <= 1e-9 * max(1.0, abs(getattr(local, field))), field
    whole = dmetrics.mce(_chunked(y), _chunked(p), sample_weight=_chunked(w), outcome="regression")
    expected = mcal.metrics.mce(y, p, sample_weight=w, outcome="regression")
    assert abs(whole.mce_sigma - expected.mce_sigma) < 1e-9 * expected.mce_sigma


def test_distributed_regression_metrics_refuse_bad_inputs(client, real_scored):
    from mcal.dask import metrics as dmetrics

    y, p, w, _ = real_scored
    with pytest.raises(ValueError, match=r"y_true must be finite.*in partition 2"):
        dmetrics.ecce(_chunked(np.where(np.arange(y.size) == 1200, np.nan, y)), _chunked(p), outcome="regression")
    with pytest.raises(ValueError, match=r"y_pred must be finite.*in partition 3"):
        dmetrics.mse(_chunked(y), _chunked(np.where(np.arange(y.size) == 2600, np.inf, p)))
    with pytest.raises(ValueError, match=r"y_prob must be finite.*in partition 1"):
        dmetrics.mce(_chunked(y), _chunked(np.where(np.arange(y.size) == 5, -np.inf, p)), outcome="regression")
    with pytest.raises(ValueError, match="outcome must be 'classification' or 'regression'; got 'real'"):
        dmetrics.ecce_std(_chunked(y), _chunked(p), outcome="real")
    with pytest.raises(ValueError, match="positive sum"):
        dmetrics.mae(_chunked(y), _chunked(p), sample_weight=_chunked(np.zeros_like(w)))
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\]"):  # the default is still classification
        dmetrics.ecce(_chunked(y), _chunked(p))
