"""MCNet's devices: ``device`` sets where fit trains; predict runs on the CPU unless its own ``device`` says otherwise,
so a model trained on a GPU loads and predicts on a machine without one. Tested without a GPU: a model file whose
parameters record ``device="cuda"`` is what a GPU-trained model writes (its weights are saved from the CPU)."""

import copy
import json

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal import MCNet, PlattScaling
from mcal.cli import main

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

TINY = dict(n_bins=3, hidden_sizes=(4,), embedding_dim=2, n_nodes=8, batch_size=256, max_epochs=1, inference="exact",
            random_state=0)  # fmt: skip
#: The same settings as ``mcal fit`` options.
TINY_PARAMS = [arg for k, v in TINY.items() if k != "random_state" for arg in ("--param", f"{k}={json.dumps(v)}")]
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 800
    f = rng.choice(["a", "b"], n)
    p = rng.uniform(0.02, 0.98, n)
    y = rng.binomial(1, np.clip(p**1.5 + np.where(f == "a", 0.05, -0.05), 0, 1))
    return p, y, pd.DataFrame({"f": f})


@pytest.fixture(scope="module")
def cpu_model(data):
    p, y, X = data
    return MCNet(**TINY, field="f").fit(p, y, X=X)


def variant(model, **params):
    """A copy of the fitted ``model`` with other parameters (the fixture's model stays as it is)."""
    return copy.deepcopy(model).set_params(**params)


@pytest.fixture
def recorded_as_cuda(tmp_path, rewrite_model):
    """``recorded_as_cuda(model)``: save ``model``, rewrite its file's parameters (with a new digest) to say it was
    trained on ``cuda``, as the file of a GPU-trained model does, and return the path."""

    def record(model):
        path = tmp_path / "m.json"
        mcal.save(model, path, metadata={"score_col": "p"})
        rewrite_model(path, lambda doc: doc["model"]["params"].update(device="cuda"))
        return path

    return record


@pytest.mark.parametrize("inference", ["exact", "compiled"])
def test_a_model_file_recording_cuda_predicts_on_the_cpu_exactly_as_the_cpu_model(
    data, cpu_model, recorded_as_cuda, inference
):
    p, _, X = data
    model = variant(cpu_model, inference=inference)
    loaded = mcal.load(recorded_as_cuda(model))
    assert loaded.device == "cuda" and loaded.inference == inference
    assert np.array_equal(loaded.predict(p, X=X), model.predict(p, X=X))


def test_the_training_device_recorded_in_the_parameters_does_not_change_predictions(data, cpu_model):
    p, _, X = data
    as_cuda = variant(cpu_model, device="cuda:1")  # a model trained on a second GPU, still in memory
    assert np.array_equal(as_cuda.predict(p, X=X), cpu_model.predict(p, X=X))


@no_cuda
def test_fit_on_an_unavailable_cuda_device_raises_naming_it(data):
    p, y, X = data
    with pytest.raises(
        ValueError,
        match="^device must name a device available on this machine; got 'cuda', but torch.cuda.is_available",
    ):
        MCNet(**TINY, device="cuda").fit(p, y, X=X)


@no_cuda
def test_predict_on_an_explicit_unavailable_device_raises_naming_it(data, cpu_model):
    p, _, X = data
    with pytest.raises(ValueError, match="^device must name a device available on this machine; got 'cuda:0'"):
        cpu_model.predict(p, X=X, device="cuda:0")


def test_a_cuda_index_beyond_the_devices_torch_sees_raises_naming_it(data, cpu_model, monkeypatch):
    p, _, X = data
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(
        ValueError,
        match="^device must name a device available on this machine; got 'cuda:3', but "
        "torch sees 1 CUDA device\\(s\\), cuda:0 to cuda:0",
    ):
        cpu_model.predict(p, X=X, device="cuda:3")


@pytest.mark.parametrize(
    ("device", "error"), [(0, TypeError), (None, TypeError), ("gpu", ValueError), ("CUDA", ValueError)]
)
def test_predict_device_of_the_wrong_type_or_value_raises_naming_it(data, cpu_model, device, error):
    p, _, X = data
    with pytest.raises(error, match="^device must be 'cpu', 'cuda' or 'cuda:N'"):
        cpu_model.predict(p, X=X, device=device)


def test_a_torch_device_object_is_refused_asking_for_its_name_as_a_str(data, cpu_model):
    # the rule read "(a torch device)", which a torch.device object is
    p, y, X = data
    with pytest.raises(TypeError, match=r"\(a torch device's name, as a str\); got device\(type='cpu'\) of type"):
        cpu_model.predict(p, X=X, device=torch.device("cpu"))
    with pytest.raises(TypeError, match=r"as a str\); got device\(type='cpu'\)"):
        MCNet(**{**TINY, "device": torch.device("cpu")}).fit(p, y, X=X)


def test_compiled_inference_takes_only_the_cpu_device(data, cpu_model):
    p, _, X = data
    compiled = variant(cpu_model, inference="compiled")
    assert np.array_equal(compiled.predict(p, X=X, device="cpu"), compiled.predict(p, X=X))
    with pytest.raises(ValueError, match="^device must be 'cpu' with inference='compiled'"):
        compiled.predict(p, X=X, device="cuda")


@needs_cuda
def test_predict_on_cuda_agrees_with_the_cpu_in_float64(data, cpu_model):
    p, _, X = data
    gpu = cpu_model.predict(p, X=X, device="cuda")
    np.testing.assert_allclose(gpu, cpu_model.predict(p, X=X), rtol=0, atol=1e-12)


@needs_cuda
def test_a_model_trained_on_cuda_predicts_on_the_cpu_by_default_as_after_loading(data, tmp_path):
    p, y, X = data
    model = MCNet(**TINY, field="f", device="cuda").fit(p, y, X=X)
    mcal.save(model, tmp_path / "gpu.json")
    assert np.array_equal(mcal.load(tmp_path / "gpu.json").predict(p, X=X), model.predict(p, X=X))


# -- the command line -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def table(data, tmp_path_factory):
    p, y, X = data
    path = tmp_path_factory.mktemp("device") / "scores.csv"
    pd.DataFrame({"p": p, "y": y, "f": X["f"]}).to_csv(path, index=False)
    return path


def fit_args(table, model, *extra):
    return ["fit", str(table), "--score-col", "p", "--label-col", "y", "-o", str(model), "--random-state", "0", *extra]


def test_cli_fit_and_predict_take_a_device_and_give_the_python_api_values(table, data, tmp_path):
    p, y, X = data
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
    assert main(fit_args(table, model, "--method", "mcnet", "--field", "f", "--device", "cpu", *TINY_PARAMS)) == 0
    assert mcal.load(model).device == "cpu"
    assert main(["predict", str(model), str(table), "-o", str(out), "--device", "cpu"]) == 0
    expected = MCNet(**TINY, field="f").fit(p, y, X=X).predict(p, X=X)
    np.testing.assert_allclose(pd.read_csv(out)["p_calibrated"], expected, rtol=0, atol=1e-15)


def test_cli_predicts_with_a_model_file_recording_cuda_on_the_cpu(table, cpu_model, data, tmp_path, recorded_as_cuda):
    p, _, X = data
    out = tmp_path / "out.csv"
    assert main(["predict", str(recorded_as_cuda(cpu_model)), str(table), "-o", str(out)]) == 0
    np.testing.assert_allclose(pd.read_csv(out)["p_calibrated"], cpu_model.predict(p, X=X), rtol=0, atol=1e-15)


@no_cuda
@pytest.mark.parametrize("command", ["fit", "predict"])
def test_cli_device_cuda_without_cuda_is_a_clear_error_naming_the_option(table, cpu_model, tmp_path, capsys, command):
    if command == "fit":
        args = fit_args(table, tmp_path / "m.json", "--method", "mcnet", "--field", "f", "--device", "cuda")
    else:
        mcal.save(cpu_model, tmp_path / "cpu.json")
        args = ["predict", str(tmp_path / "cpu.json"), str(table), "-o", str(tmp_path / "out.csv"), "--device", "cuda"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcal: error: --device must name a device available on this machine; got 'cuda'")
    assert "Traceback" not in err
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "mcnet", "--field", "f", "--device", "gpu"], "--device must be 'cpu', 'cuda' or 'cuda:N'"),
        (["--method", "mcnet", "--field", "f", "--device", "cuda:x"], "--device must be 'cpu', 'cuda' or 'cuda:N'"),
        (
            ["--method", "neucalib", "--field", "f", "--device", "cpu"],
            "--device is not used by method 'neucalib', which trains on the CPU; methods trained on a chosen device: "
            "mcnet",
        ),
        (["--method", "isotonic", "--device", "cpu"], "--device is not used by method 'isotonic'"),
        (
            ["--method", "mcnet", "--field", "f", "--param", "device=cpu"],
            "--param must not set device, which has its own option --device DEV",
        ),
    ],
)
def test_cli_fit_rejects_a_bad_or_misplaced_device_naming_the_option(table, tmp_path, capsys, extra, message):
    assert main(fit_args(table, tmp_path / "m.json", *extra)) == 2
    assert capsys.readouterr().err.startswith(f"mcal: error: {message}")
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("holds", ["platt", "compiled mcnet"])
def test_cli_predict_device_applies_to_exact_mcnet_models_only(table, data, cpu_model, tmp_path, capsys, holds):
    p, y, _ = data
    if holds == "platt":
        model, shown = PlattScaling().fit(p, y), "a PlattScaling"
    else:
        model, shown = variant(cpu_model, inference="compiled"), "an MCNet with inference='compiled'"
    mcal.save(model, tmp_path / "m.json", metadata={"score_col": "p"})
    out = str(tmp_path / "o.csv")
    assert main(["predict", str(tmp_path / "m.json"), str(table), "-o", out, "--device", "cpu"]) == 2
    assert f"--device applies to MCNet models with inference='exact' only; {tmp_path / 'm.json'} holds {shown}" in (
        capsys.readouterr().err
    )
