import json

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

# Floating-point results of torch, BLAS, LightGBM and numpy's reductions are compared across machines and routes
# within across_machines.RTOL (1e-12 relative) with across_machines.assert_close_across_machines, never bit for
# bit: their kernels follow the CPU and the thread count. Bit-for-bit checks are kept where the work is exact by
# construction or the same arithmetic on the same bits in one process; tests/across_machines.py states the rule.


@pytest.fixture
def one_torch_thread():
    """Run the test with one torch intra-op thread (the MCNet tests; reproducible sums, no contention)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def client():
    """A Dask cluster for the tests of mcal.dask: 2 workers x 1 thread, in-process, no dashboard."""
    pytest.importorskip("lightgbm")
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def overconfident_k_classes():
    """A function ``(rng, n, temperature, bias) -> (p, y, segment)``: k = len(bias) classes whose probabilities
    ``p = softmax(z)`` are over-confident (the truth is ``softmax(z / temperature)``), with ``bias`` added to the
    true logits in the segment "north" (the other rows are "south")."""
    from scipy.special import softmax

    def draw(rng, n, temperature, bias):
        z = rng.normal(size=(n, len(bias))) * 2.0
        segment = rng.choice(["north", "south"], n)
        truth = softmax(z / temperature + (segment == "north")[:, None] * np.asarray(bias, dtype=float), axis=1)
        y = (rng.uniform(size=n)[:, None] > truth.cumsum(axis=1)).sum(axis=1)
        return softmax(z, axis=1), y, segment

    return draw


@pytest.fixture
def miscalibrated(rng):
    """20k over-confident scores: the true probability is expit(0.5 * logit(p) + 0.3)."""
    from scipy.special import expit, logit

    p = rng.uniform(0.001, 0.999, 20_000)
    y = (rng.uniform(size=p.size) < expit(0.5 * logit(p) + 0.3)).astype(float)
    return p, y


@pytest.fixture
def rewrite_model():
    """``rewrite_model(path, edit, digest=True)``: apply ``edit(doc)`` to the parsed model file ``path`` (without its
    digest), write it back with the digest of the edited content, as mcal.save computes it, and return ``doc``.

    Tests of the checks that ``mcal.load`` makes after the digest (structure, state, parameters) edit files with
    it: an edit without a new digest stops at the digest check. ``digest=False`` writes the file without one,
    as a schema-version-1 file is (with ``doc["schema_version"] = 1`` in ``edit``).
    """
    from mcal._persistence.files import DIGEST_KEY, content_digest

    def rewrite(path, edit, *, digest=True):
        doc = json.loads(path.read_text())
        doc.pop(DIGEST_KEY)
        edit(doc)
        if digest:
            doc[DIGEST_KEY] = content_digest(doc)
        path.write_text(json.dumps(doc))
        return doc

    return rewrite


@pytest.fixture
def disk_full_on_model_files(monkeypatch):
    """Make writing a ``.json`` model file fail with "No space left on device", while the weights file beside it
    (written first) is written: the case where a save must remove the weights it already wrote."""
    import mcal._persistence.files as persistence

    write = persistence.atomic_write_bytes

    def fail_on_the_model_file(path, data):
        if str(path).endswith(".json"):
            raise OSError("No space left on device")
        write(path, data)

    monkeypatch.setattr(persistence, "atomic_write_bytes", fail_on_the_model_file)


# tests/data holds fixtures and the script that generated them (it needs the reference package mcgrad,
# which is not a dependency): never collect it, not even for doctests.
collect_ignore_glob = ["data/*"]


def _small_data():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.02, 0.98, 1200)
    field = np.array(["a", "b", "c"])[rng.integers(0, 3, p.size)]
    y = (rng.uniform(size=p.size) < np.clip(p + np.where(field == "a", 0.1, -0.1), 0, 1)).astype(float)
    return p, y, field


@pytest.fixture(scope="session")
def small_data():
    """Scores, labels and a three-level field of 1,200 rows, read-only (shared by the session)."""
    arrays = _small_data()
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _fit_registered(name, data=None, sample_weight=None):
    """A small fitted model of the registered method ``name`` on ``data`` (``small_data`` when None), with the
    input its predict needs: ``(model, y_prob, X)``."""
    from mcal._registry import get_method

    p, y, field = _small_data() if data is None else data
    frame, group = pd.DataFrame({"f": field}), (field == "a")[:, None]
    if name in ("mcgrad", "dfmc"):
        pytest.importorskip("lightgbm")
    if name in ("mcnet", "neucalib", "adacalib"):
        pytest.importorskip("torch").set_num_threads(1)
    setup = {
        "mcgrad": ({"n_jobs": 1, "early_stopping": None, "max_rounds": 2}, frame.astype("category")),
        # seeded: unseeded, about 1 early-stopping split in 60 chose a round, so two fits of one test could differ
        "regression-mcgrad": ({"n_jobs": 1, "random_state": 0}, None),
        "mcnet": (
            {
                "field": "f",
                "n_bins": 5,
                "hidden_sizes": (8,),
                "embedding_dim": 2,
                "n_nodes": 10,
                "max_epochs": 1,
                "random_state": 0,
            },
            frame,
        ),
        "neucalib": ({"field": "f", "max_iter": 10, "random_state": 0}, frame),
        "adacalib": ({"field": "f", "max_iter": 10, "random_state": 0}, frame),
        "per-field-isotonic": ({"field": "f"}, frame),
        "hkrr": ({"random_state": 0}, group),
        "dfmc": ({"n_estimators": 3, "n_jobs": 1, "random_state": 0}, group),
    }
    params, X = setup.get(name, ({}, None))
    model = get_method(name)(**params).fit(p, y, X=X, sample_weight=sample_weight)
    return model, p, X


@pytest.fixture(scope="session")
def fit_registered():
    """``fit_registered(name, data=None, sample_weight=None) -> (model, y_prob, X)``: a small fitted model of a
    registered method (``mcal._registry.METHODS``) and the input its predict needs."""
    return _fit_registered
