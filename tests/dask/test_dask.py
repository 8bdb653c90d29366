"""Tests of mcal.dask: MCGrad, prediction, metrics and the command line on a Dask cluster.

One session-wide LocalCluster (2 workers x 1 thread, in-process, no dashboard; the ``client`` fixture of
conftest.py) serves every test but the one that kills a worker, which starts its own cluster of processes. Data
are tiny; LightGBM uses one thread per worker.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before any OpenMP runtime starts in this process or the workers

import json
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

import mcal

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # a Dask cluster: slow (tests/README.md)

# Small, fast boosters (as in tests/mcgrad/test_estimator.py); one LightGBM thread.
FAST = dict(n_estimators=20, learning_rate=0.2, min_child_samples=20, max_rounds=3, n_jobs=1, random_state=0)


def log_loss(y, p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def table(n, seed, levels="abc"):
    """Scores off by a per-level logit shift plus a numeric effect; columns level, x, p, y."""
    rng = np.random.default_rng(seed)
    k = len(levels)
    code = rng.integers(0, k, n)
    x = rng.normal(size=n)
    base = rng.normal(-0.3, 1.0, size=n)
    shift = np.linspace(-0.9, 0.9, k)[code] + 0.3 * x
    y = (rng.random(n) < expit(base + shift)).astype(float)
    return pd.DataFrame({"level": pd.Categorical(np.array(list(levels))[code]), "x": x, "p": expit(base), "y": y})


@pytest.fixture(scope="module")
def frames():
    return table(6000, seed=1), table(20000, seed=2)


@pytest.fixture(scope="module")
def fitted(client, frames):
    import dask.dataframe as dd

    from mcal.dask import DaskMCGrad

    train, _ = frames
    ddf = dd.from_pandas(train, npartitions=3)
    return DaskMCGrad(client=client, early_stopping=None, **FAST).fit(ddf["p"], ddf["y"], X=ddf[["level", "x"]])


# -- MCGrad ------------------------------------------------------------------------------------------------
def test_distributed_and_local_mcgrad_agree_on_held_out_log_loss(fitted, frames):
    """Same rounds and boosters: held-out log loss within 0.005 of the local fit.

    Dask LightGBM is not deterministic (which worker gets which partition changes, and data-parallel LightGBM
    bins each feature on the workers' own rows). Measured with this data and these settings over 8 runs:
    dask - local in [0.0003, 0.0008], for an improvement over the input scores of 0.050; on similar data with 3
    rounds the spread reached 0.0021. 0.005 is over twice the largest difference seen and a tenth of the gain.
    """
    train, test = frames
    X = ["level", "x"]
    local = mcal.MCGrad(early_stopping=None, **FAST).fit(train["p"], train["y"], X=train[X])
    base = log_loss(test["y"], test["p"])
    local_loss = log_loss(test["y"], local.predict(test["p"], X=test[X]))
    dask_loss = log_loss(test["y"], fitted.predict(test["p"], X=test[X]))
    assert base - local_loss > 0.03
    assert abs(dask_loss - local_loss) < 0.005
    assert fitted.n_rounds_ == local.n_rounds_ == 3


@pytest.mark.filterwarnings("ignore:early stopping chose max_rounds")  # Dask LightGBM varies; 3 rounds may all help
def test_dask_mcgrad_early_stopping_on_a_holdout_split_improves_held_out_loss(client, frames):
    import dask.dataframe as dd

    from mcal.dask import DaskMCGrad

    train, test = frames
    ddf = dd.from_pandas(train, npartitions=3)
    model = DaskMCGrad(client=client, **FAST).fit(ddf["p"], ddf["y"], X=ddf[["level", "x"]])
    assert model.validation_losses_.size >= 2
    assert model.n_rounds_ == int(np.argmin(model.validation_losses_))
    assert log_loss(test["y"], test["p"]) - log_loss(test["y"], model.predict(test["p"], X=test[["level", "x"]])) > 0.03


def test_dask_mcgrad_warns_as_mcgrad_when_y_prob_and_y_look_swapped(client, frames):
    import dask.dataframe as dd

    from mcal.dask import DaskMCGrad

    train, _ = frames
    ddf = dd.from_pandas(train, npartitions=3)
    hint = "did you pass y_prob and y in the wrong order? fit takes (y_prob, y)"
    with pytest.warns(mcal.CalibrationWarning, match=re.escape(hint)):  # the labels as scores, probabilities as labels
        DaskMCGrad(client=client, early_stopping=None, **{**FAST, "max_rounds": 1}).fit(ddf["y"], ddf["p"])


def test_dask_mcgrad_kfold_early_stopping_pools_the_out_of_fold_loss(client, frames):
    import dask.dataframe as dd

    from mcal.dask import DaskMCGrad

    train, test = frames
    ddf = dd.from_pandas(train, npartitions=2)
    model = DaskMCGrad(client=client, early_stopping="kfold", n_folds=2, **{**FAST, "max_rounds": 2})
    model.fit(ddf["p"], ddf["y"], X=ddf[["level", "x"]])
    losses = model.validation_losses_
    assert losses.size >= 2 and losses[1] < losses[0] - 0.02  # the first round helps out of fold
    assert abs(losses[0] - log_loss(train["y"], train["p"])) < 1e-9  # index 0: the input scores, on every row
    assert log_loss(test["y"], model.predict(test["p"], X=test[["level", "x"]])) < log_loss(test["y"], test["p"])


def test_dask_mcgrad_has_the_parameters_and_defaults_of_mcgrad_plus_client_and_timeout():
    from mcal.dask import DaskMCGrad

    params = DaskMCGrad().get_params()
    assert params.pop("client") is None and params.pop("timeout") is None
    assert params == mcal.MCGrad().get_params()
    assert DaskMCGrad(max_rounds=7).get_params()["max_rounds"] == 7
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_round'"):
        DaskMCGrad(max_round=7)


def test_rescaling_factor_from_dask_reductions_equals_numpy(client):
    import dask.array as da

    from mcal.dask._engine import DaskEngine
    from mcal.mcgrad.engine import LocalEngine, rescale_factor

    rng = np.random.default_rng(3)
    z = rng.normal(0, 3, 5000)
    y = (rng.random(5000) < expit(0.6 * z)).astype(float)
    w = rng.uniform(0, 2, 5000)
    local = rescale_factor(LocalEngine({}, 1, []), y, z, w)
    engine = DaskEngine(client, {}, 1, [], timeout=60)
    dy, dz, dw = (da.from_array(v, chunks=1200) for v in (y, z, w))
    assert abs(rescale_factor(engine, dy, dz, dw) - local) < 1e-9
    assert abs(local - 0.6) < 0.1  # the data's own factor, so the comparison is not between two defaults
    np.testing.assert_allclose(
        engine.log_loss_sum(dy, dz, dw), LocalEngine({}, 1, []).log_loss_sum(y, z, w), rtol=1e-12
    )


def _inconsistent_partitions(seed):
    """Two partitions whose category column holds levels a-e and d-h, each with its own pandas categories."""
    whole = table(8000, seed, levels="abcdefgh")
    codes = whole["level"].cat.codes.to_numpy()
    first, second = whole[codes <= 4].copy(), whole[codes >= 3].copy().iloc[: (codes > 4).sum() + 300]
    for part in (first, second):
        part["level"] = part["level"].astype(str).astype("category")  # categories of this partition only
    return first, second


def test_categories_that_differ_between_partitions_are_encoded_once_globally(client):
    """Two traps of partitions that are not random samples, both avoided.

    Per-partition pandas categories would give each worker its own codes (LightGBM trains silently wrong): one
    global vocabulary fixes that. And data-parallel LightGBM builds a feature's bins from one worker's rows, so a
    worker holding levels a-e only would bin f-h as unseen: the rows are dealt to partitions at random first.
    Before that dealing, the calibration error of level h varied from 0.009 to 0.054 between runs; now each
    level's mean prediction matches the local fit's.
    """
    import dask
    import dask.dataframe as dd

    from mcal.dask import DaskMCGrad

    first, second = _inconsistent_partitions(4)
    assert list(first["level"].cat.categories) != list(second["level"].cat.categories)
    meta = first.iloc[:0]
    ddf = dd.from_delayed([dask.delayed(first), dask.delayed(second)], meta=meta, verify_meta=False)
    model = DaskMCGrad(client=client, early_stopping=None, **FAST).fit(ddf["p"], ddf["y"], X=ddf[["level", "x"]])
    whole = pd.concat([first, second]).astype({"level": str})
    local = mcal.MCGrad(early_stopping=None, **FAST).fit(whole["p"], whole["y"], X=whole[["level", "x"]])
    assert model.encoder_.categories_ == local.encoder_.categories_ == [list("abcdefgh"), None]
    test = table(20000, 5, levels="abcdefgh")
    test["level"] = test["level"].astype(str)
    got = model.predict(test["p"], X=test[["level", "x"]])
    expected = local.predict(test["p"], X=test[["level", "x"]])
    for level in "abcdefgh":
        rows = (test["level"] == level).to_numpy()
        assert abs(got[rows].mean() - expected[rows].mean()) < 0.01, level
        assert abs(got[rows].mean() - test["y"][rows].mean()) < 0.06, (
            level
        )  # calibrated: the input is off by up to 0.17


def test_partitions_that_disagree_on_a_columns_kind_are_rejected(client):
    import dask
    import dask.dataframe as dd

    from mcal.dask import DaskMCGrad

    a = pd.DataFrame({"c": ["u", "v"] * 50, "p": 0.5, "y": [0.0, 1.0] * 50})
    b = pd.DataFrame({"c": [1.5, 2.5] * 50, "p": 0.5, "y": [0.0, 1.0] * 50})
    ddf = dd.from_delayed([dask.delayed(a), dask.delayed(b)], meta=a.iloc[:0], verify_meta=False)
    with pytest.raises(ValueError, match="must agree on which columns are categorical"):
        DaskMCGrad(client=client, early_stopping=None, **FAST).fit(ddf["p"], ddf["y"], X=ddf[["c"]])


def test_model_file_of_dask_mcgrad_loads_as_mcgrad_with_the_same_predictions(fitted, frames, tmp_path):
    _, test = frames
    path = mcal.save(fitted, tmp_path / "model.json")
    loaded = mcal.load(path)
    assert type(loaded) is mcal.MCGrad
    assert loaded.get_params() == fitted.to_local().get_params()
    X = test[["level", "x"]]
    np.testing.assert_array_equal(loaded.predict(test["p"], X=X), fitted.predict(test["p"], X=X))
    assert json.loads(path.read_text())["model"]["class"] == "MCGrad"


def test_lazy_predict_over_dask_collections_equals_local_predict(fitted, frames):
    import dask.array as da
    import dask.dataframe as dd

    _, test = frames
    ddf = dd.from_pandas(test, npartitions=4)
    expected = fitted.predict(test["p"], X=test[["level", "x"]])
    series = fitted.predict(ddf["p"], X=ddf[["level", "x"]])
    assert isinstance(series, dd.Series) and series.divisions == ddf.divisions
    np.testing.assert_array_equal(series.compute().to_numpy(), expected)
    dX = da.from_array(test[["x"]].to_numpy(), chunks=(5000, 1))
    model = mcal.MCGrad(early_stopping=None, **FAST).fit(test["p"], test["y"], X=test[["x"]].to_numpy())
    array = mcal.dask.predict(model, da.from_array(test["p"].to_numpy(), chunks=5000), X=dX)
    assert isinstance(array, da.Array)
    np.testing.assert_array_equal(array.compute(), model.predict(test["p"], X=test[["x"]].to_numpy()))


def test_compiled_dask_mcgrad_predicts_as_lightgbm_locally_and_over_collections(fitted, frames):
    import pickle

    import dask.dataframe as dd

    pytest.importorskip("lleaves", reason="lleaves is not installed (mcal[compiled])")
    _, test = frames
    model = pickle.loads(pickle.dumps(fitted)).compile()  # a copy: the module's model stays uncompiled
    assert model.to_local()._compiled is model._compiled  # to_local shares the compiled rounds
    X, expected = test[["level", "x"]], fitted.predict(test["p"], X=test[["level", "x"]])
    np.testing.assert_allclose(model.predict(test["p"], X=X), expected, rtol=0, atol=1e-12)
    ddf = dd.from_pandas(test, npartitions=4)
    lazy = model.predict(ddf["p"], X=ddf[["level", "x"]]).compute().to_numpy()
    np.testing.assert_allclose(lazy, expected, rtol=0, atol=1e-12)


def test_dask_mcgrad_rejects_bad_inputs_with_the_partition_named(client):
    import dask.array as da

    from mcal.dask import DaskMCGrad

    model = DaskMCGrad(client=client, early_stopping=None, **FAST)
    p, y = np.full(100, 0.5), np.tile([0.0, 1.0], 50)
    with pytest.raises(TypeError, match="y_prob must be a dask Array, DataFrame or Series"):
        model.fit(p, da.from_array(y))
    with pytest.raises(ValueError, match="same number of partitions"):
        model.fit(da.from_array(p, chunks=50), da.from_array(y, chunks=25))
    bad = p.copy()
    bad[70] = 1.5
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\].*index 20 .*in partition 1"):
        model.fit(da.from_array(bad, chunks=50), da.from_array(y, chunks=50))
    with pytest.raises(ValueError, match="both classes"):
        model.fit(da.from_array(p, chunks=50), da.from_array(np.zeros(100), chunks=50))
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        DaskMCGrad(client=client, timeout=0).fit(da.from_array(p), da.from_array(y))
    with pytest.raises(TypeError, match="client must be a distributed.Client"):
        DaskMCGrad(client="tcp://x").fit(da.from_array(p), da.from_array(y))


@pytest.mark.parametrize("weight, row", [(1e-300, 70), (1e300, 70), (1e39, 71)])
def test_dask_mcgrad_rejects_weights_outside_float32_across_partitions(client, weight, row):
    # as MCGrad: LightGBM stores float32 weights (1e-300 -> 0, 1e300 -> inf); the range is over all partitions,
    # here one row of the second one, the others in range and one partition all zeros; row 71 is a positive
    # one, whose weight swamped the class sums (this was "only class 1")
    import dask.array as da

    from mcal.dask import DaskMCGrad

    p, y = np.full(150, 0.5), np.tile([0.0, 1.0], 75)
    w = np.r_[np.zeros(50), np.ones(100)]
    w[row] = weight
    low, high = (weight, 1.0) if weight < 1 else (1.0, weight)
    with pytest.raises(
        ValueError,
        match=rf"sample_weight must have its positive weights in \[1.175e-38, 3.403e\+38\], "
        rf"LightGBM's float32 range; got weights from {re.escape(f'{low:.4g}')} to {re.escape(f'{high:.4g}')}",
    ):
        DaskMCGrad(client=client, early_stopping=None, **FAST).fit(
            da.from_array(p, chunks=50), da.from_array(y, chunks=50), sample_weight=da.from_array(w, chunks=50)
        )


def test_dask_mcgrad_fits_with_a_large_weight_on_one_positive_row(client):
    # 1e20 fits float32, and MCGrad takes it; the Dask class check subtracted sums and lost the negatives to rounding
    import dask.array as da

    from mcal.dask import DaskMCGrad

    p, y = np.full(200, 0.5), np.tile([0.0, 1.0], 100)
    w = np.ones(200)
    w[1] = 1e20
    model = DaskMCGrad(client=client, early_stopping=None, **{**FAST, "max_rounds": 1}).fit(
        da.from_array(p, chunks=100), da.from_array(y, chunks=100), sample_weight=da.from_array(w, chunks=100)
    )
    assert model.n_rounds_ == 1


def test_dask_mcgrad_takes_a_numpy_timeout_and_clones_with_its_client(client, frames):
    # np.float32(60) was refused as not a number; clone() deep-copied the client and failed on its asyncio task
    import dask.dataframe as dd
    from sklearn.base import clone

    from mcal.dask import DaskMCGrad

    model = DaskMCGrad(client=client, timeout=np.float32(60), early_stopping=None, **{**FAST, "max_rounds": 1})
    copy = clone(model)
    assert copy.client is client and copy.get_params(deep=False).keys() == model.get_params(deep=False).keys()
    df = dd.from_pandas(frames[0], npartitions=2)
    assert copy.fit(df["p"], df["y"], X=df[["level", "x"]]).n_rounds_ == 1


def test_dask_mcgrad_checks_monotone_constraints_before_lightgbm(client, frames):
    # LightGBM aborts the process (here: the in-process workers and the test session) on a constraint on a
    # categorical column
    import dask.dataframe as dd

    from mcal.dask import DaskMCGrad

    df = dd.from_pandas(frames[0], npartitions=2)
    model = DaskMCGrad(client=client, **{**FAST, "lightgbm_params": {"monotone_constraints": [1, 0, 1]}})
    with pytest.raises(
        ValueError, match=r"monotone_constraints'\] must hold 3 values.*categorical columns \['level'\]"
    ):
        model.fit(df["p"], df["y"], X=df[["level", "x"]])


def test_holdout_folds_hold_out_the_fraction_of_each_class():
    from mcal.dask._inputs import FoldSpec, assign_folds

    y = np.repeat([0.0, 1.0], [7000, 3000])
    folds = np.concatenate([assign_folds(y[k::4], FoldSpec(2, 0.2, 9), k) for k in range(4)])
    ys = np.concatenate([y[k::4] for k in range(4)])
    for c in (0.0, 1.0):
        assert abs(folds[ys == c].mean() - 0.2) < 0.003  # per-partition random rounding keeps the share
    again = assign_folds(y[::4], FoldSpec(2, 0.2, 9), 0)
    np.testing.assert_array_equal(again, folds[: again.size])
    kfold = assign_folds(y, FoldSpec(5, None, 1), 0)
    assert np.bincount(kfold[y == 1.0]).tolist() == [600] * 5


def test_a_step_longer_than_the_timeout_is_cancelled_with_a_clear_error(client):
    import dask

    from mcal.dask._inputs import compute

    with pytest.raises(TimeoutError, match="did not finish within timeout=0.2 s"):
        compute(client, [dask.delayed(time.sleep)(3)], 0.2, "sleeping")


def test_a_worker_that_dies_mid_fit_gives_a_clear_error_not_a_hang():
    """A cluster of processes; one worker is killed while LightGBM trains. The fit must fail within seconds."""
    pytest.importorskip("lightgbm")
    distributed = pytest.importorskip("distributed")
    import dask.array as da

    from mcal.dask import DaskMCGrad, WorkerLostError

    rng = np.random.default_rng(0)
    n = 20000
    X = rng.normal(size=(n, 4))
    p = expit(rng.normal(size=n))
    y = (rng.random(n) < expit(X[:, 0])).astype(float)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            host="127.0.0.1",
            memory_limit="2GiB",
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        pids = c.run(os.getpid)
        victim = pids[sorted(pids)[1]]
        training = threading.Event()

        def kill_when_training():
            while not training.wait(0.02):
                if any(str(key).startswith("_train_part") for keys in c.processing().values() for key in keys):
                    training.set()
            os.kill(victim, signal.SIGKILL)

        threading.Thread(target=kill_when_training, daemon=True).start()
        model = DaskMCGrad(client=c, early_stopping=None, max_rounds=50, n_estimators=200, max_leaves=31,
                           min_child_samples=20, timeout=60)  # fmt: skip
        start = time.monotonic()
        with pytest.raises(WorkerLostError, match="left the cluster during LightGBM's distributed fit"):
            model.fit(
                da.from_array(p, chunks=5000), da.from_array(y, chunks=5000), X=da.from_array(X, chunks=(5000, 4))
            )
        assert training.is_set() and time.monotonic() - start < 60


def test_mcal_imports_and_fits_without_dask_installed(tmp_path):
    """dask stays optional: on a path where dask and distributed are really absent (the site-packages of this
    environment mirrored without them, Python started without its own site), mcal works, LightGBM-backed
    MCGrad fits, and mcal.dask explains the extra it needs."""
    import sysconfig

    site = sysconfig.get_paths()["purelib"]
    shadow = tmp_path / "site-packages"
    shadow.mkdir()
    for entry in os.listdir(site):
        if entry.split("-")[0].split(".")[0] not in ("dask", "distributed"):
            os.symlink(os.path.join(site, entry), shadow / entry)
    code = """
import importlib.util, sys
assert importlib.util.find_spec('dask') is None and importlib.util.find_spec('distributed') is None
import numpy as np, mcal, mcal.metrics, mcal.dask
assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]
print(mcal.IsotonicCalibration().fit([0.2, 0.8], [0, 1]).predict([0.2]).tolist())
rng = np.random.default_rng(0)
p, X = rng.uniform(0.1, 0.9, 400), rng.normal(size=(400, 1))
mcal.MCGrad(max_rounds=1, early_stopping=None, n_estimators=5, min_child_samples=20, n_jobs=1).fit(
    p, (rng.random(400) < p).astype(float), X=X)
for call in (lambda: mcal.dask.DaskMCGrad().fit([0.5], [1]), lambda: mcal.dask.metrics.ecce([1], [0.5])):
    try:
        call()
    except ImportError as exc:
        print('ImportError:', exc)
"""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([src, str(shadow)])})  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "[0.25]" in out.stdout  # Jeffreys end blocks: (0 + 1/2) / (1 + 1)
    assert out.stdout.count("is required for this feature") == 2 and "mcal[dask]" in out.stdout


# -- metrics -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scored():
    """Scores with many ties, weights with zeros, a field, and chunks that include an empty one."""
    rng = np.random.default_rng(7)
    n = 4003
    p = rng.choice(np.round(rng.uniform(0.02, 0.98, 150), 3), n)
    y = (rng.random(n) < expit(1.4 * np.log(p / (1 - p)) + 0.2)).astype(float)
    w = rng.uniform(0, 2, n)
    w[rng.random(n) < 0.05] = 0.0
    field = rng.choice(["ad", "feed", "search", "video"], n)
    return y, p, w, field


def _chunked(values):
    import dask.array as da

    return da.from_array(values, chunks=((0, 1000, 1500, 503, 1000),))


@pytest.mark.filterwarnings("ignore:ecce_sigma returns ECCE / sigma:FutureWarning")
@pytest.mark.parametrize("name", ["log_loss", "brier_score", "pcoc", "ecce", "ecce_sigma", "ecce_std", "ecce_pvalue",
                                  "roc_auc", "pr_auc"])  # fmt: skip
def test_distributed_metric_equals_local_metric(client, scored, name):
    from mcal.dask import metrics as dmetrics

    y, p, w, _ = scored
    local = getattr(mcal.metrics, name)(y, p, sample_weight=w)
    assert abs(getattr(dmetrics, name)(_chunked(y), _chunked(p), sample_weight=_chunked(w)) - local) < 1e-9


def test_distributed_ecce_equals_local_without_weights_and_with_distinct_scores(client):
    import dask.dataframe as dd

    from mcal.dask import metrics as dmetrics

    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"p": rng.uniform(size=3000)})
    frame["y"] = (rng.random(3000) < frame["p"] ** 2).astype(float)
    ddf = dd.from_pandas(frame, npartitions=5)
    expected = mcal.metrics.ecce(frame["y"], frame["p"])
    assert expected > 0.1  # miscalibrated, so the walk has a real range
    assert abs(dmetrics.ecce(ddf["y"], ddf["p"]) - expected) < 1e-9


@pytest.mark.parametrize("n_bins", [7, 10**12])  # 10**12 bins once asked each partition for 8 TB of bin sums
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_distributed_ece_equals_local_ece(client, scored, strategy, n_bins):
    from mcal.dask import metrics as dmetrics

    y, p, w, _ = scored
    local = mcal.metrics.ece(y, p, sample_weight=w, n_bins=n_bins, strategy=strategy)
    got = dmetrics.ece(_chunked(y), _chunked(p), sample_weight=_chunked(w), n_bins=n_bins, strategy=strategy)
    assert abs(got - local) < 1e-9


def test_distributed_f_rce_and_summary_equal_local(client, scored):
    from mcal.dask import metrics as dmetrics

    y, p, w, field = scored
    local = mcal.metrics.f_rce(y, p, field=field, sample_weight=w)
    assert (
        abs(dmetrics.f_rce(_chunked(y), _chunked(p), field=_chunked(field), sample_weight=_chunked(w)) - local) < 1e-9
    )
    q = np.clip(p * 0.8, 0, 1)
    expected = mcal.metrics.calibration_summary(y, {"p": p, "q": q}, sample_weight=w, field=field)
    got = dmetrics.calibration_summary(_chunked(y), {"p": _chunked(p), "q": _chunked(q)}, sample_weight=_chunked(w),
                                       field=_chunked(field))  # fmt: skip
    assert list(got.columns) == list(expected.columns) and list(got.index) == ["p", "q"]
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-9)


def test_distributed_f_rce_counts_missing_field_values_as_one_field_value_in_every_partition(client, scored):
    from mcal.dask import metrics as dmetrics

    y, p, w, field = scored
    field = np.where(np.arange(y.size) % 7 == 0, None, field).astype(object)  # missing in every partition
    local = mcal.metrics.f_rce(y, p, field=np.where(pd.isna(field), "~missing", field), sample_weight=w)
    got = dmetrics.f_rce(_chunked(y), _chunked(p), field=_chunked(field), sample_weight=_chunked(w))
    assert abs(got - local) < 1e-9


def test_distributed_mce_equals_local_mce_over_the_same_segments(client, scored):
    import dask.dataframe as dd

    from mcal.dask import metrics as dmetrics
    from mcal.segments import generate_segments

    y, p, w, field = scored
    rng = np.random.default_rng(9)
    X = pd.DataFrame({"field": field, "age": rng.integers(18, 80, y.size).astype(float)})
    segments = generate_segments(X, max_depth=2)
    local = mcal.metrics.mce(y, p, segments=segments, sample_weight=w)
    ddf = dd.from_pandas(X.assign(y=y, p=p, w=w), npartitions=6)
    got = dmetrics.mce(ddf["y"], ddf["p"], X=ddf[["field", "age"]], segments=segments, sample_weight=ddf["w"])
    assert local.n_segments == got.n_segments > 10
    assert abs(got.mce_sigma - local.mce_sigma) < 1e-9 and abs(got.global_ecce - local.global_ecce) < 1e-9
    assert got.table["description"].tolist() == local.table["description"].tolist()
    assert got.table["size"].tolist() == local.table["size"].tolist()
    means = ["mean_prediction", "mean_outcome"]
    np.testing.assert_allclose(got.table[["weight", "ecce", "sigma", *means]], local.table[["weight", "ecce", "sigma", *means]],
                               rtol=1e-9, atol=1e-12)  # fmt: skip
    assert got.table["direction"].tolist() == local.table["direction"].tolist()
    assert "" not in set(got.table["direction"])  # every segment has a direction
    whole = dmetrics.mce(ddf["y"], ddf["p"], sample_weight=ddf["w"])  # one segment: the global ECCE / sigma
    assert abs(whole.mce_sigma - mcal.metrics.mce(y, p, sample_weight=w).mce_sigma) < 1e-9


def test_distributed_metrics_reject_bad_inputs(client, scored):
    from mcal.dask import metrics as dmetrics

    y, p, w, _ = scored
    with pytest.raises(ValueError, match=r"y_true must be binary.*in partition 2"):
        dmetrics.ecce(_chunked(np.where(np.arange(y.size) == 1200, 2.0, y)), _chunked(p))
    with pytest.raises(ValueError, match=r"y_true must be binary.*did you pass y_true and y_prob in the wrong order\? "
                                         r"metrics take \(y_true, y_prob\)"):  # fmt: skip
        dmetrics.ecce(_chunked(p), _chunked(y))
    with pytest.raises(ValueError, match="both classes"):
        dmetrics.roc_auc(_chunked(np.zeros_like(y)), _chunked(p))
    with pytest.raises(ValueError, match="positive sum"):
        dmetrics.ecce(_chunked(y), _chunked(p), sample_weight=_chunked(np.zeros_like(w)))
    with pytest.raises(TypeError, match="y_prob must be a dask"):
        dmetrics.log_loss(_chunked(y), p)
    with pytest.raises(TypeError, match="epsilon must be a non-negative finite number; got '0.1'"):
        dmetrics.f_rce(_chunked(y), _chunked(p), field=_chunked(np.zeros(y.size)), epsilon="0.1")


# -- command line ------------------------------------------------------------------------------------------
def test_cli_fit_and_evaluate_on_partitioned_parquet_with_a_scheduler(client, frames, tmp_path, capsys):
    from mcal.cli import main

    train, test = frames
    folder = tmp_path / "train"
    folder.mkdir()
    stored = train.assign(level=train["level"].astype(str))
    for k in range(3):
        stored.iloc[k * 2000 : (k + 1) * 2000].to_parquet(folder / f"part-{k}.parquet", index=False)
    address = client.scheduler.address
    model_path = tmp_path / "model.json"
    status = main(["fit", str(folder / "*.parquet"), "--score-col", "p", "--label-col", "y", "--method", "mcgrad",
                   "--features", "level,x", "--param", "max_rounds=2", "--param", "n_estimators=20",
                   "--param", "min_child_samples=20", "--random-state", "0", "--scheduler", address,
                   "-o", str(model_path)])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    model = mcal.load(model_path)
    assert type(model) is mcal.MCGrad and model.n_rounds_ >= 1
    X = test[["level", "x"]].assign(level=test["level"].astype(str))
    assert log_loss(test["y"], model.predict(test["p"], X=X)) < log_loss(test["y"], test["p"]) - 0.03
    capsys.readouterr()
    args = [str(folder), "--score-col", "p", "--label-col", "y", "--segments", "level,x", "--json"]
    assert main(["evaluate", *args]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["evaluate", *args, "--scheduler", address]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert remote["n_samples"] == local["n_samples"] == len(train)
    for key, value in local["metrics"]["p"].items():
        assert abs(remote["metrics"]["p"][key] - value) < 1e-9, key
    assert "mce_sigma" in local["metrics"]["p"]
    assert [s["description"] for s in remote["segments"]["p"]] == [s["description"] for s in local["segments"]["p"]]


def test_distributed_per_value_table_equals_the_local_one(client, scored):
    import dask.dataframe as dd

    from mcal.dask import metrics as dmetrics

    y, p, w, field = scored
    rng = np.random.default_rng(9)
    X = pd.DataFrame({"field": field, "age": rng.integers(18, 80, y.size).astype(float)})
    local = mcal.metrics.per_value_table(y, p, X=X, sample_weight=w, max_values_per_feature={"age": 4})
    ddf = dd.from_pandas(X.assign(y=y, p=p, w=w), npartitions=6)
    got = dmetrics.per_value_table(ddf["y"], ddf["p"], X=ddf[["field", "age"]], sample_weight=ddf["w"],
                                   max_values_per_feature={"age": 4})  # fmt: skip
    assert isinstance(got, mcal.metrics.PerValueTable) and len(got.table) > 5
    assert got.table["description"].tolist() == local.table["description"].tolist()
    assert got.n_left_out.to_dict() == local.n_left_out.to_dict()
    numbers = ["size", "weight", "ecce", "sigma", "ecce_sigma", "pvalue_adjusted"]
    np.testing.assert_allclose(got.table[numbers], local.table[numbers], rtol=1e-9, atol=1e-12)


def test_cli_evaluate_with_a_scheduler_prints_the_per_value_table(client, tmp_path, capsys):
    # issue 32: `evaluate --scheduler` left out the per-value table that `evaluate` prints
    from mcal.cli import main

    folder = tmp_path / "scores"
    folder.mkdir()
    frame = table(4000, seed=3, levels="abcdef").assign(level=lambda d: d["level"].astype(str))
    for k in range(2):
        frame.iloc[k * 2000 : (k + 1) * 2000].to_parquet(folder / f"part-{k}.parquet", index=False)
    args = [str(folder), "--score-col", "p", "--label-col", "y", "--segments", "level:2,x", "--json"]
    assert main(["evaluate", *args]) == 0
    local = json.loads(capsys.readouterr().out)["per_value"]
    assert main(["evaluate", *args, "--scheduler", client.scheduler.address]) == 0
    remote = json.loads(capsys.readouterr().out)["per_value"]
    rows = remote["rows"]["p"]
    assert [r["description"] for r in rows] == [r["description"] for r in local["rows"]["p"]]
    assert sum(r["feature"] == "level" for r in rows) == 6  # every level, though the segments keep 2
    for got, expected in zip(rows, local["rows"]["p"], strict=True):
        assert abs(got["ecce_sigma"] - expected["ecce_sigma"]) < 1e-9
    assert main(["evaluate", *args[:-1], "--scheduler", client.scheduler.address]) == 0
    assert "per value (every value with >= 10 rows" in capsys.readouterr().out


def test_cli_pos_label_that_is_not_a_label_fails_naming_the_labels(client, tmp_path, capsys):
    from mcal.cli import main

    folder = tmp_path / "scores"
    folder.mkdir()
    frame = pd.DataFrame({"y": ["yes", "no"] * 50, "p": np.linspace(0.1, 0.9, 100)})
    for k in range(2):
        frame.iloc[k * 50 : (k + 1) * 50].to_parquet(folder / f"part-{k}.parquet", index=False)
    args = [str(folder), "--score-col", "p", "--label-col", "y", "--scheduler", client.scheduler.address]
    assert main(["evaluate", *args, "--pos-label", "nope"]) == 2
    assert (
        "--pos-label must be one of the two labels of label column 'y' ['no', 'yes']; got 'nope'"
        in capsys.readouterr().err
    )
    assert main(["evaluate", *args, "--pos-label", "yes", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_samples"] == 100


def test_cli_evaluate_with_a_local_cluster_of_worker_processes_equals_the_local_table(scored, tmp_path, capsys):
    pytest.importorskip("distributed")
    from mcal.cli import main

    y, p, w, _ = scored
    folder = tmp_path / "scores"
    folder.mkdir()
    frame = pd.DataFrame({"y": y, "p": p, "w": w})
    for k in range(2):
        frame.iloc[k * 2000 : (k + 1) * 2000 + 3 * k].to_parquet(folder / f"part-{k}.parquet", index=False)
    args = [str(folder), "--score-col", "p", "--label-col", "y", "--weight-col", "w", "--json"]
    assert main(["evaluate", *args]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["evaluate", *args, "--dask-workers", "1"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert remote["n_samples"] == local["n_samples"] == y.size
    assert abs(remote["total_weight"] - local["total_weight"]) < 1e-9
    for key, value in local["metrics"]["p"].items():
        assert abs(remote["metrics"]["p"][key] - value) < 1e-9, key


def test_cli_rejects_methods_other_than_mcgrad_on_a_cluster(client, tmp_path, capsys):
    from mcal.cli import main

    path = tmp_path / "d.parquet"
    pd.DataFrame({"p": [0.2, 0.8], "y": [0, 1]}).to_parquet(path)
    status = main(["fit", str(path), "--score-col", "p", "--label-col", "y", "--method", "isotonic",
                   "--scheduler", client.scheduler.address, "-o", str(tmp_path / "m.json")])  # fmt: skip
    assert status == 2 and "fit --method mcgrad or regression-mcgrad only" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path / "none-*.parquet"), "--score-col", "p", "--label-col", "y",
                 "--scheduler", client.scheduler.address]) == 2  # fmt: skip
    assert "no file matches" in capsys.readouterr().err


def test_connect_and_read_parquet_reject_bad_arguments(tmp_path):
    pytest.importorskip("distributed")
    from mcal.dask import connect, read_parquet

    with pytest.raises(ValueError, match="exactly one of scheduler"), connect():
        pass
    with pytest.raises(ValueError, match="n_workers must be a positive integer; got 0$"), connect(n_workers=0):
        pass
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_parquet(tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match="no file matches"):
        read_parquet(str(tmp_path / "*.parquet"))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        # each was a ValueError, and a scheduler that is not a string reached distributed
        ({"n_workers": 2.0}, "n_workers must be a positive integer; got 2.0 of type float$"),
        ({"n_workers": True}, "n_workers must be a positive integer; got True of type bool$"),
        ({"n_workers": 1, "timeout": "10"}, "timeout must be a positive number of seconds; got '10' of type str$"),
        ({"scheduler": 8786}, "scheduler must be an address such as 'tcp://host:8786'; got 8786 of type int$"),
    ],
)
def test_connect_arguments_of_a_bad_type_raise_type_error_before_starting_anything(kwargs, match):
    pytest.importorskip("distributed")
    from mcal.dask import connect

    with pytest.raises(TypeError, match=match), connect(**kwargs):
        pass


def _closed_port():
    """A local TCP port that nothing listens on."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connect_to_an_unreachable_or_workerless_scheduler_fails_within_its_timeout():
    distributed = pytest.importorskip("distributed")
    from mcal.dask import connect

    address = f"tcp://127.0.0.1:{_closed_port()}"
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=f"cannot reach the Dask scheduler at '{address}' within timeout=1 s"):
        with connect(address, timeout=1):
            pass
    assert time.monotonic() - start < 10  # distributed's own default waits 30 s
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        with pytest.raises(TimeoutError, match="has no worker .waited timeout=0.5 s"):
            with connect(empty.scheduler_address, timeout=0.5):
                pass
    with pytest.raises(ValueError, match="scheduler must be an address such as 'tcp://host:8786'; got 'no-port'"):
        with connect("no-port"):
            pass
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds; got 0"):
        with connect(address, timeout=0):
            pass


def test_cli_checks_the_data_path_before_reaching_the_scheduler(tmp_path, capsys):
    pytest.importorskip("distributed")
    from mcal.cli import main

    start = time.monotonic()
    status = main(["evaluate", str(tmp_path / "none-*.parquet"), "--score-col", "p", "--label-col", "y",
                   "--scheduler", f"tcp://127.0.0.1:{_closed_port()}"])  # fmt: skip
    assert status == 2 and "no file matches" in capsys.readouterr().err
    assert time.monotonic() - start < 5


def test_parquet_files_with_different_columns_are_rejected_naming_the_file(tmp_path, capsys):
    pytest.importorskip("dask")
    from mcal.cli import main
    from mcal.dask import read_parquet

    folder = tmp_path / "parts"
    folder.mkdir()
    pd.DataFrame({"p": [0.2, 0.8], "y": [0, 1], "x": [1.0, 2.0]}).to_parquet(folder / "a.parquet", index=False)
    pd.DataFrame({"p": [0.2, 0.8], "y": [0, 1], "z": [1.0, 2.0]}).to_parquet(folder / "b.parquet", index=False)
    (folder / "_SUCCESS").write_text("")  # as Spark writes: not a data file, skipped as dask skips it
    match = r"Parquet files must all have the same columns; .*b\.parquet has \['p', 'y', 'z'\]"
    with pytest.raises(ValueError, match=match):
        read_parquet(folder)
    with pytest.raises(ValueError, match=match):
        read_parquet(str(folder / "*.parquet"))
    (folder / "c.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match=r"cannot read .*c\.parquet as Parquet"):
        read_parquet(str(folder / "c.parquet"))
    status = main(["fit", str(folder), "--score-col", "p", "--label-col", "y", "--method", "mcgrad",
                   "--features", "x", "--dask-workers", "1", "-o", str(tmp_path / "m.json")])  # fmt: skip
    assert status == 2 and "must all have the same columns" in capsys.readouterr().err


def test_cli_fit_reports_a_lost_worker_and_a_step_timeout_as_errors(client, tmp_path, capsys, monkeypatch):
    from mcal.cli import main
    from mcal.dask import DaskMCGrad, WorkerLostError

    path = tmp_path / "d.parquet"
    table(400, seed=3).assign(level=lambda d: d["level"].astype(str)).to_parquet(path, index=False)
    args = ["fit", str(path), "--score-col", "p", "--label-col", "y", "--method", "mcgrad", "--features", "level,x",
            "--scheduler", client.scheduler.address, "-o", str(tmp_path / "m.json")]  # fmt: skip
    assert main([*args, "--dask-timeout", "0.001"]) == 2
    assert "did not finish within timeout=0.001 s" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([*args, "--dask-timeout", "0"])
    assert exc.value.code == 2
    assert "argument --dask-timeout: must be a positive finite number of seconds; got 0.0" in capsys.readouterr().err
    assert main([*args[:-4], "-o", str(tmp_path / "m.json"), "--dask-timeout", "5"]) == 2  # without a cluster
    assert "--dask-timeout needs --scheduler or --dask-workers" in capsys.readouterr().err

    def lose_a_worker(self, *a, **k):
        raise WorkerLostError("Dask worker(s) ['tcp://w'] left the cluster during LightGBM's distributed fit number 1")

    monkeypatch.setattr(DaskMCGrad, "fit", lose_a_worker)
    assert main(args) == 2  # an error message and status 2, not a traceback
    assert "mcal: error: Dask worker(s) ['tcp://w'] left the cluster" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("timeout", "minutes"), [(59.0, 1), (35_791 * 60.0, 35_791), (35_791 * 60.0 + 1, 35_791), (1e300, 35_791)]
)
def test_lightgbm_socket_time_out_stays_within_what_lightgbm_can_hold(timeout, minutes):
    from mcal.dask._engine import DaskEngine

    # LightGBM sets its sockets' time-out to time_out * 60000 ms in a C int: 35,792 minutes and more overflowed
    # it, and the fit failed with a socket error or aborted the whole process (timeout=1e300 gave 2**31 - 1)
    assert DaskEngine(None, {}, 1, [], timeout).params["time_out"] == minutes


def test_cli_rejects_an_infinite_dask_timeout_before_reaching_the_scheduler(tmp_path, capsys):
    from mcal.cli import main

    path = tmp_path / "d.parquet"
    table(50, seed=3).to_parquet(path, index=False)
    args = ["fit", str(path), "--score-col", "p", "--label-col", "y", "--method", "mcgrad", "--features", "x",
            "--scheduler", "tcp://127.0.0.1:1", "-o", str(tmp_path / "m.json"), "--dask-timeout", "inf"]  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    assert "argument --dask-timeout: must be a positive finite number of seconds; got inf" in capsys.readouterr().err


def test_lazy_predict_names_the_partition_of_a_bad_score(client):
    import dask.array as da

    model = mcal.IsotonicCalibration().fit([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1])
    p = np.full(10, 0.5)
    p[7] = 1.5
    out = mcal.dask.predict(model, da.from_array(p, chunks=5))
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\].*index 2 .*in partition 1"):
        out.compute()


def test_a_local_cluster_keeps_quiet_and_off_the_default_dashboard_port():
    """Its HTTP server takes a free port (8787 may belong to another cluster, which printed a warning), and the
    scheduler's routine warnings (one per distributed sort or shuffle) are not printed."""
    pytest.importorskip("distributed")
    import io
    import logging

    from mcal.dask import connect

    # outside pytest, distributed prints its logs through a stream handler of its logger (its logging config)
    handler = logging.StreamHandler(io.StringIO())
    logging.getLogger("distributed").addHandler(handler)
    try:
        with connect(n_workers=1) as c:
            assert c.scheduler_info()["services"].get("dashboard") != 8787
            assert handler.level == logging.ERROR
            assert c.submit(sum, [1, 2]).result() == 3
    finally:
        logging.getLogger("distributed").removeHandler(handler)
    assert handler.level == logging.NOTSET  # restored


def _lacking(frame, column):
    """A hand-built dask DataFrame whose metadata lists ``column`` but whose two partitions lack it."""
    import dask
    import dask.dataframe as dd

    halves = [frame.iloc[:100].drop(columns=column), frame.iloc[100:].drop(columns=column)]
    return dd.from_delayed([dask.delayed(h) for h in halves], meta=frame.iloc[:0], verify_meta=False)


def test_dask_mcgrad_rejects_x_partitions_without_a_column_of_its_metadata(client):
    from mcal.dask import DaskMCGrad

    data = table(200, 3)
    X = _lacking(data[["level", "x"]], "x")  # before, fitted silently on the column level alone
    ddf = _lacking(data, "x")
    with pytest.raises(
        ValueError,
        match=r"X must hold in every partition the columns of its metadata \['level', 'x'\]; "
        r"partition [01] has \['level'\] \(missing \['x'\], unexpected \[\]\)",
    ):
        DaskMCGrad(client=client, early_stopping=None, **FAST).fit(ddf["p"], ddf["y"], X=X)


def test_dask_mcgrad_names_a_column_selected_from_partitions_that_lack_it(client):
    from mcal.dask import DaskMCGrad

    ddf = _lacking(table(200, 3), "p")  # before, pandas' bare KeyError: 'p'
    with pytest.raises(
        ValueError,
        match=r"every partition of a dask input must hold the columns its metadata lists; "
        r"got pandas' KeyError 'p' on a worker",
    ):
        DaskMCGrad(client=client, early_stopping=None, **FAST).fit(ddf["p"], ddf["y"], X=ddf[["level", "x"]])


def test_cli_fits_mcgrad_on_the_score_alone_on_a_cluster(client, tmp_path, capsys):
    from mcal.cli import main

    data = table(2000, 4)
    data.to_parquet(tmp_path / "train.parquet", index=False)
    model_path = tmp_path / "model.json"
    status = main(["fit", str(tmp_path / "train.parquet"), "--score-col", "p", "--label-col", "y", "--method", "mcgrad",
                   "--param", "max_rounds=1", "--param", "n_estimators=10", "--param", "early_stopping=null",
                   "--random-state", "0", "--scheduler", client.scheduler.address, "-o", str(model_path)])  # fmt: skip
    assert status == 0, capsys.readouterr().err  # it asked for --features
    model = mcal.load(model_path)
    assert model.encoder_.n_features_in_ == 0 and model.n_rounds_ == 1
    assert log_loss(data["y"], model.predict(data["p"])) < log_loss(data["y"], data["p"])


def test_lazy_predict_names_the_fitted_columns_missing_from_the_metadata_before_computing():
    # before, the graph was built and the error came only from .compute(), from inside a partition
    import dask.dataframe as dd

    data = table(300, 5)
    model = mcal.MCGrad(**{**FAST, "max_rounds": 1}, early_stopping=None).fit(
        data["p"], data["y"], X=data[["level", "x"]]
    )
    ddf = dd.from_pandas(data, npartitions=2)
    message = r"X must hold the columns MCGrad was fitted on \['level', 'x'\]; got a dask DataFrame with the columns "
    with pytest.raises(ValueError, match=message + r"\['level', 'p'\], missing \['x'\]"):
        mcal.dask.predict(model, ddf["p"], X=ddf[["level", "p"]])
    with pytest.raises(
        ValueError,
        match=r"X must hold the columns MCGrad was fitted on \['level', 'x'\]; got None, "
        r"missing \['level', 'x'\]",
    ):
        mcal.dask.predict(model, ddf["p"])
    with pytest.raises(ValueError, match=r"got a dask Series with the columns \['x'\], missing \['level'\]"):
        mcal.dask.predict(model, ddf["p"], X=ddf["x"])


def test_lazy_predict_of_a_field_model_checks_its_field_column_by_metadata():
    import dask.dataframe as dd

    data = table(300, 6).assign(f=lambda d: d["level"].astype(str))
    model = mcal.PerFieldCalibrator(field="f", min_samples_per_field=10).fit(data["p"], data["y"], X=data[["f"]])
    ddf = dd.from_pandas(data, npartitions=2)
    with pytest.raises(
        ValueError,
        match=r"fitted on \['f'\]; got a dask DataFrame with the columns \['x'\], "
        r"missing \['f'\]",
    ):
        mcal.dask.predict(model, ddf["p"], X=ddf[["x"]])
    out = mcal.dask.predict(model, ddf["p"], X=ddf[["x", "f"]]).compute(scheduler="synchronous")  # extra columns pass
    np.testing.assert_array_equal(out.to_numpy(), model.predict(data["p"], X=data[["f"]]))


def test_lazy_predict_refuses_columns_mcgrad_refuses_before_computing_with_its_message():
    # before, an extra column (or another order) failed only at .compute(), from inside a partition
    import dask.dataframe as dd

    data = table(300, 5)
    model = mcal.MCGrad(**{**FAST, "max_rounds": 1}, early_stopping=None).fit(
        data["p"], data["y"], X=data[["level", "x"]]
    )
    ddf = dd.from_pandas(data, npartitions=2)
    for columns, detail in ((["level", "x", "p"], "unexpected ['p']"), (["x", "level"], "in another order")):
        with pytest.raises(ValueError) as local:
            model.predict(data["p"], X=data[columns])
        with pytest.raises(ValueError) as lazy:
            mcal.dask.predict(model, ddf["p"], X=ddf[columns])  # no .compute()
        assert detail in str(lazy.value) and str(lazy.value) == str(local.value)


def test_lazy_predict_of_hkrr_on_group_columns_refuses_extra_columns_before_computing():
    import dask.dataframe as dd

    data = table(300, 7).assign(a=lambda d: d["level"] == "a", b=lambda d: d["x"] > 0)
    model = mcal.HKRR(lam=0.1).fit(data["p"], data["y"], X=data[["a", "b"]])
    ddf = dd.from_pandas(data, npartitions=2)
    with pytest.raises(
        ValueError,
        match=r"group columns seen at fit, in the same order \['a', 'b'\]; "
        r"got columns \['a', 'b', 'x'\]",
    ):
        mcal.dask.predict(model, ddf["p"], X=ddf[["a", "b", "x"]])
    out = mcal.dask.predict(model, ddf["p"], X=ddf[["a", "b"]]).compute(scheduler="synchronous")
    np.testing.assert_array_equal(out.to_numpy(), model.predict(data["p"], X=data[["a", "b"]]))


def test_distributed_mce_reads_categorical_features_as_the_local_mce(client, scored):
    import dask.dataframe as dd

    from mcal.dask import metrics as dmetrics

    y, p, w, _ = scored
    code = np.random.default_rng(3).choice([1, 2, 3, 4, 5], y.size, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    X = pd.DataFrame({"code": code})
    ddf = dd.from_pandas(X.assign(y=y, p=p, w=w), npartitions=4)
    local = mcal.metrics.mce(y, p, X=X, categorical_features=["code"], sample_weight=w)
    got = dmetrics.mce(ddf["y"], ddf["p"], X=ddf[["code"]], categorical_features=["code"], sample_weight=ddf["w"])
    assert got.table["description"].tolist() == local.table["description"].tolist()
    assert "code=1" in local.table["description"].tolist()  # a segment per frequent code, not ranges of codes
    assert abs(got.mce_sigma - local.mce_sigma) < 1e-9
    with pytest.raises(ValueError, match="pass either segments or categorical_features, not both"):
        dmetrics.mce(ddf["y"], ddf["p"], X=ddf[["code"]], segments=mcal.segments.generate_segments(X),
                     categorical_features=["code"])  # fmt: skip


# -- monitoring ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stream():
    """6 days of scores with weights and a segment column; the labels drift from day 3."""
    rng = np.random.default_rng(7)
    n = 3000
    p = rng.uniform(0.05, 0.6, n)
    t = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.uniform(0, 6, n), unit="D")  # unsorted: days span partitions
    y = (rng.random(n) < expit(logit(p) + np.where(t >= pd.Timestamp("2024-01-04"), 0.6, 0.0))).astype(float)
    return pd.DataFrame({"y": y, "p": p, "t": t, "w": rng.integers(1, 3, n).astype(float), "a": rng.integers(0, 3, n)})


def test_dask_monitor_equals_local_monitor(client, stream):
    import dask.dataframe as dd

    from mcal.dask import monitor as dask_monitor
    from mcal.monitor import monitor

    local = monitor(stream["y"], stream["p"], stream["t"], X=stream[["a"]], sample_weight=stream["w"])
    ddf = dd.from_pandas(stream, npartitions=4)
    remote = dask_monitor(ddf["y"], ddf["p"], ddf["t"], X=ddf[["a"]], sample_weight=ddf["w"])
    assert remote.alarm_window == local.alarm_window is not None
    pd.testing.assert_frame_equal(remote.table, local.table, rtol=1e-9)


def test_dask_monitor_names_the_partition_of_a_bad_score(client, stream):
    import dask.dataframe as dd

    from mcal.dask import monitor as dask_monitor

    ddf = dd.from_pandas(stream.assign(p=np.where(np.arange(len(stream)) == 2000, 1.5, stream["p"])), npartitions=2)
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\].*in partition 1"):
        dask_monitor(ddf["y"], ddf["p"], ddf["t"])


def test_cli_monitor_with_a_scheduler_equals_the_local_command(client, stream, tmp_path, capsys):
    from mcal.cli import main

    folder = tmp_path / "scores"
    folder.mkdir()
    for k in range(3):
        stream.iloc[k * 1000 : (k + 1) * 1000].to_parquet(folder / f"part-{k}.parquet", index=False)
    args = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--weight-col", "w",
            "--segments", "a", "--fail-if", "mce_sigma > 4"]  # fmt: skip
    local_status = main(args)
    local = capsys.readouterr()
    assert main([*args, "--scheduler", client.scheduler.address]) == local_status == 1
    remote = capsys.readouterr()
    gates = [[line for line in err.splitlines() if "fail-if" in line] for err in (local.err, remote.err)]
    assert remote.out == local.out and gates[0] == gates[1] and "drift alarm: fired" in local.out
    assert len(gates[0]) >= 2  # pandas deprecation warnings raised inside dask's Parquet reader may come beside them
