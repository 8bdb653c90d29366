"""What the CLI tells a practitioner: fit summaries and seeds, plots with intervals and counts, the demo's advice."""

import json
import re

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
                 "job,noise", "--n-jobs", "1", "--quiet", "-o", str(out), *extra])  # fmt: skip


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


def test_fit_names_the_early_stopping_metric_that_chose_the_rounds(csv, tmp_path, capsys):
    assert _fit(csv, tmp_path / "m.json", "--param", "early_stopping_metric=mce") == 0
    out = capsys.readouterr().out
    model = mcal.load(tmp_path / "m.json")
    scores, losses, n = model.validation_scores_, model.validation_losses_, model.n_rounds_
    expected = (f"rounds: {n}; early stopping on the mce chose it: validation mce {scores[0]:.4f} before, "
                f"{scores[n]:.4f} after; log loss {losses[0]:.6f} before, {losses[n]:.6f} after")  # fmt: skip
    assert expected in out, out


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


def test_plot_calibration_counts_rows_and_a_lone_row_gets_a_long_interval():
    import matplotlib.pyplot as plt

    from mcal.metrics import reliability_curve, wilson_interval
    from mcal.plotting import plot_calibration

    # 9 rows below 0.5 and one row, a negative, at 0.95: its bin must not read as a trusted 0
    p = np.array([0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.3, 0.95])
    y = np.array([0, 0, 1, 0, 0, 1, 0, 0, 1, 0])
    top, bottom = plot_calibration(y, {"m": p}, n_bins=2)
    try:
        assert [int(b.get_height()) for b in bottom.patches] == reliability_curve(y, p, n_bins=2).count.tolist()
        assert [int(b.get_height()) for b in bottom.patches] == [9, 1]
        low, high = wilson_interval(0.0, 1.0, 0.95)
        segments = top.collections[0].get_segments()  # the error bars, one per bin
        assert segments[1][:, 1].tolist() == pytest.approx([low, high]) and high > 0.75
        assert bottom.get_xlabel().startswith("mean predicted probability") and top.get_ylabel()
    finally:
        plt.close(top.figure)


def test_evaluate_plot_has_intervals_and_counts(csv, tmp_path, capsys):
    out = tmp_path / "d.png"
    assert main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", "--plot", str(out),
                 "--strategy", "quantile"]) == 0  # fmt: skip
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_quantile_bins_hold_equal_rows(csv, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(csv), "--score-col", "p", "--label-col", "y", "--strategy", "quantile",
                 "--n-bins", "4", "-o", str(out)]) == 0  # fmt: skip
    html = out.read_text()
    rows = html.split('<table class="bins">', 1)[1].split("</table>", 1)[0]
    counts = [int(c.replace(",", "")) for c in re.findall(r'<tr><td>\[[^<]*</td><td class="num">([\d,]+)</td>', rows)]
    assert counts == [750, 750, 750, 750]
    assert "4 equal-weight (quantile) bins" in html


def test_demo_advice_names_the_best_method_from_its_numbers():
    from mcal.demo import BASE, advice

    table = pd.DataFrame({"log_loss": [0.30, 0.28, 0.29], "mce_sigma": [9.0, 2.5, 4.0]},
                         index=[BASE, "isotonic", "platt"])  # fmt: skip
    assert advice(table) == ("advice: isotonic lowers log loss from 0.3000 to 0.2800 and the worst segment's error "
                             "from 9.0 to 2.5 sigma; fit it on your own data with `mcal fit DATA --method isotonic ...`.")  # fmt: skip
    segments_worse = table.assign(mce_sigma=[3.5, 3.6, 4.0])  # the demo's --quick run with platt,isotonic
    assert advice(segments_worse) == (
        "advice: isotonic lowers log loss from 0.3000 to 0.2800, but not the worst segment's error (3.5 to 3.6 "
        "sigma); fit it on your own data with `mcal fit DATA --method isotonic ...`."
    )
    worse = table.assign(log_loss=[0.2, 0.28, 0.29])
    assert advice(worse).startswith("advice: no method beat the base model's log loss (0.2000")


def test_a_truncated_gzip_file_is_an_error_not_a_traceback(csv, tmp_path, capsys):
    import gzip

    data = gzip.compress(csv.read_bytes())
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(data[: len(data) // 2])
    assert main(["evaluate", str(cut), "--score-col", "p", "--label-col", "y"]) != 0
    err = capsys.readouterr().err
    assert "mcal: error: cannot read" in err and "truncated or corrupt" in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_repeated_column_names_are_refused_naming_them(tmp_path, capsys, kind):
    path = tmp_path / f"dup.{kind}"
    if kind == "csv":
        path.write_text("y,p,p\n0,0.1,0.9\n1,0.8,0.2\n")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table([[0, 1], [0.1, 0.8], [0.9, 0.2]], names=["y", "p", "p"]), path)
    assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y"]) != 0
    err = capsys.readouterr().err
    if kind == "csv":  # pandas had renamed the second p to p.1 and used the first silently
        assert "must name each column once; got ['p'] more than once" in err
    else:  # pyarrow refuses the schema itself
        assert err.startswith("mcal: error: cannot read") and "Traceback" not in err


@pytest.mark.parametrize("option", ["--segments", "--features", "--field"])
def test_nested_parquet_columns_are_refused_naming_the_column(tmp_path, capsys, option):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 40
    nested = pa.array([[k % 3, 1] for k in range(n)])
    table = pa.table({"y": [k % 2 for k in range(n)], "p": [0.2 + 0.6 * (k % 2) for k in range(n)], "tags": nested})
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path)
    if option == "--segments":
        args = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--segments", "tags"]
    else:
        method = "mcgrad" if option == "--features" else "mcnet"
        args = ["fit", str(path), "--score-col", "p", "--label-col", "y", "--method", method, option, "tags",
                "-o", str(tmp_path / "m.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err
    assert f"{option} 'tags' must hold one value per row; got nested values" in err


def test_fitting_on_constant_scores_warns_naming_the_column(tmp_path, capsys):
    path = tmp_path / "flat.csv"
    pd.DataFrame({"y": [0, 1] * 50, "p": [0.3] * 100}).to_csv(path, index=False)
    assert main(["fit", str(path), "--score-col", "p", "--label-col", "y", "--method", "platt",
                 "-o", str(tmp_path / "m.json")]) == 0  # fmt: skip
    assert "mcal: warning: score column 'p' is constant (0.3 on every row)" in capsys.readouterr().err


def test_report_refuses_classification_options_with_regression_and_a_bad_overlap(tmp_path, capsys):
    from mcal.report import make_report

    y, p = np.linspace(0, 1, 50), np.linspace(0, 1, 50) ** 2
    with pytest.raises(ValueError, match="strategy and max_overlap apply to binary labels"):
        make_report(y, {"m": p}, path=tmp_path / "r.html", outcome="regression", strategy="quantile")
    with pytest.raises(ValueError, match=r"max_overlap must be in \(0, 1\] or None; got 2"):
        make_report(y > 0.5, {"m": p}, path=tmp_path / "r.html", max_overlap=2)
    assert not (tmp_path / "r.html").exists()


def test_evaluate_prints_tiny_pvalues_as_below_the_floor_never_zero(rng, tmp_path, capsys):
    n = 20000
    job = rng.choice(["admin", "tech"], n)
    y = (rng.random(n) < 0.9).astype(int)  # scores of 0.1 for a 90 % rate: p-values underflow to 0
    path = tmp_path / "bad.csv"
    pd.DataFrame({"p": np.full(n, 0.1), "y": y, "job": job}).to_csv(path, index=False)
    main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--segments", "job"])
    rows = capsys.readouterr().out.splitlines()[2:]  # a row per metric, a column per score column
    cells = dict(re.split(r"(?<!<) +", row.strip(), maxsplit=1) for row in rows[: rows.index("") if "" in rows else None]
                 if row.split()[0].endswith("pvalue") or row.split()[0].endswith("adjusted"))  # fmt: skip
    assert cells["ecce_pvalue"] == cells["mce_pvalue"] == "< 1e-15", rows
    assert cells["mce_pvalue_adjusted"] == "< 3e-15", rows  # Holm over the 3 segments: all, job=admin, job=tech
    assert mcal.metrics.ecce_pvalue(y, np.full(n, 0.1)) < 1e-15  # what the "< 1e-15" stands for
    main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--segments", "job", "--json"])
    metrics = json.loads(capsys.readouterr().out)["metrics"]["p"]
    assert metrics["ecce_pvalue"] == 0.0 and metrics["mce_pvalue"] == 0.0  # JSON keeps floats


@pytest.mark.slow
def test_demo_figure_titles_clear_the_interval_note_and_the_panel_above(rng, tmp_path):
    from matplotlib.figure import Figure

    from mcal.demo import BASE, _write_outputs

    seen = {}

    def keep(fig, *args, **kwargs):  # the figure as saved, for its layout
        out = original(fig, *args, **kwargs)
        seen["fig"], seen["renderer"] = fig, fig.canvas.get_renderer()  # before pyplot closes it
        return out

    original = Figure.savefig
    p = rng.uniform(0.05, 0.6, 2000)
    y = (rng.random(2000) < p).astype(int)
    scores = {BASE: p, **{f"m{i}": np.clip(p * (0.8 + 0.1 * i), 0, 1) for i in range(6)}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", keep)
        _write_outputs(tmp_path, pd.DataFrame({"x": 0.0}, index=list(scores)), y, scores, {}, 0)
    fig = seen["fig"]
    renderer = seen["renderer"]
    tops = [ax for ax in fig.axes if ax.get_title()]
    assert len(tops) == 6 and (tmp_path / "reliability.png").stat().st_size > 0
    for ax in tops:  # the note is the legend's title, not a second title beside the panel's
        assert ax.get_title(loc="right") == "" and "Wilson" in ax.get_legend().get_title().get_text()
    titles = [ax.title.get_window_extent(renderer) for ax in tops]
    xlabels = [ax.xaxis.label.get_window_extent(renderer) for ax in fig.axes if ax.get_xlabel()]
    assert xlabels and not any(t.overlaps(x) for t in titles for x in xlabels)


def test_demo_names_its_methods_option_for_an_unknown_method(tmp_path, capsys):
    assert main(["demo", "--quick", "--methods", "platt,nope", "--output-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "mcal: error: --methods must name methods among " in err and err.rstrip().endswith("; got nope")
    assert not (tmp_path / "d").exists()
