"""``mcal fit`` is reproducible by default and says what it chose; MCGrad's importances by feature name."""

import json

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal.cli import main


@pytest.fixture
def csv(rng, tmp_path):
    n = 3000
    job = rng.choice(["admin", "tech", "services"], n)
    p = rng.uniform(0.1, 0.9, n)
    y = (rng.random(n) < np.where(job == "admin", np.clip(p + 0.2, 0, 1), p)).astype(int)
    path = tmp_path / "train.csv"
    pd.DataFrame({"p": p, "y": y, "job": job, "noise": rng.normal(size=n)}).to_csv(path, index=False)
    return path


def _fit(csv, out, *extra):
    return main(["fit", str(csv), "--score-col", "p", "--label-col", "y", "--method", "mcgrad", "--features",
                 "job,noise", "--param", "n_jobs=1", "--quiet", "-o", str(out), *extra])  # fmt: skip


def test_two_fits_without_a_seed_are_identical_and_record_the_default_seed(csv, tmp_path, capsys):
    assert _fit(csv, tmp_path / "a.json") == 0 and _fit(csv, tmp_path / "b.json") == 0
    out = capsys.readouterr().out
    assert "random_state 0 (the default" in out
    a, b = mcal.load(tmp_path / "a.json"), mcal.load(tmp_path / "b.json")
    assert a.random_state == b.random_state == 0
    assert json.loads((tmp_path / "a.json").read_text())["model"]["params"]["random_state"] == 0
    frame = pd.read_csv(csv)
    np.testing.assert_array_equal(a.predict(frame["p"], X=frame[["job", "noise"]]),
                                  b.predict(frame["p"], X=frame[["job", "noise"]]))  # fmt: skip


def test_fit_prints_rounds_validation_loss_and_top_features_by_name(csv, tmp_path, capsys):
    assert _fit(csv, tmp_path / "m.json", "--random-state", "4") == 0
    out = capsys.readouterr().out
    model = mcal.load(tmp_path / "m.json")
    losses = model.validation_losses_
    assert "random_state 4, recorded" in out and "the default" not in out
    expected = (f"rounds: {model.n_rounds_}; early stopping chose it: validation log loss {losses[0]:.6f} before, "
                f"{losses[model.n_rounds_]:.6f} after")  # fmt: skip
    assert expected in out and model.n_rounds_ >= 1
    top = out.split("top features by split gain: ", 1)[1].splitlines()[0]
    assert top.split()[0] == "job"  # the miscalibrated segment is a job, not the noise column


def test_feature_importance_names_the_importances(rng):
    X = pd.DataFrame({"a": rng.normal(size=2000), "b": rng.choice(["u", "v"], 2000)})
    p = rng.uniform(0.1, 0.9, 2000)
    y = (rng.random(2000) < np.where(X["b"] == "u", p * 0.5, p)).astype(int)
    model = mcal.MCGrad(n_jobs=1, random_state=0, min_child_samples=20).fit(p, y, X=X)
    table = model.feature_importance()
    assert set(table.index) == {"a", "b", "score"} and table.index[0] == "b"
    assert table["b"] == model.feature_importances_[1] and table["score"] == model.feature_importances_[-1]
    unnamed = mcal.MCGrad(n_jobs=1, random_state=0, min_child_samples=20).fit(p, y, X=X.assign(b=X["b"] == "u")
                                                                             .to_numpy(dtype=float))  # fmt: skip
    assert set(unnamed.feature_importance().index) == {"x0", "x1", "score"}
