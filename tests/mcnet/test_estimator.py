"""MCNet (Dai et al. 2025): monotonicity, regularizers, inference modes, reproducibility, model files, errors."""

import pickle
import re
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

import mcal
from mcal import CalibrationWarning, HistogramBinning, IsotonicCalibration, MCNet
from mcal._registry import get_method
from mcal.metrics import pcoc

torch = pytest.importorskip("torch")

#: Small networks and few nodes: the properties tested do not depend on the size.
SMALL = dict(n_bins=5, hidden_sizes=(16, 16), embedding_dim=4, n_nodes=20, batch_size=256, max_epochs=4, random_state=0)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def click_log(seed, n, n_fields=3):
    """Scores with a known, non-linear, field-dependent, monotone calibration function."""
    rng = np.random.default_rng(seed)
    f = rng.integers(0, n_fields, n)
    s = rng.normal(-1.5, 1.0, n)
    true_logit = np.array([0.6, 1.0, 1.4, 0.8])[f] * s + np.array([-0.5, 0.4, -0.1, 0.7])[f] + 0.4 * np.sin(1.5 * s)
    truth = 1.0 / (1.0 + np.exp(-true_logit))
    return 1.0 / (1.0 + np.exp(-s)), rng.binomial(1, truth), pd.DataFrame({"f": f, "z": rng.normal(size=n)}), truth


@pytest.fixture(scope="module")
def log_data():
    return click_log(0, 3000)


@pytest.fixture(scope="module")
def field_model(log_data):
    p, y, X, _ = log_data
    torch.set_num_threads(1)
    return MCNet(**SMALL, field="f", validation_fraction=0.0).fit(p, y, X=X)


def grid_per_field(model, n_fields=3, n=4001):
    grid = np.linspace(0.0, 1.0, n)
    return grid, [model.predict(grid, X=pd.DataFrame({"f": np.full(n, c)})) for c in range(n_fields)]


# -- the calibration map --------------------------------------------------------------------------------
def test_map_is_increasing_within_every_bin_for_every_field_on_random_scores():
    p, y, X, _ = click_log(1, 2000)
    model = MCNet(**SMALL, field="f", beta=0.0, validation_fraction=0.0).fit(p, y, X=X)
    rng = np.random.default_rng(7)
    for _ in range(5):
        scores = np.sort(rng.uniform(0, 1, 500) ** rng.uniform(0.5, 4))
        bins = np.searchsorted(model.bin_edges_[1:-1], mcal._validation.logit(scores), side="left")
        for c in range(3):
            out = model.predict(scores, X=pd.DataFrame({"f": np.full(scores.size, c)}))
            same_bin = np.diff(bins) == 0
            assert np.all(np.diff(out)[same_bin] >= 0)


@pytest.mark.parametrize(
    "settings",
    [
        {},  # the defaults, on a short budget
        {"beta": 0.0, "learning_rate": 0.05, "n_bins": 40, "hidden_sizes": (4,), "batch_size": 64},  # no order penalty
        {"beta": 100.0, "learning_rate": 0.03, "n_bins": 2, "n_nodes": 2, "embedding_dim": 1},
        {"bin_joins": "raised", "beta": 0.0, "learning_rate": 0.05, "n_bins": 40, "hidden_sizes": (4,)},
        {"bin_joins": "raised", "beta": 100.0, "learning_rate": 0.03, "n_bins": 2, "n_nodes": 2},
    ],
)
@pytest.mark.parametrize(("integral", "inference"), [("grid", "compiled"), ("quadrature", "exact"),
                                                    ("quadrature", "compiled")])  # fmt: skip
@pytest.mark.slow
def test_map_is_monotone_in_the_score_for_every_field_across_bins_too(log_data, settings, integral, inference):
    # within a bin by construction (f1 > 0); at a bin edge the next bin starts where the bin before ends
    # (continuous) or is raised to there (raised), so no training setting can make the map drop, with or without
    # eq. 10's penalty
    p, y, X, _ = log_data
    for field in ("f", None):
        model = MCNet(
            field=field, max_steps=150, validation_fraction=0.0, random_state=0, inference=inference,
            integral=integral, **settings
        ).fit(p, y, X=X)  # fmt: skip
        _, curves = grid_per_field(model, n=20001)
        assert min(np.diff(c).min() for c in curves) >= 0.0


def test_order_penalty_is_zero_on_an_already_monotone_network():
    # the warm start is one line per field, continuous across bins; raising later bins keeps the order too
    from mcal.mcnet._network import ordered_tables
    from mcal.mcnet._training import order_penalty

    targets = np.array([[-1.0, 0.5, -3.0], [0.0, 1.5, -2.0]])  # f^1(b_1, c) = f2^1(c) + 0.5 * 2 = f2^2(c)
    P, geometry = hand_network(0.5, targets)
    with torch.no_grad():
        _offset, bias, raw, gaps = ordered_tables(torch, P, geometry, n_hidden=1, n_nodes=50, bin_joins="raised")
        assert float(order_penalty(torch, raw, gaps)) == pytest.approx(0.0, abs=1e-12)
        np.testing.assert_allclose(bias.numpy(), targets, atol=1e-12)  # nothing to raise
        with torch.no_grad():
            P["f2_out_b"][1] += 0.7  # bin 2 starts higher: a jump up, still in order
        _, bias, raw, gaps = ordered_tables(torch, P, geometry, n_hidden=1, n_nodes=50, bin_joins="raised")
    assert float(order_penalty(torch, raw, gaps)) == 0.0
    np.testing.assert_allclose(bias.numpy(), targets + np.array([[0.0], [0.7]]), atol=1e-12)


def test_output_is_strictly_inside_the_unit_interval(field_model):
    out = field_model.predict(np.array([0.0, 1e-300, 0.5, 1.0 - 1e-16, 1.0]), X=pd.DataFrame({"f": [0, 1, 2, 0, 1]}))
    assert np.all((out > 0) & (out < 1))


@pytest.mark.slow
def test_approximates_the_true_function_better_than_histogram_and_isotonic(log_data):
    p, y, X, _ = log_data
    pt, _, Xt, truth = click_log(11, 4000)
    model = MCNet(**dict(SMALL, field="f", validation_fraction=0.0, max_epochs=8, batch_size=128)).fit(p, y, X=X)
    l2 = {
        "mcnet": np.sqrt(np.mean((model.predict(pt, X=Xt) - truth) ** 2)),
        "isotonic": np.sqrt(np.mean((IsotonicCalibration().fit(p, y).predict(pt) - truth) ** 2)),
        "histogram": np.sqrt(np.mean((HistogramBinning().fit(p, y).predict(pt) - truth) ** 2)),
    }
    assert l2["mcnet"] < 0.9 * min(l2["isotonic"], l2["histogram"]), l2


@pytest.mark.slow
def test_field_balance_regularizer_lowers_the_per_field_pcoc_spread():
    rng = np.random.default_rng(2)
    f = rng.integers(0, 3, 3000)
    s = rng.normal(np.array([-2.0, -1.0, 0.0])[f], 0.7)
    y = rng.binomial(1, 1 / (1 + np.exp(-(s + np.array([0.6, -0.6, 0.6])[f]))))
    p, X = 1 / (1 + np.exp(-s)), pd.DataFrame({"f": f})

    def spread(alpha):
        kw = dict(SMALL, balance_field="f", validation_fraction=0.0, max_epochs=20)
        model = MCNet(**kw, alpha=alpha).fit(p, y, X=X)
        q = model.predict(p)
        return np.std([pcoc(y[f == c], q[f == c]) for c in range(3)])

    assert spread(20.0) < 0.95 * spread(0.0)


def test_auxiliary_network_adds_a_feature_term_and_keeps_the_map_monotone(log_data):
    p, y, X, _ = log_data
    model = MCNet(**SMALL, field="f", auxiliary_features=["z"], validation_fraction=0.0).fit(p, y, X=X)
    grid = np.linspace(0.01, 0.99, 300)
    low = model.predict(grid, X=pd.DataFrame({"f": np.zeros(300, dtype=int), "z": np.full(300, -2.0)}))
    high = model.predict(grid, X=pd.DataFrame({"f": np.zeros(300, dtype=int), "z": np.full(300, 2.0)}))
    assert np.all(np.diff(low) > 0) and np.all(np.diff(high) > 0)
    assert np.abs(low - high).max() > 1e-4


def test_tied_scores_collapse_to_one_bin_and_a_constant_map():
    p = np.full(200, 0.3)
    y = np.r_[np.ones(50), np.zeros(150)]
    model = MCNet(**SMALL).fit(p, y)
    assert model.bin_edges_.size == 2
    out = model.predict(np.full(3, 0.3))
    assert np.ptp(out) == 0 and out[0] == pytest.approx(0.25, abs=0.03)


# -- inference modes ------------------------------------------------------------------------------------
def test_compiled_mode_agrees_with_exact_to_1e4_and_is_monotone(field_model):
    rng = np.random.default_rng(3)
    scores = np.r_[0.0, 1.0, 1e-9, 1 - 1e-9, rng.uniform(0, 1, 3000), rng.uniform(0, 1, 1000) ** 6]
    X = pd.DataFrame({"f": rng.integers(0, 3, scores.size)})
    exact = field_model.predict(scores, X=X)
    compiled = MCNet(**{**field_model.get_params(), "inference": "compiled"})
    compiled.__dict__.update({k: v for k, v in field_model.__dict__.items() if k.endswith("_")})
    assert np.abs(compiled.predict(scores, X=X) - exact).max() < 1e-4
    _, curves = grid_per_field(compiled, n=20001)
    assert all(np.all(np.diff(c) >= 0) for c in curves)


@pytest.mark.parametrize("n_nodes", [30, 31])  # 31: the last chunk of nodes holds a single node
def test_memory_efficient_backward_integrates_the_same_gradient(n_nodes):
    from mcal.mcnet._network import Architecture, context_tables, initial_weights, integrate_rows, to_parameters

    rng = np.random.default_rng(0)
    arch = Architecture(
        n_bins=4, n_fields=3, hidden_sizes=(8, 8), embedding_dim=3, n_auxiliary=0, auxiliary_hidden_size=4
    )
    weights = initial_weights(arch, rng, slope=1.0)
    weights["f1_out_w"] = rng.normal(size=weights["f1_out_w"].shape).astype(np.float32)  # a non-constant integrand
    P = to_parameters(torch, weights, device="cpu", dtype=torch.float64)
    geometry = {k: torch.arange(4.0, dtype=torch.float64) + d for k, d in (("anchor", 0.0), ("center", 0.5))}
    geometry["half_width"] = torch.full((4,), 0.5, dtype=torch.float64)
    bins, codes = rng.integers(0, 4, 41), rng.integers(0, 4, 41)
    x = torch.as_tensor(bins + rng.uniform(-0.5, 1.5, 41))

    def grads(memory_efficient):
        P.zero_grad()
        offset, bias = context_tables(torch, P, 2)
        out = integrate_rows(
            torch,
            P,
            geometry,
            x,
            bins,
            offset[bins, codes],
            n_hidden=2,
            n_nodes=n_nodes,
            memory_efficient=memory_efficient,
        )
        ((bias[bins, codes] + out) ** 2).sum().backward()
        return out.detach().clone(), {k: v.grad.clone() for k, v in P.items()}

    out_a, g_a = grads(False)
    out_b, g_b = grads(True)
    torch.testing.assert_close(out_a, out_b, rtol=0, atol=1e-13)
    for k in g_a:
        torch.testing.assert_close(g_a[k], g_b[k], rtol=1e-10, atol=1e-12)


def test_batched_integral_over_bin_blocks_matches_a_per_row_quadrature():
    from mcal.mcnet._network import (
        Architecture,
        context_tables,
        initial_weights,
        integrand,
        integrate_rows,
        to_parameters,
    )
    from mcal.mcnet._quadrature import integrate

    rng = np.random.default_rng(1)
    arch = Architecture(
        n_bins=6, n_fields=2, hidden_sizes=(8, 8), embedding_dim=3, n_auxiliary=0, auxiliary_hidden_size=4
    )
    weights = initial_weights(arch, rng, slope=0.7)
    weights["f1_out_w"] = rng.normal(size=weights["f1_out_w"].shape).astype(np.float32)
    P = to_parameters(torch, weights, device="cpu", dtype=torch.float64)
    anchor, center, half = np.arange(6.0), np.arange(6.0) + 0.4, np.full(6, 0.6)
    geometry = {k: torch.as_tensor(v) for k, v in (("anchor", anchor), ("center", center), ("half_width", half))}
    bins = np.r_[np.zeros(40, dtype=int), rng.integers(0, 6, 23)]  # one crowded bin: several blocks
    codes = rng.integers(0, 3, bins.size)
    x = bins + rng.uniform(-0.5, 1.5, bins.size)
    with torch.no_grad():
        offset, _ = context_tables(torch, P, 2)
        got = integrate_rows(
            torch,
            P,
            geometry,
            torch.as_tensor(x),
            bins,
            offset[bins, codes],
            n_hidden=2,
            n_nodes=40,
            memory_efficient=False,
        ).numpy()
        for i in range(bins.size):
            k, c = bins[i], codes[i]

            def f1(t):
                u = torch.as_tensor((t.reshape(1, 1, -1) - center[k]) / half[k])
                return integrand(torch, P, 2, u, offset[k, c][None, None], torch.tensor([k])).numpy().reshape(t.shape)

            assert got[i] == pytest.approx(integrate(f1, anchor[[k]], x[[i]], 40)[0], abs=1e-12)


def test_memory_efficient_fit_runs_and_predicts_close_to_the_default(log_data):
    p, y, X, _ = log_data
    kw = dict(SMALL, field="f", validation_fraction=0.0, max_epochs=1)
    a = MCNet(**kw).fit(p, y, X=X).predict(p, X=X)
    b = MCNet(**kw, memory_efficient=True).fit(p, y, X=X).predict(p, X=X)
    # the same gradients up to float32 rounding, which Adam's normalised first steps can amplify a little
    assert np.abs(a - b).max() < 0.02


# -- fields ---------------------------------------------------------------------------------------------
def test_unseen_fields_use_the_no_context_function_with_one_warning(field_model):
    scores = np.linspace(0.05, 0.95, 7)
    with pytest.warns(CalibrationWarning, match="unseen at fit time") as record:
        out = field_model.predict(np.r_[scores, scores], X=pd.DataFrame({"f": [9] * 7 + ["new"] * 7}))
    assert len([w for w in record if issubclass(w.category, CalibrationWarning)]) == 1
    np.testing.assert_array_equal(out[:7], out[7:])
    seen = field_model.predict(scores, X=pd.DataFrame({"f": np.zeros(7, dtype=int)}))
    assert not np.array_equal(out[:7], seen) and np.all(np.diff(out[:7]) > 0)


def test_dataframe_column_name_and_array_column_index_give_equal_results(log_data):
    p, y, X, _ = log_data
    a = MCNet(**SMALL, field="f").fit(p, y, X=X).predict(p, X=X)
    b = MCNet(**SMALL, field=0).fit(p, y, X=X.to_numpy()).predict(p, X=X.to_numpy())
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad_value", ["", "  "])
def test_empty_field_values_raise_at_fit_and_predict(log_data, field_model, bad_value):
    p, y, X, _ = log_data
    bad = X.assign(f=X["f"].astype(object))
    bad.loc[5, "f"] = bad_value
    with pytest.raises(ValueError, match=r"X\['f'\] must not contain empty values"):
        MCNet(**SMALL, field="f").fit(p, y, X=bad)
    with pytest.raises(ValueError, match=r"X\['f'\] must not contain empty values"):
        field_model.predict(p, X=bad)


def test_missing_field_column_or_X_raises(log_data, field_model):
    p, y, X, _ = log_data
    with pytest.raises(ValueError, match="X must hold the field column 'f'; got None"):
        field_model.predict(p)
    with pytest.raises(ValueError, match="X must have the field column 'g'"):
        MCNet(**SMALL, field="g").fit(p, y, X=X)


# -- reproducibility and model files --------------------------------------------------------------------
def test_results_reproduce_under_random_state(log_data):
    p, y, X, _ = log_data
    runs = [MCNet(**{**SMALL, "random_state": seed}, field="f").fit(p, y, X=X).predict(p, X=X) for seed in (5, 5, 6)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_save_load_reproduces_predictions_exactly_in_both_modes(tmp_path, log_data):
    p, y, X, _ = log_data
    model = MCNet(**SMALL, field="f", auxiliary_features=["z"]).fit(p, y, X=X)
    path = mcal.save(model, tmp_path / "m.json")
    assert any(tmp_path.glob("m.*.safetensors"))
    loaded = mcal.load(path)
    for mode in ("exact", "compiled"):
        model.set_params(inference=mode)
        loaded.set_params(inference=mode)
        np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))
    assert loaded.field_values_ == ["0", "1", "2"]


def test_a_file_written_before_bin_joins_existed_loads_with_raised_bins(tmp_path, log_data, rewrite_model):
    # step-trained MCNet files of the round before bin_joins raised their bins; read as "continuous" (today's
    # default) their compiled tables would not match the network, and the load would fail. Those files (and the
    # next round's) were trained by quadrature, before integral existed
    p, y, X, _ = log_data
    model = MCNet(**SMALL, field="f", bin_joins="raised", learning_rate=0.05, max_steps=60, integral="quadrature",
                  inference="exact").fit(p, y, X=X)  # fmt: skip
    path = mcal.save(model, tmp_path / "m.json")
    rewrite_model(path, lambda doc: [doc["model"]["params"].pop(k) for k in ("bin_joins", "integral")])
    loaded = mcal.load(path)
    assert (loaded.bin_joins, loaded.integral) == ("raised", "quadrature")
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))
    continuous = model.set_params(bin_joins="continuous")
    assert not np.array_equal(continuous.predict(p, X=X), loaded.predict(p, X=X))  # the default reads it otherwise


def test_a_file_written_before_smoothness_existed_loads_as_trained_without_it(tmp_path, log_data, rewrite_model):
    p, y, X, _ = log_data
    model = MCNet(**{**SMALL, "batch_size": None}, field="f", max_steps=20).fit(p, y, X=X)
    assert model.smoothness > 0  # the default
    path = mcal.save(model, tmp_path / "m.json")
    rewrite_model(path, lambda doc: doc["model"]["params"].pop("smoothness"))
    loaded = mcal.load(path)
    assert loaded.smoothness == 0.0  # such files were trained with eq. 13 alone
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))


@pytest.mark.slow
def test_a_model_file_keeps_the_chosen_bin_count_and_its_held_out_losses(tmp_path, log_data, rewrite_model):
    p, y, X, _ = log_data
    model = MCNet(field="f", n_bins="auto", max_steps=40, random_state=0).fit(p, y, X=X)
    path = mcal.save(model, tmp_path / "m.json")
    loaded = mcal.load(path)
    assert loaded.n_bins_ == model.n_bins_ == model.bin_edges_.size - 1
    assert loaded.bin_count_losses_ == model.bin_count_losses_ and list(loaded.bin_count_losses_) == ["1", "2", "4"]
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))
    other = 1 if model.n_bins_ != 1 else 2
    rewrite_model(path, lambda doc: doc["model"]["state"].update(n_bins_=other))
    with pytest.raises(ValueError, match=r"state\.n_bins_ must be the number of bins of state\.bin_edges_"):
        mcal.load(path)
    rewrite_model(path, lambda doc: doc["model"]["state"].update(n_bins_=model.n_bins_, bin_count_losses_={}))
    with pytest.raises(ValueError, match=r"state\.bin_count_losses_ must map each bin count \[1, 2, 4\]"):
        mcal.load(path)


def test_a_file_written_before_n_bins_auto_existed_loads_with_the_bins_of_its_edges(tmp_path, log_data, rewrite_model):
    p, y, X, _ = log_data
    model = MCNet(**SMALL, field="f").fit(p, y, X=X)
    path = mcal.save(model, tmp_path / "m.json")
    rewrite_model(path, lambda doc: [doc["model"]["state"].pop(k) for k in ("n_bins_", "bin_count_losses_")])
    loaded = mcal.load(path)
    assert (loaded.n_bins_, loaded.bin_count_losses_) == (model.bin_edges_.size - 1, {})
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))


def test_pickle_round_trip_holds_arrays_only(field_model, log_data):
    p, _, X, _ = log_data
    state = field_model.__getstate__()
    assert all(isinstance(v, np.ndarray) for v in state["module_"].values())
    clone = pickle.loads(pickle.dumps(field_model))
    np.testing.assert_array_equal(clone.predict(p, X=X), field_model.predict(p, X=X))


def test_load_rejects_tampered_weights(tmp_path, field_model, rewrite_model):
    st = pytest.importorskip("safetensors.numpy")
    import hashlib

    path = mcal.save(field_model, tmp_path / "m.json")
    (weights,) = tmp_path.glob("m.*.safetensors")
    tensors = st.load(weights.read_bytes())

    def rewrite(new):
        data = st.save(new)
        weights.write_bytes(data)
        rewrite_model(path, lambda doc: doc["weights"].update(sha256=hashlib.sha256(data).hexdigest()))

    rewrite({k: v for k, v in tensors.items() if k != "net.f1_out_b"})
    with pytest.raises(ValueError, match=r"missing \['net.f1_out_b'\]"):
        mcal.load(path)
    rewrite({**tensors, "net.f1_out_b": tensors["net.f1_out_b"][:-1]})
    with pytest.raises(ValueError, match="'net.f1_out_b' must have shape"):
        mcal.load(path)
    rewrite({**tensors, "compiled.values": tensors["compiled.values"][..., ::-1].copy()})
    with pytest.raises(ValueError, match="'compiled.values' must be the tables of this model's network"):
        mcal.load(path)


def test_load_rejects_malformed_bin_edges(tmp_path, field_model, rewrite_model):
    path = mcal.save(field_model, tmp_path / "m.json")
    rewrite_model(path, lambda doc: doc["model"]["state"]["bin_edges_"]["__ndarray__"].__setitem__(2, 50.0))
    with pytest.raises(ValueError, match="bin_edges_ must be a strictly increasing"):
        mcal.load(path)


def test_a_weights_file_from_another_model_of_the_same_shape_is_rejected(tmp_path, log_data, rewrite_model):
    import hashlib
    import json

    st = pytest.importorskip("safetensors.numpy")
    p, y, X, _ = log_data
    first, second = (
        MCNet(**{**SMALL, "max_epochs": 1, "random_state": seed}, field="f").fit(p, y, X=X) for seed in (1, 2)
    )
    path = mcal.save(first, tmp_path / "a.json")
    mcal.save(second, tmp_path / "b.json")
    (weights,), (other_weights,) = tmp_path.glob("a.*.safetensors"), tmp_path.glob("b.*.safetensors")
    other = other_weights.read_bytes()
    shapes = [{k: v.shape for k, v in st.load(data).items()} for data in (other, weights.read_bytes())]
    assert shapes[0] == shapes[1]
    weights.write_bytes(other)
    with pytest.raises(ValueError, match=r"a\.\w+\.safetensors does not match the checksum recorded in .*a.json"):
        mcal.load(path)
    # with the recorded checksum edited to match the swapped file, the JSON no longer matches its digest
    doc = json.loads(path.read_text())
    doc["weights"]["sha256"] = hashlib.sha256(other).hexdigest()
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"a.json: the content does not match its SHA-256 digest"):
        mcal.load(path)
    # nothing else tells the files apart: given a new digest, the pair loads and predicts as the second model
    rewrite_model(path, lambda doc: None)
    np.testing.assert_array_equal(mcal.load(path).predict(p, X=X), second.predict(p, X=X))


# -- interface ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_registered_exported_and_importing_mcal_loads_no_torch():
    assert get_method("mcnet") is MCNet and "MCNet" in mcal.__all__
    code = "import sys, mcal, mcal.mcnet; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_predict_before_fit_raises():
    with pytest.raises(NotFittedError):
        MCNet().predict(np.array([0.5]))


def test_float32_scores_give_float32_output(field_model):
    out = field_model.predict(np.array([0.2, 0.7], dtype=np.float32), X=pd.DataFrame({"f": [0, 1]}))
    assert out.dtype == np.float32


def test_fit_uses_n_threads_and_restores_torch_threads(log_data, monkeypatch):
    p, y, _, _ = log_data
    seen = []
    monkeypatch.setattr(
        "mcal.mcnet._fitting.train",
        lambda torch_, *a, **k: (
            seen.append(torch.get_num_threads())
            or {
                "n_epochs": 0,
                "best_epoch": 0,
                "n_steps": 0,
                "best_step": 0,
                "loss_curve": [],
                "validation_loss_curve": [],
            }
        ),
    )
    MCNet(**SMALL, n_threads=2).fit(p, y)
    assert seen == [2] and torch.get_num_threads() == 1


def test_without_a_held_out_part_every_step_of_the_budget_is_run(log_data):
    p, y, X, _ = log_data
    model = MCNet(**{**SMALL, "max_epochs": 2}, validation_fraction=0.0).fit(p, y, X=X)
    steps = 2 * -(-p.size // SMALL["batch_size"])  # two passes of 256-row batches over 3,000 rows: 24 steps
    assert (model.n_epochs_, model.best_epoch_, model.validation_loss_curve_.size) == (2, 2, 0)
    assert (model.n_steps_, model.best_step_) == (steps, steps)
    assert model.loss_curve_.shape == (1,)  # one reading per 25 steps, and one at the end of the budget
    capped = MCNet(**{**SMALL, "max_epochs": 2}, max_steps=5, validation_fraction=0.0).fit(p, y, X=X)
    assert (capped.n_steps_, capped.n_epochs_) == (5, 1)


@pytest.mark.parametrize(
    ("params", "name", "rule"),
    [
        ({"n_bins": 0}, "n_bins", "a positive integer or 'auto'"),
        ({"n_bins": "ten"}, "n_bins", "a positive integer or 'auto'"),
        ({"n_nodes": 1}, "n_nodes", "an integer >= 2"),
        ({"hidden_sizes": ()}, "hidden_sizes", "a non-empty sequence"),
        ({"hidden_sizes": (8, 0)}, "hidden_sizes[1]", "a positive integer"),
        ({"embedding_dim": 0}, "embedding_dim", "a positive integer"),
        ({"max_epochs": 0}, "max_epochs", "a positive integer"),
        ({"patience": -1}, "patience", "a positive integer"),
        ({"n_processes": 0}, "n_processes", "a positive integer"),
        ({"beta": -1.0}, "beta", "a finite number"),
        ({"alpha": np.nan, "field": "f"}, "alpha", "a finite number"),
        ({"smoothness": -1e-3}, "smoothness", "a finite number"),
        ({"learning_rate": 0.0}, "learning_rate", "a finite number in (0"),
        ({"validation_fraction": 1.0}, "validation_fraction", "a finite number in [0"),
        ({"field": ""}, "field", "a column name"),
        ({"auxiliary_features": []}, "auxiliary_features", "None or a non-empty sequence"),
        ({"auxiliary_features": ["z", " "]}, "auxiliary_features[1]", "a column name"),
        ({"random_state": -1}, "random_state", "None or a non-negative integer"),
        ({"n_threads": 0}, "n_threads", "a positive integer"),
        ({"inference": "fast"}, "inference", "'exact' or 'compiled'"),
        ({"bin_joins": "free"}, "bin_joins", "'continuous' or 'raised'"),
        ({"device": "gpu0"}, "device", "'cpu', 'cuda' or 'cuda:N'"),
        ({"device": "cuda:-1"}, "device", "'cpu', 'cuda' or 'cuda:N'"),
    ],
)
def test_a_parameter_of_the_right_type_out_of_its_range_raises_value_error_naming_it(log_data, params, name, rule):
    p, y, X, _ = log_data
    with pytest.raises(ValueError, match=f"^{re.escape(name)} must be {re.escape(rule)}"):
        MCNet(**params).fit(p, y, X=X)


def test_contradicting_parameters_raise_value_error_naming_them(log_data):
    p, y, X, _ = log_data
    with pytest.raises(ValueError, match="^alpha > 0 needs a field to balance"):
        MCNet(alpha=0.5).fit(p, y, X=X)
    with pytest.raises(ValueError, match="^n_processes > 1 trains on the CPU .* device='cuda'"):
        MCNet(n_processes=2, device="cuda").fit(p, y, X=X)


#: One row per kind of parameter: a value of the wrong type raises TypeError naming the parameter. Bools are not
#: integers (nor numbers) here, as everywhere in mcal (``_validation.check_positive_int``), and 0/1 are not bools.
WRONG_TYPES = {
    "integer": [
        ("n_bins", 2.5),
        ("max_epochs", 2.5),
        ("patience", True),
        ("batch_size", np.float64(64)),
        ("n_threads", 1.0),
        ("n_processes", None),
    ],
    "real": [
        ("learning_rate", [0.1]),
        ("beta", "1"),
        ("alpha", True),
        ("smoothness", "0"),
        ("validation_fraction", None),
    ],
    "integer sequence": [
        ("hidden_sizes", 64),
        ("hidden_sizes", "64"),
        ("hidden_sizes[1]", (8, 2.5)),
        ("hidden_sizes[0]", [False]),
    ],
    "column": [("field", 1.5), ("balance_field", True)],
    "column sequence": [("auxiliary_features", "z"), ("auxiliary_features", 3), ("auxiliary_features[0]", [None])],
    "bool": [("memory_efficient", 1), ("memory_efficient", "yes")],
    "bool or None": [("progress", 1), ("progress", "yes")],
    "seed": [("random_state", 1.5), ("random_state", np.random.default_rng(0))],
    "choice": [("inference", 1), ("device", 3), ("device", None)],
}


@pytest.mark.parametrize("kind", WRONG_TYPES)
def test_a_parameter_of_the_wrong_type_raises_type_error_naming_it(log_data, kind):
    p, y, X, _ = log_data
    for name, value in WRONG_TYPES[kind]:
        param = name.split("[")[0]
        with pytest.raises(TypeError, match=f"^{re.escape(name)} must be ") as info:
            MCNet(**{param: value}).fit(p, y, X=X)
        assert not isinstance(info.value, ValueError)


def test_bad_inputs_raise(log_data):
    p, y, X, _ = log_data
    with pytest.raises(ValueError, match="validation_fraction=0.1 must leave at least one row in each part"):
        MCNet(**SMALL, validation_fraction=0.1).fit(p[:4], np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="auxiliary feature columns must be numeric"):
        MCNet(**SMALL, auxiliary_features=["f"]).fit(p, y, X=X.assign(f=X["f"].astype(str)))
    with pytest.raises(ValueError, match="auxiliary features must be finite"):
        MCNet(**SMALL, auxiliary_features=["z"]).fit(p, y, X=X.assign(z=np.r_[np.nan, X["z"].to_numpy()[1:]]))
    with pytest.raises(ValueError, match="y_prob must lie in"):
        MCNet(**SMALL).fit(p * 2, y)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_fit_predicts_like_cpu(log_data):
    p, y, X, _ = log_data
    cpu = MCNet(**SMALL, field="f").fit(p, y, X=X).predict(p, X=X)
    gpu = MCNet(**SMALL, field="f", device="cuda").fit(p, y, X=X).predict(p, X=X)
    assert np.abs(cpu - gpu).max() < 1e-3


def test_weights_scaled_by_a_constant_give_the_same_map(log_data):
    p, y, X, _ = log_data
    w = np.random.default_rng(4).uniform(0.5, 2.0, p.size)
    a = MCNet(**SMALL, field="f").fit(p, y, X=X, sample_weight=w).predict(p, X=X)
    b = MCNet(**SMALL, field="f").fit(p, y, X=X, sample_weight=4 * w).predict(p, X=X)
    np.testing.assert_allclose(a, b, atol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MCNet(**SMALL).fit(p, y, sample_weight=np.r_[np.zeros(10), w[10:]])


def test_cli_fits_and_applies_mcnet_with_a_field(tmp_path, log_data, capsys):
    from mcal.cli import main

    p, y, X, _ = log_data
    data = tmp_path / "scores.csv"
    pd.DataFrame({"p": p, "y": y, "f": X["f"]}).to_csv(data, index=False)
    model_path, out = tmp_path / "m.json", tmp_path / "out.csv"
    params = [
        "--param",
        "hidden_sizes=[8]",
        "--param",
        "embedding_dim=4",
        "--param",
        "n_bins=5",
        "--param",
        "max_epochs=1",
    ]
    assert (
        main(
            [
                "fit",
                str(data),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                "mcnet",
                "--field",
                "f",
                *params,
                "--random-state",
                "0",
                "-o",
                str(model_path),
            ]
        )
        == 0
    )
    assert main(["predict", str(model_path), str(data), "-o", str(out)]) == 0
    model = mcal.load(model_path)
    assert model.field == "f" and model.field_values_ == ["0", "1", "2"]
    np.testing.assert_array_equal(pd.read_csv(out)["p_calibrated"].to_numpy(), model.predict(p, X=X[["f"]]))
    capsys.readouterr()


def test_progress_bar_counts_the_steps_run(monkeypatch):
    # the bar is driven by the step loop: one update per optimizer step actually run
    import mcal.mcnet._training as training

    updates = []

    class Bar:
        def update(self, n=1, **postfix):
            updates.append(postfix)

    class Ctx:
        def __init__(self, total, desc, *, enabled=None, unit="step"):
            assert enabled is True and unit == "step" and total == 3  # 3 epochs of one 540-row batch

        def __enter__(self):
            return Bar()

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(training, "progress", Ctx)
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 600)
    y = (rng.uniform(size=600) < p).astype(float)
    est = MCNet(
        hidden_sizes=(8, 8),
        embedding_dim=4,
        n_bins=4,
        n_nodes=10,
        max_epochs=3,
        patience=5,
        progress=True,
        random_state=0,
    ).fit(p, y)
    assert len(updates) == est.n_steps_ and all("loss" in u for u in updates)


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_weights_of_extreme_scale_give_the_map_of_unit_weights(log_data, scale):
    p, y, X, _ = log_data
    unit = MCNet(**SMALL, field="f").fit(p, y, X=X)
    scaled = MCNet(**SMALL, field="f").fit(p, y, X=X, sample_weight=np.full(p.size, scale))
    np.testing.assert_array_equal(scaled.predict(p, X=X), unit.predict(p, X=X))
    np.testing.assert_array_equal(scaled.validation_loss_curve_, unit.validation_loss_curve_)


def test_a_held_out_part_of_zero_weight_raises(log_data):
    p, y, X, _ = log_data
    held = np.sort(np.random.default_rng(0).permutation(p.size)[: round(0.1 * p.size)])  # the split of random_state=0
    w = np.ones(p.size)
    w[held] = 0.0
    with pytest.raises(
        ValueError, match="validation_fraction=0.1 must leave held-out rows of positive weight; got 300"
    ):
        MCNet(**SMALL, field="f", validation_fraction=0.1).fit(p, y, X=X, sample_weight=w)


def test_a_training_part_of_one_class_raises(log_data):
    p, y, X, _ = log_data
    held = np.zeros(p.size, dtype=bool)
    held[np.random.default_rng(0).permutation(p.size)[: round(0.1 * p.size)]] = True  # the split of random_state=0
    w = np.where(held | (y == 0), 1.0, 0.0)  # the positives all lie in the held-out part
    with pytest.raises(
        ValueError,
        match=r"must leave both classes \(with positive weight\) in the training part; got "
        r"only class 0 in its 2700 row\(s\)",
    ):
        MCNet(**SMALL, field="f", validation_fraction=0.1).fit(p, y, X=X, sample_weight=w)


@pytest.mark.parametrize(
    ("name", "dtype"), [("net.f1_out_b", np.float64), ("net.f1_out_b", np.float16), ("compiled.values", np.float32)]
)
def test_load_rejects_weights_of_another_dtype(field_model, name, dtype):
    tensors = field_model._get_tensors()
    tensors[name] = tensors[name].astype(dtype)
    with pytest.raises(ValueError, match=f"tensor '{name}' must be .*, as mcal.save writes it; got {np.dtype(dtype)}"):
        MCNet.from_dict(field_model.to_dict(), tensors)


def test_load_rejects_compiled_tables_of_another_model(field_model, log_data):
    # Same shapes, valid (increasing) tables, but from a network with other weights: compiled predictions would
    # silently differ from exact ones, so loading checks the tables against the network at grid points.
    p, y, X, _ = log_data
    other = MCNet(**{**SMALL, "random_state": 1}, field="f", validation_fraction=0.0).fit(p, y, X=X)
    tensors = field_model._get_tensors()
    tensors["compiled.values"] = other.compiled_values_
    tensors["compiled.slopes"] = other.compiled_slopes_
    with pytest.raises(ValueError, match=r"'compiled.values' must be the tables of this model's network; got \d+ of"):
        MCNet.from_dict(field_model.to_dict(), tensors)
    restored = MCNet.from_dict(field_model.to_dict(), field_model._get_tensors())
    assert np.array_equal(restored.compiled_values_, field_model.compiled_values_)


@pytest.mark.slow
def test_a_model_whose_exact_quadrature_is_coarser_than_its_tables_saves_and_loads(tmp_path):
    # one-vs-rest class 2 of this problem: the exact mode (n_nodes Clenshaw-Curtis nodes from the anchor) and the
    # tables (5 nodes per grid cell) differ by 3e-5 relative, which the load check refused at a 1e-6 tolerance
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(1500, 6, n_informative=4, n_classes=3, random_state=0)
    p = LogisticRegression(C=100).fit(X[:500], y[:500]).predict_proba(X[500:])[:, 2]
    model = MCNet(random_state=0, integral="quadrature").fit(p, (y[500:] == 2).astype(float), X=X[500:])
    mcal.save(model, tmp_path / "m.json")
    loaded = mcal.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(p, X=X[500:]), model.predict(p, X=X[500:]))


# -- the paper's equations on hand-built networks (Dai et al. 2025, section 4.2) ------------------------------
def hand_network(slope, targets, *, edges=(-3.0, 0.0, 3.0), anchor=(-2.0, 0.0), random_f1=False):
    """float64 weights of K = len(anchor) bins and C = targets.shape[1] - 1 fields: f1 == ``slope`` everywhere
    (zero output weights, output bias softplus^{-1}(slope - MIN_SLOPE)), unless ``random_f1``, and
    f2^k(c) == ``targets[k, c]`` (set by warm_start_bias)."""
    from mcal.mcnet._network import MIN_SLOPE, Architecture, initial_weights, to_parameters, warm_start_bias

    K, n_ctx = targets.shape
    arch = Architecture(
        n_bins=K, n_fields=n_ctx - 1, hidden_sizes=(8,), embedding_dim=3, n_auxiliary=0, auxiliary_hidden_size=4
    )
    rng = np.random.default_rng(5)
    weights = {k: v.astype(np.float64) for k, v in initial_weights(arch, rng, slope=slope).items()}
    weights["f1_out_b"] = np.full(K, np.log(np.expm1(slope - MIN_SLOPE)))
    if random_f1:
        weights["f1_out_w"] = rng.normal(size=weights["f1_out_w"].shape)
    P = to_parameters(torch, weights, device="cpu", dtype=torch.float64)
    warm_start_bias(torch, P, 1, targets)
    anchor = np.asarray(anchor)
    geometry = {"edges": np.asarray(edges), "anchor": anchor, "center": anchor + 0.5, "half_width": np.full(K, 1.5)}
    return P, {k: torch.as_tensor(v, dtype=torch.float64) for k, v in geometry.items()}


def hand_spec(beta=0.0, alpha=0.0, n_nodes=50, bin_joins="raised"):
    from mcal.mcnet._training import Spec

    return Spec(n_hidden=1, n_nodes=n_nodes, beta=beta, alpha=alpha, memory_efficient=False, bin_joins=bin_joins)


def hand_logits(P, geometry, x, bins, contexts, n_nodes=50):
    from mcal.mcnet._network import context_tables
    from mcal.mcnet._training import calibrated_logits

    with torch.no_grad():
        tables = context_tables(torch, P, 1)
        xt = torch.as_tensor(np.asarray(x, dtype=np.float64))
        return calibrated_logits(
            torch, P, hand_spec(n_nodes=n_nodes), geometry, tables, xt, np.asarray(bins), np.asarray(contexts), None
        ).numpy()


TARGETS = np.array([[-1.0, 0.5, -3.0], [0.5, 0.0, -2.5]])  # f2^k(c): 2 bins, no-context code 0 and 2 fields


def test_eq7_map_at_a_bins_anchor_is_its_bias_term():
    # the integration term vanishes at the lower bound, whatever f1 is
    P, geometry = hand_network(0.5, TARGETS, random_f1=True)
    bins, contexts = np.repeat([0, 1], 3), np.tile([0, 1, 2], 2)
    got = hand_logits(P, geometry, np.array([-2.0, 0.0])[bins], bins, contexts)
    np.testing.assert_allclose(got, TARGETS[bins, contexts], rtol=0, atol=1e-12)


def test_eq7_constant_integrand_gives_a_line_through_the_anchor_on_both_sides():
    P, geometry = hand_network(0.5, TARGETS)
    x = np.array([-3.0, -2.5, -0.5, 0.0, 1.0, 2.75])
    bins, contexts = np.array([0, 0, 0, 1, 1, 1]), np.array([0, 1, 2, 2, 1, 0])
    expected = TARGETS[bins, contexts] + 0.5 * (x - np.array([-2.0, 0.0])[bins])  # below the anchor: negative
    np.testing.assert_allclose(hand_logits(P, geometry, x, bins, contexts), expected, rtol=0, atol=1e-12)


def test_eq7_derivative_of_the_map_in_the_score_is_f1():
    # Appendix A.1: d f^k / d s = f1^k(s, h^k(c)); central differences of the quadrature against the integrand
    from mcal.mcnet._network import context_tables, integrand

    P, geometry = hand_network(0.5, TARGETS, random_f1=True)
    x, bins, contexts = np.array([-2.6, -1.1, 0.4, 2.2]), np.array([0, 0, 1, 1]), np.array([1, 2, 0, 2])
    h = 1e-5
    up, down = hand_logits(P, geometry, x + h, bins, contexts), hand_logits(P, geometry, x - h, bins, contexts)
    slope = (up - down) / (2 * h)
    with torch.no_grad():
        offset, _ = context_tables(torch, P, 1)
        u = (x - geometry["center"].numpy()[bins]) / geometry["half_width"].numpy()[bins]
        f1 = (
            integrand(
                torch,
                P,
                1,
                torch.as_tensor(u).reshape(-1, 1, 1),
                offset[bins, contexts][:, None],
                torch.as_tensor(bins),
            )
            .numpy()
            .ravel()
        )
    assert np.ptp(f1) > 0.05  # a non-constant integrand
    np.testing.assert_allclose(slope, f1, rtol=1e-6)


def test_f1_stays_strictly_positive_where_softplus_underflows():
    from mcal.mcnet._network import MIN_SLOPE

    P, geometry = hand_network(0.5, TARGETS)
    with torch.no_grad():
        P["f1_out_b"].fill_(-800.0)  # softplus(-800) == 0 in float64
    got = hand_logits(P, geometry, [1.0, 3.0], [1, 1], [0, 0]) - TARGETS[1, 0]
    np.testing.assert_allclose(got, MIN_SLOPE * np.array([1.0, 3.0]), rtol=1e-12)


def test_warm_start_is_the_per_field_platt_line_continuous_across_bins():
    # Notes, "Warm start": f1 == a and f2^k(c) == a * a_k + b_c make f(s, c) == a s + b_c in every bin
    from mcal.mcnet._network import Architecture, initial_weights, to_parameters, warm_start_bias

    a, b = 0.8, np.array([0.1, -0.7, 1.3])
    anchor = np.array([-4.0, -1.0, 0.5])
    arch = Architecture(
        n_bins=3, n_fields=2, hidden_sizes=(8, 8), embedding_dim=3, n_auxiliary=0, auxiliary_hidden_size=4
    )
    weights = initial_weights(arch, np.random.default_rng(0), slope=a)
    P = to_parameters(torch, weights, device="cpu", dtype=torch.float64)
    warm_start_bias(torch, P, 2, a * anchor[:, None] + b[None, :])
    geometry = {"anchor": anchor, "center": anchor + 0.7, "half_width": np.full(3, 0.7)}
    geometry = {k: torch.as_tensor(v) for k, v in geometry.items()}
    rng = np.random.default_rng(1)
    bins, contexts = rng.integers(0, 3, 30), rng.integers(0, 3, 30)
    x = anchor[bins] + rng.uniform(-1.0, 2.0, 30)
    from mcal.mcnet._network import context_tables
    from mcal.mcnet._training import Spec, calibrated_logits

    with torch.no_grad():
        spec = Spec(n_hidden=2, n_nodes=20, beta=0.0, alpha=0.0, memory_efficient=False, bin_joins="raised")
        got = calibrated_logits(
            torch, P, spec, geometry, context_tables(torch, P, 2), torch.as_tensor(x), bins, contexts, None
        ).numpy()
    np.testing.assert_allclose(got, a * x + b[contexts], rtol=0, atol=1e-6)  # f1's bias is stored as float32


def test_eq10_order_penalty_sums_the_hinge_of_probabilities_over_contexts_at_the_inner_edge():
    from scipy.special import expit

    from mcal.mcnet._network import ordered_tables
    from mcal.mcnet._training import order_penalty

    P, geometry = hand_network(0.5, TARGETS)
    with torch.no_grad():
        _, bias, raw, gaps = ordered_tables(torch, P, geometry, n_hidden=1, n_nodes=50, bin_joins="raised")
        got = float(order_penalty(torch, raw, gaps))
    # f^1(b_1, c) = f2^1(c) + 0.5 * (0 - (-2)) = [0, 1.5, -2]; f^2(b_1, c) = f2^2(c) = [0.5, 0, -2.5]
    expected = 0.0 + (expit(1.5) - expit(0.0)) + (expit(-2.0) - expit(-2.5))
    assert got == pytest.approx(expected, rel=1e-12)
    # the map itself starts bin 2 where bin 1 ends, or higher: max([0.5, 0, -2.5], [0, 1.5, -2])
    np.testing.assert_allclose(bias.numpy(), [TARGETS[0], [0.5, 1.5, -2.0]], atol=1e-12)


def test_continuous_joins_start_every_bin_where_the_bin_before_ends():
    from mcal.mcnet._network import ordered_tables

    P, geometry = hand_network(0.5, TARGETS)
    with torch.no_grad():
        _, bias, raw, _ = ordered_tables(torch, P, geometry, n_hidden=1, n_nodes=50, bin_joins="continuous")
    # f^1(b_1, c) = f2^1(c) + 0.5 * (0 - (-2)); bin 2's own bias term [0.5, 0, -2.5] is not used, above or below
    np.testing.assert_allclose(bias.numpy(), [TARGETS[0], TARGETS[0] + 1.0], atol=1e-12)
    np.testing.assert_allclose(raw.numpy(), TARGETS, atol=1e-12)


def test_eq13_objective_with_continuous_joins_has_no_order_term():
    from mcal.mcnet._training import Data, objective

    P, geometry = hand_network(0.5, TARGETS)
    x, bins, contexts = np.array([-1.0, 1.0]), np.array([0, 1]), np.array([1, 2])
    y, w = np.array([1.0, 0.0]), np.ones(2)
    data = Data(torch.as_tensor(x), torch.as_tensor(y), torch.as_tensor(w), bins, contexts, None, 0, None)
    with torch.no_grad():
        got = float(objective(torch, P, hand_spec(beta=5.0, bin_joins="continuous"), geometry, data, np.arange(2),
                              contexts))  # fmt: skip
    logits = np.array([0.5 + 0.5, -3.0 + 1.0 + 0.5])  # bin 1 from its anchor -2; bin 2 from where bin 1 ends
    assert got == pytest.approx(np.mean(np.logaddexp(0.0, logits) - y * logits), rel=1e-9)


def test_eq10_order_penalty_of_one_bin_is_zero():
    from mcal.mcnet._network import ordered_tables
    from mcal.mcnet._training import order_penalty

    P, geometry = hand_network(0.5, TARGETS[:1], edges=(-3.0, 3.0), anchor=(-2.0,))
    _, _, raw, gaps = ordered_tables(torch, P, geometry, n_hidden=1, n_nodes=50, bin_joins="raised")
    assert float(order_penalty(torch, raw, gaps)) == 0.0


def test_eq11_12_balance_penalty_is_the_population_std_of_diff_over_the_whole_batch_weight():
    from mcal._torch import balance_penalty

    p, y, w = (torch.tensor(v, dtype=torch.float64) for v in ([0.2, 0.6, 0.9, 0.4], [0, 1, 1, 0], [1, 2, 1, 1]))
    groups = torch.tensor([0, 0, 1, 1])
    # DIFF_0 = (0.2 - 2 * 0.4) / 5 = -0.12, DIFF_1 = (-0.1 + 0.4) / 5 = 0.06 (eq. 11 divides by N, not N_c);
    # their population standard deviation (eq. 12, over |C| = 2) is 0.09
    assert float(balance_penalty(torch, p, y, w, groups, 2)) == pytest.approx(0.09, rel=1e-9)


def test_eq13_objective_is_log_loss_plus_beta_order_plus_alpha_balance():
    from scipy.special import expit

    from mcal.mcnet._training import Data, objective

    P, geometry = hand_network(0.5, TARGETS)
    x = np.array([-2.5, -1.0, -0.2, 0.3, 1.5, 2.0])
    bins, contexts = np.array([0, 0, 0, 1, 1, 1]), np.array([1, 2, 1, 2, 1, 2])
    y, w = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0]), np.array([1.0, 0.5, 2.0, 1.0, 1.0, 3.0])
    data = Data(
        x=torch.as_tensor(x),
        y=torch.as_tensor(y),
        w=torch.as_tensor(w),
        bins=bins,
        contexts=contexts,
        groups=torch.as_tensor(contexts - 1),
        n_groups=2,
        aux=None,
    )
    with torch.no_grad():
        got = float(objective(torch, P, hand_spec(beta=0.7, alpha=0.3), geometry, data, np.arange(6), contexts))
    start = np.array([TARGETS[0], [0.5, 1.5, -2.0]])  # bin 2 raised to where bin 1 ends (eq. 10's hinge is > 0)
    logits = start[bins, contexts] + 0.5 * (x - np.array([-2.0, 0.0])[bins])
    log_loss = np.sum(w * (np.logaddexp(0.0, logits) - y * logits)) / w.sum()
    order = (expit(1.5) - expit(0.0)) + (expit(-2.0) - expit(-2.5))
    diff = np.bincount(contexts - 1, weights=w * (expit(logits) - y)) / w.sum()
    assert got == pytest.approx(log_loss + 0.7 * order + 0.3 * np.std(diff), rel=1e-9)


def test_fit_forms_equal_frequency_bins_and_anchors_the_first_at_the_smallest_score():
    rng = np.random.default_rng(4)
    p = rng.uniform(0.05, 0.95, 400)
    y = rng.binomial(1, p)
    model = MCNet(
        n_bins=4, hidden_sizes=(4,), embedding_dim=2, n_nodes=5, max_epochs=1, validation_fraction=0.0, random_state=0
    ).fit(p, y)
    x = mcal._validation.logit(p)
    counts = np.bincount(np.searchsorted(model.bin_edges_[1:-1], x, side="left"), minlength=4)
    assert counts.tolist() == [100, 100, 100, 100]
    anchor = model._geometry()["anchor"]
    np.testing.assert_array_equal(anchor, np.r_[x.min(), model.bin_edges_[1:-1]])


def test_separable_labels_give_a_finite_step_like_map():
    # the warm start's Platt slope runs to ~1e4 on separable labels; softplus^{-1} of it overflowed to inf,
    # and f1 = inf * 0 = nan made every prediction nan
    p = np.random.default_rng(4).uniform(0.05, 0.95, 400)
    y = (p > 0.5).astype(float)
    model = MCNet(
        n_bins=4, hidden_sizes=(4,), embedding_dim=2, n_nodes=5, max_epochs=1, validation_fraction=0.0, random_state=0
    ).fit(p, y)
    for inference in ("exact", "compiled"):
        out = model.set_params(inference=inference).predict(np.array([0.1, 0.45, 0.55, 0.9]))
        assert np.all(out[:2] < 0.01) and np.all(out[2:] > 0.99), (inference, out)


def test_compiled_slopes_are_limited_to_the_monotone_region_of_the_cubic():
    # Fritsch-Carlson: end slopes (a, b) in units of the secant are scaled onto a^2 + b^2 = 9 when outside it
    from mcal.mcnet._compiled import _limit_slopes

    values = np.array([0.0, 1.0, 2.0]).reshape(1, 1, 3)
    slopes = np.array([10.0, 10.0, 1.0]).reshape(1, 1, 3)
    got = _limit_slopes(values, slopes, np.array([1.0]))
    np.testing.assert_allclose(
        got[0, 0], [[3.0 / np.sqrt(2.0)] * 2, [10.0 * 3.0 / np.sqrt(101.0), 3.0 / np.sqrt(101.0)]], rtol=1e-14
    )


def test_slopes_inside_the_monotone_region_are_kept():
    from mcal.mcnet._compiled import _limit_slopes

    values = np.array([0.0, 2.0]).reshape(1, 1, 2)
    slopes = np.array([1.0, 4.0]).reshape(1, 1, 2)  # (0.5, 2) secants: 0.25 + 4 < 9
    np.testing.assert_array_equal(_limit_slopes(values, slopes, np.array([1.0]))[0, 0], [[1.0, 4.0]])


#: A learning rate at which the held-out loss rises after its minimum on click_log(0, 3000); no order penalty, so
#: that the held-out criterion is the held-out log loss.
NOISY = dict(
    SMALL, field="f", validation_fraction=0.3, max_epochs=400, min_steps=50, patience=50, beta=0.0, learning_rate=0.01
)


def test_best_step_has_the_lowest_held_out_loss_and_training_stops_patience_steps_later(log_data):
    p, y, X, _ = log_data
    model = MCNet(**NOISY).fit(p, y, X=X)
    curve = model.validation_loss_curve_
    interval = 25  # steps between held-out readings (held-out rows < 25 batches)
    assert 0 < model.best_step_ < model.n_steps_ < NOISY["max_epochs"] * 9  # 2,100 training rows: 9 steps a pass
    assert curve[model.best_step_ // interval] == curve.min()
    assert model.n_steps_ == max(NOISY["min_steps"], model.best_step_ + NOISY["patience"])
    assert model.best_epoch_ == -(-model.best_step_ // 9)


def test_the_weights_kept_are_those_of_the_best_step(log_data):
    # The held-out rows are the first draw of the seeded generator; with beta = 0 the criterion is their log loss.
    from mcal.mcnet._training import split_rows

    p, y, X, _ = log_data
    model = MCNet(**NOISY).fit(p, y, X=X)
    _, held = split_rows(y.astype(float), np.ones(p.size), 0.3, np.random.default_rng(NOISY["random_state"]))
    q = model.predict(p[held], X=X.iloc[held])
    held_loss = -np.mean(y[held] * np.log(q) + (1 - y[held]) * np.log(1 - q))
    curve = model.validation_loss_curve_
    assert held_loss == pytest.approx(curve.min(), rel=1e-5)
    assert curve[-1] > curve.min() + 1e-4  # the last weights are not those kept
