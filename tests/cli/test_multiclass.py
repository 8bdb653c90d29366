"""``mcal fit/predict/evaluate`` with one probability column per class (``--score-cols``)."""

import json
import re

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal import load
from mcal.cli import main
from mcal.metrics import classwise_ece, classwise_mce, multiclass_log_loss, top_label_ece
from mcal.multiclass import MulticlassTemperatureScaling, OneVsRestCalibrator, VectorScaling
from mcal.segments import generate_segments

COLS = ["p_ant", "p_bee", "p_cat"]
ALL = ",".join(COLS)


@pytest.fixture(scope="module")
def frame(overconfident_k_classes):
    rng = np.random.default_rng(0)
    n = 2000
    p, y, seg = overconfident_k_classes(rng, n, 1.6, [0.8, 0.0, 0.0])  # and class ant under-predicted in the north
    df = pd.DataFrame(p, columns=COLS)
    names = np.array(["ant", "bee", "cat"])[y]
    return df.assign(p_rest=p[:, 1:].sum(axis=1), y=names, code=y, seg=seg, x=rng.normal(size=n))


@pytest.fixture
def csv(frame, tmp_path):
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    return path


def _fit(csv, model, *extra, cols=ALL, label="y"):
    return main(["fit", str(csv), "--score-cols", cols, "--label-col", label, *extra, "-o", str(model)])


def test_fit_saves_the_temperature_of_the_library_and_the_columns_with_their_classes(csv, frame, tmp_path):
    model = tmp_path / "m.json"
    assert _fit(csv, model, "--method", "temperature") == 0
    fitted, meta = load(model, return_metadata=True)
    expected = MulticlassTemperatureScaling().fit(frame[COLS].to_numpy(), frame["code"].to_numpy())
    assert fitted.temperature_ == pytest.approx(expected.temperature_, rel=1e-9)
    assert meta["score_cols"] == COLS and meta["classes"] == ["ant", "bee", "cat"]


def test_class_names_map_to_the_columns_they_end_whatever_the_column_order(csv, frame, tmp_path, capsys):
    model = tmp_path / "m.json"
    shuffled = "p_cat,p_ant,p_bee"
    assert _fit(csv, model, "--method", "vector", cols=shuffled) == 0
    assert "cat -> p_cat, ant -> p_ant, bee -> p_bee" in capsys.readouterr().out
    codes = frame["y"].map({"cat": 0, "ant": 1, "bee": 2}).to_numpy()
    expected = VectorScaling().fit(frame[["p_cat", "p_ant", "p_bee"]].to_numpy(), codes)
    np.testing.assert_allclose(load(model).coef_, expected.coef_, rtol=1e-6, atol=1e-9)


def test_integer_labels_are_column_positions(csv, frame, tmp_path):
    model = tmp_path / "m.json"
    assert _fit(csv, model, "--method", "temperature", label="code") == 0
    by_name = tmp_path / "n.json"
    assert _fit(csv, by_name, "--method", "temperature") == 0
    assert load(model).temperature_ == pytest.approx(load(by_name).temperature_, rel=1e-12)
    assert load(model, return_metadata=True)[1]["classes"] == [0, 1, 2]


def test_names_that_end_no_column_are_matched_in_sorted_order(frame, tmp_path, capsys):
    path = tmp_path / "s.csv"
    frame.rename(columns=dict(zip(COLS, ["s0", "s1", "s2"], strict=True))).to_csv(path, index=False)
    assert _fit(path, tmp_path / "m.json", "--method", "temperature", cols="s0,s1,s2") == 0
    assert "ant -> s0, bee -> s1, cat -> s2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("cols", "label", "message"),
    [
        (
            "p_ant,p_rest",
            "y",
            r"got labels \['ant', 'bee', 'cat'\] and the columns \['p_ant', 'p_rest'\]: "
            r"\['bee', 'cat'\] end no column's name",
        ),
        (
            "p_ant,p_bee,p_cat",
            "seg",
            r"got labels \['north', 'south'\] and the columns \['p_ant', 'p_bee', "
            r"'p_cat'\]: 2 class names for 3 columns",
        ),
        (
            "p_ant",
            "y",
            r"--score-cols must name at least 2 columns \(one per class\) or a prefix of at least 2 columns of "
            r"DATA; got 'p_ant'\n",
        ),
        ("p_ant,p_ant,p_cat", "y", r"--score-cols must name each entry once; got \['p_ant'\]"),
        ("p_ant,p_bee,x", "code", r"score columns \['p_ant', 'p_bee', 'x'\] must"),
        ("p_ant,p_bee,nope", "y", "--score-cols 'nope' is not a column of DATA"),
    ],
)
def test_labels_or_columns_that_do_not_match_fail_naming_both_and_write_nothing(csv, tmp_path, capsys, cols, label,
                                                                                 message):  # fmt: skip
    model = tmp_path / "m.json"
    assert _fit(csv, model, "--method", "temperature", cols=cols, label=label) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcal: error: ") and __import__("re").search(message, err), err
    assert not model.exists()


def test_a_binary_method_with_score_cols_and_a_multiclass_one_with_score_col_fail_naming_the_fix(csv, tmp_path,
                                                                                                   capsys):  # fmt: skip
    assert _fit(csv, tmp_path / "m.json", "--method", "isotonic") == 2
    assert "got 'isotonic', a method for one score column" in capsys.readouterr().err
    args = ["fit", str(csv), "--score-col", "p_ant", "--label-col", "y", "--method", "dirichlet", "-o", "m.json"]
    assert main(args) == 2
    assert "--method dirichlet is a method for k classes: it needs --score-cols" in capsys.readouterr().err


def test_score_col_and_score_cols_together_are_a_usage_error(csv):
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(csv), "--score-col", "p_ant", "--score-cols", "p_ant,p_bee", "--label-col", "y",
              "--method", "temperature", "-o", "m.json"])  # fmt: skip
    assert exc.value.code == 2


def test_predict_writes_one_calibrated_column_per_class_on_the_simplex(csv, frame, tmp_path):
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
    assert _fit(csv, model, "--method", "ovr-platt") == 0
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 0
    written = pd.read_csv(out)
    calibrated = written[[f"{c}_calibrated" for c in COLS]].to_numpy()
    np.testing.assert_allclose(calibrated.sum(axis=1), 1.0, atol=1e-9)
    expected = OneVsRestCalibrator(mcal.PlattScaling()).fit(frame[COLS].to_numpy(), frame["code"].to_numpy())
    np.testing.assert_allclose(calibrated, expected.predict(frame[COLS].to_numpy()), atol=1e-9)


def test_predict_refuses_binary_options_and_column_clashes(csv, frame, tmp_path, capsys):
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
    assert _fit(csv, model, "--method", "temperature") == 0
    assert main(["predict", str(model), str(csv), "--score-col", "p_ant", "-o", str(out)]) == 2
    assert "--score-col applies to a binary model" in capsys.readouterr().err
    assert main(["predict", str(model), str(csv), "--score-cols", "p_ant,p_bee", "-o", str(out)]) == 2
    assert "--score-cols must name the model's 3 class columns; got 2" in capsys.readouterr().err
    clash = tmp_path / "clash.csv"
    frame.assign(p_ant_calibrated=0.0).to_csv(clash, index=False)
    assert main(["predict", str(model), str(clash), "-o", str(out)]) == 2
    assert "already has the column(s) ['p_ant_calibrated']" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow
def test_mcgrad_with_features_lowers_the_worst_class_mce(csv, frame, tmp_path):
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
    assert _fit(csv, model, "--method", "mcgrad", "--features", "seg,x", "--param", "max_rounds=3",
                "--n-jobs", "1") == 0  # fmt: skip
    assert mcal.load(model).n_jobs == 1
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 0
    written = pd.read_csv(out)
    segs = generate_segments(frame[["seg", "x"]])
    before = classwise_mce(frame["code"], frame[COLS].to_numpy(), segments=segs).mce_sigma
    after = classwise_mce(frame["code"], written[[f"{c}_calibrated" for c in COLS]].to_numpy(), segments=segs)
    assert after.mce_sigma < before / 2


def test_features_with_a_method_that_reads_only_scores_fail(csv, tmp_path, capsys):
    assert _fit(csv, tmp_path / "m.json", "--method", "ovr-isotonic", "--features", "x") == 2
    assert "method 'ovr-isotonic' uses only the scores; drop --features" in capsys.readouterr().err


def test_evaluate_json_holds_the_library_metrics_and_the_classwise_mce(csv, frame, capsys):
    args = ["evaluate", str(csv), "--score-cols", ",".join(COLS), "--label-col", "y", "--segments", "seg,x",
            "--n-bins", "15", "--json"]  # fmt: skip
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    P, y = frame[COLS].to_numpy(), frame["code"].to_numpy()
    row = out["metrics"][",".join(COLS)]
    assert row["log_loss"] == pytest.approx(multiclass_log_loss(y, P), rel=1e-12)
    assert row["top_label_ece"] == pytest.approx(top_label_ece(y, P, n_bins=15), rel=1e-12)
    assert row["classwise_ece"] == pytest.approx(classwise_ece(y, P, n_bins=15), rel=1e-12)
    expected = classwise_mce(y, P, segments=generate_segments(frame[["seg", "x"]]))
    mce = out["mce"][",".join(COLS)]
    assert mce["worst_class"] == "ant"  # the class planted in the north
    assert mce["classwise_mce_sigma"]["ant"] == pytest.approx(expected.per_class[0].mce_sigma, rel=1e-12)
    assert row["classwise_mce_sigma"] == pytest.approx(expected.mce_sigma, rel=1e-12)


def test_evaluate_compares_column_sets_and_prints_the_worst_class(csv, tmp_path, capsys):
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
    assert _fit(csv, model, "--method", "temperature") == 0
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 0
    capsys.readouterr()
    calibrated = ",".join(f"{c}_calibrated" for c in COLS)
    assert main(["evaluate", str(out), "--score-cols", ",".join(COLS), "--score-cols", calibrated, "--label-col",
                 "y", "--segments", "seg"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "3 classes: ant -> p_ant, bee -> p_bee, cat -> p_cat" in text
    assert f"{calibrated}: worst class" in text and "classwise MCE" in text
    # issue 32: a row per metric and a column per set, within the terminal's 80 characters (no COLUMNS: piped)
    assert max(len(line) for line in text.splitlines()) <= 80
    lines = text.splitlines()
    assert lines[1].split()[0] == ",".join(COLS) and lines[2].split()[0] == "log_loss"
    assert [calibrated] in [line.split() for line in lines[3:]]  # the second set in a block of its own


@pytest.mark.parametrize(
    ("extra", "option"),
    [(["--plot", "x.png"], "--plot"), (["--pos-label", "ant"], "--pos-label"), (["--ci"], "--ci"),
     (["--field", "seg"], "--field")],
)  # fmt: skip
def test_evaluate_refuses_the_options_of_one_score_column(csv, capsys, extra, option):
    assert main(["evaluate", str(csv), "--score-cols", ",".join(COLS), "--label-col", "y", *extra]) == 2
    assert f"mcal: error: {option} applies to a single score column (--score-col), not to --score-cols" in (
        capsys.readouterr().err
    )


def test_evaluate_refuses_column_sets_of_different_sizes(csv, capsys):
    args = ["evaluate", str(csv), "--score-cols", ",".join(COLS), "--score-cols", "p_ant,p_bee", "--label-col", "y"]
    assert main(args) == 2
    assert "--score-cols must name the same number of columns (classes) each time; got [3, 2]" in (
        capsys.readouterr().err
    )


def test_help_documents_score_cols_with_an_example_and_the_label_rule(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--score-cols p_ant,p_bee,p_cat" in text and "integers 0..k-1" in text and "sorted order" in text


def test_the_binary_path_is_unchanged(csv, frame, tmp_path):
    binary = tmp_path / "b.csv"
    frame.assign(y01=(frame["code"] == 0).astype(int)).to_csv(binary, index=False)
    model = tmp_path / "m.json"
    assert main(["fit", str(binary), "--score-col", "p_ant", "--label-col", "y01", "--method", "platt", "-o",
                 str(model)]) == 0  # fmt: skip
    assert load(model, return_metadata=True)[1]["score_col"] == "p_ant"


def test_a_column_no_label_names_is_a_class_absent_from_the_data(frame, tmp_path, capsys):
    path = tmp_path / "two.csv"
    frame[frame["y"] != "cat"].to_csv(path, index=False)
    model = tmp_path / "m.json"
    assert _fit(path, model, "--method", "temperature") == 0
    assert "ant -> p_ant, bee -> p_bee, (absent) -> p_cat" in capsys.readouterr().out
    assert load(model, return_metadata=True)[1]["classes"] == ["ant", "bee", None]


def test_evaluate_weights_the_metrics_as_the_library_does(frame, tmp_path, capsys):
    w = np.random.default_rng(1).integers(0, 4, len(frame)).astype(float)
    path = tmp_path / "w.csv"
    frame.assign(w=w).to_csv(path, index=False)
    assert main(["evaluate", str(path), "--score-cols", ALL, "--label-col", "y", "--weight-col", "w", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["metrics"][ALL]
    expected = multiclass_log_loss(frame["code"], frame[COLS].to_numpy(), sample_weight=w)
    assert row["log_loss"] == pytest.approx(expected, rel=1e-12)
    assert row["log_loss"] != pytest.approx(multiclass_log_loss(frame["code"], frame[COLS].to_numpy()), rel=1e-6)


def test_one_vs_rest_around_a_field_method_reads_its_field(csv, frame, tmp_path):
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
    assert _fit(csv, model, "--method", "ovr-per-field-isotonic", "--field", "seg", label="code") == 0
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 0
    written = pd.read_csv(out)[[f"{c}_calibrated" for c in COLS]].to_numpy()
    ref = OneVsRestCalibrator(mcal.PerFieldCalibrator(field="seg"))
    ref.fit(frame[COLS].to_numpy(), frame["code"], X=frame[["seg"]])
    np.testing.assert_allclose(written, ref.predict(frame[COLS].to_numpy(), X=frame[["seg"]]), atol=1e-12)


@pytest.mark.parametrize(
    ("method", "extra", "message"),
    [
        ("ovr-neucalib", [], "method 'ovr-neucalib' needs --field COL, the field (context) column; got no --field"),
        ("ovr-isotonic", ["--field", "seg"], "--field is not used by method 'ovr-isotonic'"),
        ("temperature", ["--field", "seg"], "--field applies to a single score column (--score-col)"),
    ],
)
def test_field_with_score_cols_only_for_one_vs_rest_around_a_field_method(csv, tmp_path, capsys, method, extra,
                                                                          message):  # fmt: skip
    assert _fit(csv, tmp_path / "m.json", "--method", method, *extra) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_one_vs_rest_names_a_parameter_its_binary_method_does_not_take(csv, tmp_path, capsys):
    assert _fit(csv, tmp_path / "m.json", "--method", "ovr-platt", "--param", "foo=1") == 2
    assert "--param ['foo'] not accepted by ovr-platt; its parameters are [" in capsys.readouterr().err


def test_a_prefix_names_the_columns_that_start_with_it_in_file_order(frame, tmp_path, capsys):
    path = tmp_path / "scores.csv"
    frame[[*COLS, "y"]].to_csv(path, index=False)
    assert _fit(path, tmp_path / "a.json", "--method", "vector", cols="p_") == 0
    assert _fit(path, tmp_path / "b.json", "--method", "vector") == 0
    a, b = load(tmp_path / "a.json", return_metadata=True), load(tmp_path / "b.json", return_metadata=True)
    assert a[1]["score_cols"] == COLS and a[1]["classes"] == b[1]["classes"]
    np.testing.assert_array_equal(a[0].coef_, b[0].coef_)
    assert (
        main(["predict", str(tmp_path / "a.json"), str(path), "--score-cols", "p_", "-o", str(tmp_path / "o.csv")]) == 0
    )
    capsys.readouterr()
    assert main(["evaluate", str(path), "--score-cols", "p_", "--label-col", "y", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["metrics"]) == [ALL]


@pytest.mark.parametrize(("cols", "got"), [("p_a", "got 'p_a', the start of 1 column: ['p_ant']"),
                                           ("q_", "got 'q_', the start of 0 columns: []")])  # fmt: skip
def test_a_prefix_of_fewer_than_two_columns_fails(csv, tmp_path, capsys, cols, got):
    assert _fit(csv, tmp_path / "m.json", "--method", "temperature", cols=cols) == 2
    err = capsys.readouterr().err
    assert "--score-cols must name at least 2 columns (one per class) or a prefix of at least 2 columns" in err
    assert got in err and not (tmp_path / "m.json").exists()


def test_logit_columns_with_input_logit_fit_and_predict_as_the_library(frame, tmp_path):
    path, model, out = tmp_path / "logits.csv", tmp_path / "m.json", tmp_path / "out.csv"
    z = np.log(frame[COLS].to_numpy()) * 1.3 + 0.2
    pd.DataFrame(z, columns=COLS).assign(y=frame["y"]).to_csv(path, index=False)
    assert _fit(path, model, "--method", "temperature", "--param", "input=logit") == 0
    assert main(["predict", str(model), str(path), "-o", str(out)]) == 0
    ref = MulticlassTemperatureScaling(input="logit").fit(z, frame["y"])
    written = pd.read_csv(out)[[f"{c}_calibrated" for c in COLS]].to_numpy()
    np.testing.assert_allclose(written, ref.predict(z), atol=1e-12)


def test_evaluate_and_report_list_every_value_per_class_one_against_the_rest(csv, frame, tmp_path, capsys):
    # issue 32: --score-cols left out the per-value table of --segments
    from mcal.metrics import mce

    assert main(["evaluate", str(csv), "--score-cols", ALL, "--label-col", "y", "--segments", "seg,x", "--json"]) == 0
    per_value = json.loads(capsys.readouterr().out)["per_value"]
    assert list(per_value["rows"]) == ["ant", "bee", "cat"]
    for j, label in enumerate(["ant", "bee", "cat"]):
        rows = {row["description"]: row for row in per_value["rows"][label]}
        assert {"seg=north", "seg=south"} <= set(rows)
        north = (frame["seg"] == "north").to_numpy()
        expected = mce((frame["code"].to_numpy() == j)[north], frame[COLS[j]].to_numpy()[north]).mce_sigma
        assert rows["seg=north"]["ecce_sigma"] == pytest.approx(expected, rel=1e-9)
    ant = {row["description"]: row for row in per_value["rows"]["ant"]}
    assert ant["seg=north"]["direction"] == "under" and ant["seg=north"]["pvalue_adjusted"] < 1e-6
    assert main(["evaluate", str(csv), "--score-cols", ALL, "--label-col", "y", "--segments", "seg"]) == 0
    assert "per value (one class against the rest, every value with >= 10 rows" in capsys.readouterr().out
    out = tmp_path / "report.html"
    assert main(["report", str(csv), "--score-cols", ALL, "--label-col", "y", "--segments", "seg", "-o",
                 str(out)]) == 0  # fmt: skip
    section = out.read_text().split('<section id="values">', 1)[1].split("</section>", 1)[0]
    assert all(f'<th colspan="2">{label}</th>' in section for label in ["ant", "bee", "cat"])
    assert "<td>seg=north</td>" in section and "<td>seg=south</td>" in section


@pytest.mark.parametrize("columns", ["70", "250"])
def test_evaluate_prints_each_class_observed_rate_in_the_per_value_table(csv, frame, capsys, monkeypatch, columns):
    # the observed rate of a value is one per class (one against the rest); the table printed the first class's
    # once per value, beside every class's mean score (stacked) or once for all classes (wide)
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["evaluate", str(csv), "--score-cols", ALL, "--label-col", "y", "--segments", "seg"]) == 0
    printed = capsys.readouterr().out.split("\nper value (", 1)[1]
    north = frame["code"].to_numpy()[(frame["seg"] == "north").to_numpy()]
    rates = [f"{np.mean(north == j):.4g}" for j in range(3)]
    line = next(line for line in printed.splitlines() if "seg=north" in line)
    if columns == "250":  # one row per value: each class's observed rate in its column group
        assert all(f" {rate} " in line for rate in rates)
        assert line.index(rates[0]) < line.index(rates[1]) < line.index(rates[2])
    else:  # a line per value, a line per class beneath it: the observed rate first
        shown = re.findall(r"(?m)^ +(?:ant|bee|cat) +(\S+)", printed.split(line, 1)[1])
        assert "observed" not in line and shown[:3] == rates
