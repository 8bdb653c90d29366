"""The baselines through the command line: ``mcal fit --method NAME`` then ``mcal predict``."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from mcal import PlattScaling, load
from mcal.cli import main

torch = pytest.importorskip("torch")
torch.set_num_threads(1)


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    n = 1500
    field = rng.choice(["a", "b"], n)
    s = rng.normal(-1.0, 2.0, n)
    y = rng.random(n) < expit(0.5 * s + np.where(field == "a", 0.5, -0.5))
    path = tmp_path / "scores.csv"
    groups = {"g_a": (field == "a").astype(int), "g_low": (s < -1).astype(int)}
    frame = {"p": expit(s), "y": y.astype(int), "f": field, "w": rng.normal(size=n), **groups}
    pd.DataFrame(frame).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("platt", []),
        ("temperature", []),
        ("beta", []),
        ("isotonic", []),
        ("histogram", ["--param", "n_bins=7"]),
        ("gaussian", []),
        ("gamma", []),
        ("sir", []),
        ("neucalib", ["--field", "f", "--param", "max_iter=30"]),
        ("neucalib", ["--field", "f", "--features", "w", "--param", "max_iter=30"]),
        ("adacalib", ["--field", "f", "--features", "w", "--param", "max_iter=30"]),
        ("adacalib", ["--field", "f", "--param", "max_iter=30"]),
        ("per-field-isotonic", ["--field", "f"]),
        ("hkrr", ["--features", "g_a,g_low"]),
        ("dfmc", ["--features", "g_a,g_low", "--n-jobs", "1"]),
        ("hkrr", ["--features", "f,p", "--param", "groups=generated"]),
    ],
)
def test_fit_then_predict_through_the_command_line_matches_the_python_api(table, tmp_path, method, extra):
    model = tmp_path / "model.json"
    out = tmp_path / "out.csv"
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
                "-o",
                str(model),
                "--random-state",
                "0",
                *extra,
            ]
        )
        == 0
    )
    assert main(["predict", str(model), str(table), "-o", str(out)]) == 0
    df, written = pd.read_csv(table), pd.read_csv(out)
    cal = load(model)
    columns = extra[extra.index("--features") + 1].split(",") if "--features" in extra else []
    columns += ["f"] if "--field" in extra else []
    X = df[columns] if cal.uses_features else None
    assert np.allclose(written["p_calibrated"], cal.predict(df["p"].to_numpy(), X=X), rtol=0, atol=1e-12)


def test_a_field_method_without_field_fails_with_a_clear_message(table, tmp_path, capsys):
    status = main(
        [
            "fit",
            str(table),
            "--score-col",
            "p",
            "--label-col",
            "y",
            "--method",
            "adacalib",
            "-o",
            str(tmp_path / "m.json"),
        ]
    )
    assert status == 2
    assert "needs --field COL" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_runs_every_baseline_with_its_inputs(tmp_path, capsys):
    methods = "gaussian,gamma,sir,neucalib,adacalib,per-field-isotonic,hkrr,dfmc"
    assert main(["demo", "--quick", "--methods", methods, "--output-dir", str(tmp_path / "d")]) == 0
    table = capsys.readouterr().out
    for name in methods.split(","):
        assert f"fitted {name}" in table


def test_features_of_per_field_isotonic_are_rejected_as_it_reads_only_its_field(table, tmp_path, capsys):
    status = main(
        [
            "fit",
            str(table),
            "--score-col",
            "p",
            "--label-col",
            "y",
            "--method",
            "per-field-isotonic",
            "--field",
            "f",
            "--features",
            "w",
            "-o",
            str(tmp_path / "m.json"),
        ]
    )
    assert status == 2
    assert "reads only its --field column" in capsys.readouterr().err


def test_per_field_calibration_of_another_method_is_chosen_with_param_calibrator(table, tmp_path, capsys):
    model = tmp_path / "m.json"
    args = ["fit", str(table), "--score-col", "p", "--label-col", "y", "--method", "per-field-isotonic", "--field", "f"]
    assert main([*args, "--param", "calibrator=platt", "-o", str(model)]) == 0
    fitted = load(model)
    assert isinstance(fitted.global_calibrator_, PlattScaling)
    assert all(isinstance(c, PlattScaling) for c in fitted.field_calibrators_)
    assert main([*args, "--param", "calibrator=plat", "-o", str(model)]) == 2
    assert "--param calibrator must name a method (e.g. platt, sir); got 'plat'" in capsys.readouterr().err
    assert main([*args, "--param", "calibrator=mcgrad", "-o", str(model)]) == 2
    assert "calibrator must be univariate (uses_features=False); got MCGrad" in capsys.readouterr().err


def _score_only_data():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 400)
    return p, (rng.random(p.size) < expit(1.5 * (p - 0.5) * 4)).astype(int)


@pytest.mark.parametrize("method", ["mcgrad", "mcnet", "hkrr", "dfmc", "neucalib", "adacalib", "per-field-isotonic"])
def test_requires_features_says_whether_python_fits_without_x(method):
    """The CLI refuses a fit without --features/--field exactly where the Python class refuses X=None."""
    from mcal._registry import get_method

    cls = get_method(method)
    fast = {"mcnet": {"max_epochs": 1}, "mcgrad": {"max_rounds": 1, "n_estimators": 5, "early_stopping": None}}
    params = fast.get(method, {})
    p, y = _score_only_data()
    if cls.requires_features:
        with pytest.raises((ValueError, TypeError), match="X must|field must"):
            cls(**params).fit(p, y)
    else:
        assert cls(**params).fit(p, y).predict(p).shape == p.shape


def test_mcnet_without_field_fits_one_context_on_the_score_alone(table, tmp_path):
    # `mcal fit --method mcnet` without --field was refused, though MCNet's field is optional in Python
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
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
                "mcnet",
                "--random-state",
                "0",
                "--param",
                "max_epochs=2",
                "--param",
                "hidden_sizes=[8]",
                "--quiet",
                "-o",
                str(model),
            ]
        )
        == 0
    )
    assert main(["predict", str(model), str(table), "-o", str(out)]) == 0
    fitted, df = load(model), pd.read_csv(table)
    assert fitted.field is None and fitted.field_values_ is None
    np.testing.assert_allclose(pd.read_csv(out)["p_calibrated"], fitted.predict(df["p"].to_numpy()), rtol=0, atol=1e-12)


def test_predict_of_a_score_only_mcnet_fitted_in_python_needs_no_features(table, tmp_path):
    # it asked for --features, as for a model fitted on an array without column names
    from mcal import MCNet, save

    df = pd.read_csv(table)
    fitted = MCNet(max_epochs=1, hidden_sizes=(8,), random_state=0).fit(df["p"], df["y"])
    save(fitted, tmp_path / "m.json")
    out = tmp_path / "out.csv"
    assert main(["predict", str(tmp_path / "m.json"), str(table), "--score-col", "p", "-o", str(out)]) == 0
    np.testing.assert_allclose(pd.read_csv(out)["p_calibrated"], fitted.predict(df["p"]), rtol=0, atol=1e-12)
