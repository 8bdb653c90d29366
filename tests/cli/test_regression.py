"""The command line and the HTML report with a continuous label: regression methods and --outcome regression."""

import json
import re

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal.cli import main
from mcal.metrics import mse

pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(3)
    n = 3000
    df = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "x": rng.normal(size=n)})
    df["p"] = 2.0 + df["x"]
    df["y"] = df["p"] + df["g"].map({"a": -1.0, "b": 0.0, "c": 1.0}) + rng.normal(size=n)
    path = tmp_path_factory.mktemp("data") / "d.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.mark.parametrize("method", ["regression-mcgrad", "regression-isotonic", "regression-linear"])
def test_fit_and_predict_a_regression_method_lower_the_mse(table, tmp_path, method, capsys):
    path, df = table
    features = ["--features", "g,x"] if method == "regression-mcgrad" else []
    assert (
        main(
            [
                "fit",
                str(path),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                method,
                *features,
                "--random-state",
                "0",
                "--quiet",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
        == 0
    )
    assert main(["predict", str(tmp_path / "m.json"), str(path), "-o", str(tmp_path / "out.csv")]) == 0
    out = pd.read_csv(tmp_path / "out.csv")
    model = mcal.load(tmp_path / "m.json")
    X = df[["g", "x"]] if model.uses_features else None
    np.testing.assert_allclose(out["p_calibrated"], model.predict(df["p"].to_numpy(), X=X), rtol=1e-12)
    assert mse(df["y"], out["p_calibrated"]) < mse(df["y"], df["p"])


def test_evaluate_regression_prints_the_metrics_and_the_mce_as_json(table, capsys):
    path, df = table
    assert (
        main(
            [
                "evaluate",
                str(path),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--outcome",
                "regression",
                "--segments",
                "g",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    row = out["metrics"]["p"]
    assert row["mse"] == pytest.approx(mse(df["y"], df["p"]), rel=1e-12)
    expected = mcal.metrics.mce(df["y"], df["p"], X=df[["g"]], outcome="regression")
    assert row["mce_sigma"] == pytest.approx(expected.mce_sigma, rel=1e-12)
    assert {"mae", "mean_prediction", "mean_outcome", "ecce", "ecce_sigma_scale", "ecce_pvalue"} <= set(row)


def test_evaluate_plot_and_report_with_a_continuous_label(table, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path, _ = table
    assert (
        main(
            [
                "evaluate",
                str(path),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--outcome",
                "regression",
                "--plot",
                str(tmp_path / "r.png"),
            ]
        )
        == 0
    )
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert (
        main(
            [
                "report",
                str(path),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--outcome",
                "regression",
                "--segments",
                "g,x",
                "--quiet",
                "-o",
                str(tmp_path / "r.html"),
            ]
        )
        == 0
    )
    html = (tmp_path / "r.html").read_text()
    for part in ('data-metric="mse"', 'id="reliability"', 'id="cumulative"', 'id="multicalibration"', "Mean outcome",
                 'href="#cumulative"', "outcome minus prediction"):  # fmt: skip
        assert part in html


@pytest.mark.parametrize(
    "argv, match",
    [
        (["evaluate", "--score-col", "p", "--label-col", "y"], "must be binary.*use --outcome regression"),
        (
            ["evaluate", "--score-col", "p", "--label-col", "y", "--outcome", "regression", "--field", "g"],
            "--field applies to binary labels",
        ),
        (
            [
                "report",
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--outcome",
                "regression",
                "--pos-label",
                "1",
                "-o",
                "r.html",
            ],
            "--pos-label applies to binary labels",
        ),
        (
            ["fit", "--score-col", "p", "--label-col", "y", "--method", "platt", "-o", "m.json"],
            "regression method.*regression-mcgrad",
        ),
    ],
)
def test_binary_only_options_and_continuous_labels_for_binary_methods_are_refused(
    table, tmp_path, argv, match, capsys, monkeypatch
):
    path, _ = table
    monkeypatch.chdir(tmp_path)
    assert main([argv[0], str(path), *argv[1:]]) != 0
    assert re.search(match, capsys.readouterr().err)


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--fail-if", "roc_auc > 0.5"], "roc_auc is not computed with --outcome regression; metrics: .*mse"),
        (["--fail-if", "mce_sigma > 1"], "mce_sigma needs --segments"),
        (["--ci", "0.9"], "--ci applies to binary labels"),
    ],
)
def test_regression_gates_and_intervals_are_checked_before_any_work(table, extra, match, capsys, monkeypatch):
    path, _ = table
    monkeypatch.setattr("mcal.metrics.regression_summary", lambda *a, **k: pytest.fail("ran before the check"))
    argv = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--outcome", "regression", *extra]
    assert main(argv) == 2
    assert re.search(match, capsys.readouterr().err)


def test_regression_gates_on_mse_hold_by_the_computed_value(table, capsys):
    path, df = table
    value = mse(df["y"], df["p"])  # about 1.67: the noise plus the planted segment offsets
    argv = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--outcome", "regression", "--fail-if"]
    assert main([*argv, f"mse > {value - 0.01}"]) == 1
    assert f"mse = {value:.6g}" in capsys.readouterr().err
    assert main([*argv, f"mse > {value + 0.01}"]) == 0


def test_classification_refuses_a_gate_on_a_regression_metric(table, tmp_path, capsys):
    path = tmp_path / "b.csv"
    pd.DataFrame({"y": [0, 1, 1, 0], "p": [0.2, 0.7, 0.6, 0.4]}).to_csv(path, index=False)
    assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--fail-if", "mse > 1"]) == 2
    assert "mse is not computed with --outcome classification" in capsys.readouterr().err


def test_regression_reliability_diagram_draws_bin_means_and_a_diagonal_over_every_curve():
    Figure = pytest.importorskip("matplotlib.figure").Figure
    from mcal.plotting import plot_reliability_diagram

    ax = Figure().add_subplot()
    plot_reliability_diagram([1.0, 3.0, 5.0, 13.0], [0.0, 2.0, 6.0, 10.0], n_bins=2, outcome="regression", ax=ax)
    plot_reliability_diagram([1.0, 3.0, 5.0, 13.0], [1.0, 3.0, 7.0, 20.0], n_bins=2, outcome="regression", ax=ax)
    first, _second, diagonal = ax.get_lines()
    assert first.get_xydata().tolist() == [[1.0, 2.0], [8.0, 9.0]]  # bins [0, 5) and [5, 10] by hand
    assert diagonal.get_xydata().tolist() == [[1.0, 1.0], [20.0, 20.0]]  # one diagonal, over both curves
    with pytest.raises(ValueError, match="confidence must be None for outcome='regression'"):
        plot_reliability_diagram([1.0, 2.0], [1.0, 2.0], confidence=0.9, outcome="regression", ax=ax)


def test_regression_cumulative_plot_draws_the_walk_of_real_outcomes_with_its_scale_bar():
    Figure = pytest.importorskip("matplotlib.figure").Figure
    from mcal.plotting import plot_cumulative_differences

    ax = plot_cumulative_differences([1.0, 3.0, 2.0], [0.0, 1.0, 2.0], outcome="regression", ax=Figure().add_subplot())
    _zero, walk, bar = ax.get_lines()
    np.testing.assert_allclose(walk.get_ydata(), [0.0, 1 / 3, 1.0, 1.0], rtol=0, atol=1e-15)  # range 1 = ECCE
    sigma = mcal.metrics.ecce_std([1.0, 3.0, 2.0], [0.0, 1.0, 2.0], outcome="regression")
    np.testing.assert_allclose(np.ptp(bar.get_ydata()), 2.4977 * sigma, rtol=1e-4)  # 5 % range of Brownian motion
    assert ax.get_ylabel() == "cumulative difference (outcome - prediction)"
    with pytest.raises(ValueError, match="outcome must be 'classification' or 'regression'"):
        plot_cumulative_differences([1.0], [1.0], outcome="real", ax=Figure().add_subplot())
