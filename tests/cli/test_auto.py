"""``mcal fit --method auto``, ``mcal evaluate --compare-methods`` and ``mcal report --compare-methods``."""

import json

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal.cli import main
from mcal.selection import select_calibrator


@pytest.fixture(scope="module")
def distorted(tmp_path_factory):
    """Scores too high on group ``a`` only (a segment bias), and a numeric feature that does not matter."""
    rng = np.random.default_rng(0)
    n = 2000
    p = rng.uniform(0.02, 0.98, n)
    g = rng.choice(["a", "b", "c"], n)
    y = (rng.uniform(size=n) < np.where(g == "a", p**2, p)).astype(int)
    df = pd.DataFrame({"p": p, "y": y, "g": g, "x": rng.normal(size=n)})
    path = tmp_path_factory.mktemp("auto") / "d.csv"
    df.to_csv(path, index=False)
    return path, df


def test_fit_auto_prints_the_table_and_saves_the_choice_with_the_comparison(distorted, tmp_path, capsys, monkeypatch):
    path, df = distorted
    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / "m.json"
    args = ["fit", str(path), "--score-col", "p", "--label-col", "y", "--method", "auto", "-o", str(out),
            "--candidates", "identity,platt,isotonic"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    expected = select_calibrator(df["p"], df["y"], candidates=["identity", "platt", "isotonic"], random_state=0)
    assert f"* chosen: {expected.chosen}" in printed and "wrote" in printed
    table = printed.split("wrote")[0]  # the line that names the file may be longer
    assert all(len(line) <= 80 for line in table.splitlines()), printed
    model, meta = mcal.load(out, return_metadata=True)
    assert meta["method"] == expected.chosen != "identity" and meta["method_requested"] == "auto"
    assert list(meta["selection"]["table"]) == ["identity", "platt", "isotonic"]
    assert meta["selection"]["table"][expected.chosen]["chosen"] is True
    assert meta["selection"]["table"]["identity"]["log_loss"] == pytest.approx(
        expected.table.loc["identity", "log_loss"]
    )
    np.testing.assert_allclose(model.predict(df["p"]), expected.calibrator.predict(df["p"]), rtol=0, atol=1e-12)


def test_fit_auto_with_features_chooses_mcgrad_and_the_model_predicts_from_the_file(distorted, tmp_path, capsys):
    path, df = distorted
    out, pred = tmp_path / "m.json", tmp_path / "pred.csv"
    args = ["fit", str(path), "--score-col", "p", "--label-col", "y", "--method", "auto", "--features", "g,x",
            "--candidates", "identity,isotonic,mcgrad", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    model, meta = mcal.load(out, return_metadata=True)
    assert isinstance(model, mcal.MCGrad) and meta["method"] == "mcgrad" and meta["features"] == ["g", "x"]
    assert main(["predict", str(out), str(path), "-o", str(pred)]) == 0
    written = pd.read_csv(pred)["p_calibrated"].to_numpy()
    np.testing.assert_allclose(written, model.predict(df["p"], X=df[["g", "x"]]), rtol=1e-12)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "auto", "--candidates", "identity,nope"], "--candidates must be names among ['identity'"),
        (["--method", "auto", "--param", "n_bins=5"], "--param applies to one method; got --param with --method auto"),
        (["--method", "platt", "--candidates", "identity,platt"], "--candidates needs --method auto"),
    ],
)
def test_fit_auto_refuses_bad_options_and_writes_nothing(distorted, tmp_path, capsys, extra, message):
    path, _ = distorted
    out = tmp_path / "m.json"
    assert main(["fit", str(path), "--score-col", "p", "--label-col", "y", "-o", str(out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_fit_auto_with_k_score_columns_or_candidates_without_auto_is_refused_naming_the_options(distorted, tmp_path,
                                                                                              capsys):  # fmt: skip
    path, _ = distorted
    out = tmp_path / "m.json"
    common = ["fit", str(path), "--label-col", "y", "-o", str(out), "--score-cols", "p,x"]
    assert main([*common, "--method", "auto"]) == 2
    err = capsys.readouterr().err
    assert "--method auto compares the methods of one score column (--score-col); got --score-cols p,x" in err
    assert "name one of dirichlet, matrix" in err
    assert main([*common, "--method", "dirichlet", "--candidates", "identity,platt"]) == 2
    assert "--candidates needs --method auto" in capsys.readouterr().err
    assert not out.exists()


def test_the_comparison_is_as_wide_as_the_terminal_says_as_the_rest_of_the_output(distorted, tmp_path, capsys,
                                                                                  monkeypatch):  # fmt: skip
    path, _ = distorted
    monkeypatch.setenv("COLUMNS", "56")
    args = ["fit", str(path), "--score-col", "p", "--label-col", "y", "--method", "auto", "-o", str(tmp_path / "m.json"),
            "--candidates", "identity,platt"]  # fmt: skip
    assert main(args) == 0
    table = capsys.readouterr().out.split("wrote")[0]
    assert max(len(line) for line in table.splitlines()) <= 56, table


def test_evaluate_compare_methods_prints_the_table_and_json_holds_it(distorted, capsys):
    path, df = distorted
    base = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--compare-methods", "--segments", "g"]
    assert main([*base, "--candidates", "identity,platt"]) == 0
    printed = capsys.readouterr().out
    assert "methods compared on 2000 rows" in printed and "* chosen: platt" in printed
    assert main([*base, "--candidates", "identity,platt", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["method_comparison"]
    expected = select_calibrator(df["p"], df["y"], X=df[["g"]], candidates=["identity", "platt"], random_state=0)
    assert data["chosen"] == expected.chosen and data["n_segments"] == expected.n_segments > 1
    assert data["table"]["platt"]["mce_sigma"] == pytest.approx(expected.table.loc["platt", "mce_sigma"])


def test_compare_methods_refuses_several_score_columns_and_candidates_without_it(distorted, capsys):
    path, _ = distorted
    base = ["evaluate", str(path), "--label-col", "y", "--score-col", "p"]
    assert main([*base, "--score-col", "x", "--compare-methods"]) == 2
    assert "--compare-methods calibrates one score column; got 2" in capsys.readouterr().err
    assert main([*base, "--candidates", "identity,platt"]) == 2
    assert "--candidates needs --compare-methods" in capsys.readouterr().err


@pytest.mark.slow
def test_report_compare_methods_adds_the_comparison_section(distorted, tmp_path, capsys):
    path, _ = distorted
    out = tmp_path / "r.html"
    args = ["report", str(path), "--score-col", "p", "--label-col", "y", "--compare-methods",
            "--candidates", "identity,platt", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    html = out.read_text(encoding="utf-8")
    assert '<section id="methods">' in html and 'data-method="platt" class="best"' in html
    assert main(["report", str(path), "--score-col", "p", "--label-col", "y", "-o", str(out)]) == 0
    assert '<section id="methods">' not in out.read_text(encoding="utf-8")
