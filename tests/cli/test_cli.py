"""The command line, through its entry point, on temporary CSV and Parquet files."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

import mcal
from mcal.cli import main


@pytest.fixture
def table(rng):
    p = rng.uniform(0.01, 0.99, 3000)
    y = rng.uniform(size=p.size) < expit(0.5 * logit(p) + 0.2)
    return pd.DataFrame(
        {"p": p, "y": np.where(y, "yes", "no"), "w": rng.uniform(0.5, 2, p.size), "f": rng.integers(0, 3, p.size)}
    )


@pytest.fixture
def csv(table, tmp_path):
    path = tmp_path / "scores.csv"
    table.to_csv(path, index=False)
    return path


def test_fit_predict_evaluate_round_trip(csv, tmp_path, capsys):
    model = tmp_path / "model.json"
    assert (
        main(
            [
                "fit",
                str(csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--weight-col",
                "w",
                "--method",
                "platt",
                "-o",
                str(model),
            ]
        )
        == 0
    )
    out = tmp_path / "out.parquet"
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 0
    df = pd.read_parquet(out)
    cal = mcal.load(model)
    np.testing.assert_allclose(df["p_calibrated"], cal.predict(df["p"].to_numpy()))
    capsys.readouterr()
    assert (
        main(
            [
                "evaluate",
                str(out),
                "--score-col",
                "p",
                "--score-col",
                "p_calibrated",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--field",
                "f",
                "--json",
            ]
        )
        == 0
    )
    res = json.loads(capsys.readouterr().out)
    assert set(res["metrics"]) == {"p", "p_calibrated"}
    assert res["metrics"]["p_calibrated"]["log_loss"] < res["metrics"]["p"]["log_loss"]
    assert "f_rce" in res["metrics"]["p"]


def test_evaluate_prints_a_table_and_writes_a_plot(csv, tmp_path, capsys):
    png = tmp_path / "d.png"
    assert (
        main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", "--pos-label", "yes", "--plot", str(png)])
        == 0
    )
    out = capsys.readouterr().out
    assert "log_loss" in out and "ecce_pvalue" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_text_labels_without_pos_label_fail_clearly(csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["fit", str(csv), "--score-col", "p", "--label-col", "y", "--method", "platt", "-o", str(model)]) == 2
    assert "--pos-label" in capsys.readouterr().err
    assert not model.exists()


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.assign(p=d["p"].where(d.index != 5, np.nan)), "finite"),
        (lambda d: d.assign(p=d["p"] + 1), r"[0, 1]"),
        (lambda d: d.assign(y="maybe"), "binary"),  # with --pos-label yes every row is negative: one class
        (lambda d: d.drop(columns="p"), "'p' is not a column"),
        (lambda d: d.iloc[:0], "no rows"),
    ],
)
def test_bad_data_fails_with_message_and_no_output(table, tmp_path, capsys, mutate, message):
    bad = tmp_path / "bad.csv"
    mutate(table).to_csv(bad, index=False)
    model = tmp_path / "m.json"
    code = main(
        [
            "fit",
            str(bad),
            "--score-col",
            "p",
            "--label-col",
            "y",
            "--pos-label",
            "yes",
            "--method",
            "isotonic",
            "-o",
            str(model),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("mcal: error:")
    assert message in err or (message == "binary" and "both classes" in err)
    assert not model.exists()


def test_a_pos_label_that_is_not_a_label_fails_naming_the_labels(csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    code = main(
        [
            "fit",
            str(csv),
            "--score-col",
            "p",
            "--label-col",
            "y",
            "--pos-label",
            "Yes",
            "--method",
            "platt",
            "-o",
            str(model),
        ]
    )
    assert code == 2 and not model.exists()
    # issue 32 item 9: the option is named as the command line spells it, not as the Python argument pos_label
    assert ("mcal: error: --pos-label must be one of the labels of label column 'y' ['no', 'yes']; got 'Yes'"
            in capsys.readouterr().err)  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        [
            "fit",
            "{csv}",
            "--score-col",
            "p",
            "--label-col",
            "y",
            "--pos-label",
            "yes",
            "--method",
            "platt",
            "-o",
            "{out}",
        ],
        ["predict", "{model}", "{csv}", "-o", "{out}"],
        ["evaluate", "{csv}", "--score-col", "p", "--label-col", "y", "--pos-label", "yes", "--plot", "{out}"],
        ["report", "{csv}", "--score-col", "p", "--label-col", "y", "--pos-label", "yes", "-o", "{out}"],
    ],
    ids=["fit", "predict", "evaluate", "report"],
)
def test_an_output_in_a_missing_folder_fails_naming_the_option_and_writes_nothing(csv, tmp_path, capsys, command):
    model = tmp_path / "m.json"
    mcal.save(mcal.PlattScaling(), model)
    before = sorted(tmp_path.iterdir())
    out = tmp_path / "missing" / "out.csv"
    assert main([a.format(csv=csv, model=model, out=out) for a in command]) == 2
    err = capsys.readouterr().err
    option = "--plot" if command[0] == "evaluate" else "-o/--output"
    assert f"{option} must be a file in an existing folder; got '{out}'" in err
    assert sorted(tmp_path.iterdir()) == before


def test_bad_weights_are_reported_under_the_weight_column_name(table, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    table.assign(w=table["w"].where(table.index != 7, -1.0)).to_csv(bad, index=False)
    model = tmp_path / "m.json"
    assert (
        main(
            [
                "fit",
                str(bad),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--weight-col",
                "w",
                "--method",
                "platt",
                "-o",
                str(model),
            ]
        )
        == 2
    )
    assert f"weight column 'w' must be non-negative; got -1 on line 9 of {bad}" in capsys.readouterr().err
    assert not model.exists()


@pytest.fixture
def field_model(csv, tmp_path):
    """A per-field isotonic model on the field column f, fitted through the command line."""
    model = tmp_path / "field_model.json"
    assert (
        main(
            [
                "fit",
                str(csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--method",
                "per-field-isotonic",
                "--field",
                "f",
                "-o",
                str(model),
            ]
        )
        == 0
    )
    return model


def test_predict_names_a_column_the_model_needs_that_data_lacks(field_model, table, tmp_path, capsys):
    model, out, lacking = field_model, tmp_path / "o.csv", tmp_path / "lacking.csv"
    table.drop(columns="f").to_csv(lacking, index=False)
    assert main(["predict", str(model), str(lacking), "-o", str(out)]) == 2
    assert (
        "the model was fitted with --features/--field; its column 'f' is not a column of DATA"
        in capsys.readouterr().err
    )
    assert not out.exists()


@pytest.mark.parametrize("command", [["evaluate"], ["report", "-o", "{out}"]], ids=["evaluate", "report"])
def test_a_score_column_named_twice_is_rejected(csv, tmp_path, capsys, command):
    out = tmp_path / "r.html"
    args = [command[0], str(csv), "--score-col", "p", "--score-col", "p", "--label-col", "y", "--pos-label", "yes"]
    assert main(args + [a.format(out=out) for a in command[1:]]) == 2
    assert "--score-col must name each column once; got ['p'] more than once" in capsys.readouterr().err
    assert not out.exists()


def test_warnings_are_printed_as_messages_without_source_lines(field_model, table, tmp_path, capsys):
    model, unseen, out = field_model, tmp_path / "unseen.csv", tmp_path / "o.csv"
    table.assign(f=7).to_csv(unseen, index=False)
    capsys.readouterr()
    assert main(["predict", str(model), str(unseen), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("mcal: warning: X['f'] has 3000 row(s) with 1 value(s) unseen at fit time")
    assert ".py:" not in err and "CalibrationWarning" not in err


def test_predict_with_a_missing_model_file_names_it(csv, tmp_path, capsys):
    out = tmp_path / "o.csv"
    assert main(["predict", str(tmp_path / "absent.json"), str(csv), "-o", str(out)]) == 2
    assert f"model file '{tmp_path / 'absent.json'}' does not exist" in capsys.readouterr().err
    assert not out.exists()


def test_predict_with_corrupt_model_fails_without_output(csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    model.write_text("{not json")
    out = tmp_path / "o.csv"
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert not out.exists()


def test_predict_with_json_nested_too_deeply_is_a_user_error_without_output(csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    model.write_text("[" * 100_000 + "]" * 100_000)  # a RecursionError traceback before
    out = tmp_path / "o.csv"
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcal: error: model file") and "nested too deeply" in err
    assert not out.exists()


def test_predict_with_a_model_edited_after_saving_fails_on_its_digest_without_output(table, csv, tmp_path, capsys):
    model = mcal.save(mcal.PlattScaling().fit(table["p"], table["y"] == "yes"), tmp_path / "m.json")
    doc = json.loads(model.read_text())
    doc["model"]["state"]["slope_"] *= 2
    model.write_text(json.dumps(doc))
    out = tmp_path / "o.csv"
    assert main(["predict", str(model), str(csv), "--score-col", "p", "-o", str(out)]) == 2
    assert "m.json: the content does not match its SHA-256 digest" in capsys.readouterr().err
    assert not out.exists()


def test_predict_with_a_version_1_model_warns_and_writes_its_output(table, csv, tmp_path, capsys, rewrite_model):
    model = mcal.save(mcal.PlattScaling().fit(table["p"], table["y"] == "yes"), tmp_path / "m.json")
    rewrite_model(model, lambda doc: doc.update(schema_version=1), digest=False)
    out = tmp_path / "o.csv"
    assert main(["predict", str(model), str(csv), "--score-col", "p", "-o", str(out)]) == 0
    warning = f"mcal: warning: {model} is a schema-version-1 model file, which has no digest"
    assert warning in capsys.readouterr().err
    assert out.exists()


def test_a_fit_whose_model_file_cannot_be_written_leaves_neither_it_nor_its_weights(
    csv, tmp_path, capsys, disk_full_on_model_files
):
    pytest.importorskip("torch")
    model = tmp_path / "m.json"
    assert (
        main(
            [
                "fit",
                str(csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--method",
                "neucalib",
                "--field",
                "f",
                "--param",
                "max_iter=5",
                "-o",
                str(model),
            ]
        )
        == 2
    )
    assert "No space left on device" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.csv"]


def test_predict_refuses_to_overwrite_an_existing_column(csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    main(
        [
            "fit",
            str(csv),
            "--score-col",
            "p",
            "--label-col",
            "y",
            "--pos-label",
            "yes",
            "--method",
            "isotonic",
            "-o",
            str(model),
        ]
    )
    out = tmp_path / "o.csv"
    assert main(["predict", str(model), str(csv), "-o", str(out), "--output-col", "w"]) == 2
    assert "already a column" in capsys.readouterr().err and not out.exists()


def test_unknown_method_is_a_usage_error(csv, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "fit",
                str(csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                "magic",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
    assert exc.value.code == 2


def test_features_for_a_univariate_method_are_rejected(csv, tmp_path, capsys):
    assert (
        main(
            [
                "fit",
                str(csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--method",
                "platt",
                "--features",
                "f",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
        == 2
    )
    assert "drop --features" in capsys.readouterr().err


def test_a_feature_named_twice_is_refused_naming_the_option(csv, tmp_path, capsys):
    # it reached the model as X with a repeated column and failed with "X column names must be unique"
    assert (
        main(
            [
                "fit",
                str(csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--method",
                "mcgrad",
                "--features",
                "f,w,f",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
        == 2
    )
    assert "--features must name each entry once; got ['f'] more than once in 'f,w,f'" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize(
    "option",
    [["--method", "mcgrad", "--features", "f,y"], ["--method", "mcnet", "--field", "y"]],
    ids=["features", "field"],
)
def test_the_label_column_as_a_feature_is_rejected_and_nothing_is_written(csv, tmp_path, capsys, option):
    model = tmp_path / "m.json"
    assert (
        main(["fit", str(csv), "--score-col", "p", "--label-col", "y", "--pos-label", "yes", *option, "-o", str(model)])
        == 2
    )
    assert f"{option[2]} must not name the label column (--label-col); got 'y'" in capsys.readouterr().err
    assert not model.exists()


def test_param_sets_a_method_parameter(csv, tmp_path):
    model = tmp_path / "m.json"
    assert (
        main(
            [
                "fit",
                str(csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--method",
                "histogram",
                "--param",
                "n_bins=5",
                "-o",
                str(model),
            ]
        )
        == 0
    )
    assert mcal.load(model).n_bins == 5


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("fit", "predict", "evaluate", "demo"):
        assert command in out


@pytest.mark.parametrize("option", ["-o", "--output", "--output-dir"])
def test_demo_takes_the_output_option_of_the_other_commands_and_its_old_spelling(option):
    from mcal.cli import build_parser

    args = build_parser().parse_args(["demo", option, "somewhere"])
    assert args.output_dir == "somewhere"


@pytest.mark.parametrize("below", ["", "sub"])
def test_demo_refuses_a_file_as_its_output_folder_before_any_work(tmp_path, capsys, monkeypatch, below):
    import mcal.demo

    def work(*args, **kwargs):
        raise AssertionError("the demo started its work")

    monkeypatch.setattr(mcal.demo, "split_bank", work)
    file = tmp_path / "metrics.csv"
    file.write_text("x\n")
    assert main(["demo", "-o", str(file / below)]) == 2
    err = capsys.readouterr().err
    assert "-o/--output must be a folder" in err and f"{str(file)!r} is a file" in err
    with pytest.raises(NotADirectoryError, match="output_dir must be a folder"):
        mcal.demo.run_demo(file / below)
    assert file.read_text() == "x\n"


@pytest.mark.slow
def test_demo_quick_writes_metrics_and_figure(tmp_path, capsys):
    assert main(["demo", "--quick", "--methods", "platt,isotonic", "-o", str(tmp_path / "d")]) == 0
    doc = json.loads((tmp_path / "d" / "metrics.json").read_text())
    assert set(doc["metrics"]) == {"uncalibrated", "platt", "isotonic"}
    assert doc["metrics"]["platt"]["log_loss"] <= doc["metrics"]["uncalibrated"]["log_loss"] + 0.005
    assert (tmp_path / "d" / "reliability.png").exists()
    assert "Held-out metrics" in capsys.readouterr().out


def test_features_of_mcnet_feed_its_auxiliary_network(csv, tmp_path):
    model = tmp_path / "m.json"
    assert (
        main(
            [
                "fit",
                str(csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--method",
                "mcnet",
                "--field",
                "f",
                "--features",
                "w",
                "--param",
                "max_epochs=1",
                "--param",
                "hidden_sizes=[8, 8]",
                "--quiet",
                "-o",
                str(model),
            ]
        )
        == 0
    )
    assert list(mcal.load(model).auxiliary_features) == ["w"]


def _fit_args(csv, model, *extra):
    return ["fit", str(csv), "--score-col", "p", "--label-col", "y", "--pos-label", "yes", *extra, "-o", str(model)]


@pytest.mark.parametrize(("args", "message"), [
    (["evaluate", "{csv}", "--score-col", "p", "--label-col", "y", "--pos-label", "yes", "--n-bins", "0"],
     "--n-bins: must be an integer >= 1; got 0"),
    (["report", "{csv}", "--score-col", "p", "--label-col", "y", "--pos-label", "yes", "--n-bins", "0", "-o", "{out}"],
     "--n-bins: must be an integer >= 1; got 0"),
    (["report", "{csv}", "--score-col", "p", "--label-col", "y", "--pos-label", "yes", "--segments", "p",
      "--max-depth", "-1", "-o", "{out}"], "--max-depth: must be an integer >= 0; got -1"),
    (_fit_args("{csv}", "{out}", "--method", "platt", "--random-state", "-1"), "--random-state: must be an integer >= 0; got -1"),
    (_fit_args("{csv}", "{out}", "--method", "platt", "--random-state", "x"), "--random-state: must be an integer >= 0; got 'x'"),
])  # fmt: skip
def test_bad_integer_options_are_named_as_typed_on_the_command_line(csv, tmp_path, capsys, args, message):
    # the library's messages named the Python parameters (n_bins, max_depth, random_state); argparse reports a
    # number below its option's floor as a usage error, before any work (issue 31)
    out = tmp_path / "out.html"
    with pytest.raises(SystemExit) as exc:
        main([a.format(csv=csv, out=out) for a in args])
    assert exc.value.code == 2 and capsys.readouterr().err.endswith(f": error: argument {message}\n")
    assert not out.exists()


def test_a_param_set_twice_is_refused_naming_it(csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(_fit_args(csv, model, "--method", "histogram", "--param", "n_bins=5", "--param", "n_bins=7")) == 2
    assert "mcal: error: --param must set each parameter once; got ['n_bins'] more than once" in capsys.readouterr().err
    assert not model.exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--method", "histogram", "--param", "n_bins=0"], "--param n_bins must be a positive integer; got 0"),
    (["--method", "histogram", "--param", "n_bins=two"], "--param n_bins must be a positive integer; got 'two' of type str"),
    (["--method", "ovr-histogram", "--param", "n_bins=0"],
     "the HistogramBinning calibrator of class column 0 could not be fitted: --param n_bins must be a positive "
     "integer; got 0"),
])  # fmt: skip
def test_a_bad_param_value_is_refused_in_the_library_s_words_naming_the_option(csv, tmp_path, capsys, extra, message):
    # issue 31: the library's rule, declared once, named the Python parameter alone ("n_bins must be ...")
    model = tmp_path / "m.json"
    args = _fit_args(csv, model, *extra)
    if extra[1].startswith("ovr-"):  # k classes: the probabilities of "no" and "yes" as two columns
        pd.read_csv(csv).assign(q=lambda d: 1 - d["p"]).to_csv(csv, index=False)
        args = ["fit", str(csv), "--score-cols", "q,p", "--label-col", "y", *extra, "-o", str(model)]
    assert main(args) == 2
    assert capsys.readouterr().err == f"mcal: error: {message}\n"
    assert not model.exists()


@pytest.mark.parametrize(
    "extra, name, option",
    [
        (
            ["--method", "mcgrad", "--features", "f", "--random-state", "5", "--param", "random_state=3"],
            "random_state",
            "--random-state N",
        ),
        (["--method", "mcgrad", "--features", "f", "--param", "random_state=3"], "random_state", "--random-state N"),
        (["--method", "per-field-isotonic", "--param", "field=f"], "field", "--field COL"),
        (
            ["--method", "mcnet", "--field", "f", "--param", 'auxiliary_features=["w"]'],
            "auxiliary_features",
            "--features A,B,C",
        ),
    ],
    ids=["random_state-with-its-option", "random_state", "field", "auxiliary_features"],
)
def test_a_param_that_has_its_own_option_is_refused(csv, tmp_path, capsys, extra, name, option):
    model = tmp_path / "m.json"
    assert main(_fit_args(csv, model, *extra)) == 2
    err = capsys.readouterr().err
    assert f"--param must not set {name}, which has its own option {option}; got --param {name}=" in err
    assert not model.exists()


def test_param_progress_contradicting_quiet_is_refused(csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    assert (
        main(_fit_args(csv, model, "--method", "mcgrad", "--features", "f", "--quiet", "--param", "progress=true")) == 2
    )
    assert "--param progress must be left out with --quiet, which sets progress=false; got --param progress=true" in (
        capsys.readouterr().err
    )
    assert not model.exists()


@pytest.fixture
def soft_csv(rng, tmp_path):
    """Scores, a feature and soft labels (an average of three raters' 0/1 votes)."""
    n = 600
    p = rng.uniform(0.05, 0.95, n)
    votes = rng.uniform(size=(3, n)) < expit(logit(p) + 0.5)
    path = tmp_path / "soft.csv"
    pd.DataFrame({"p": p, "x": rng.normal(size=n), "y": votes.mean(axis=0)}).to_csv(path, index=False)
    return path


def test_mcgrad_fits_soft_labels_as_in_python(soft_csv, tmp_path):
    model = tmp_path / "m.json"
    params = {"max_rounds": 2, "early_stopping": None, "min_child_samples": 20}
    options = [a for k, v in params.items() for a in ("--param", f"{k}={json.dumps(v)}")] + ["--n-jobs", "1"]
    assert (
        main(
            [
                "fit",
                str(soft_csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                "mcgrad",
                "--features",
                "x",
                "--random-state",
                "0",
                *options,
                "-o",
                str(model),
            ]
        )
        == 0
    )
    df = pd.read_csv(soft_csv)
    assert ((df["y"] > 0) & (df["y"] < 1)).mean() > 0.3  # soft labels indeed
    expected = (
        mcal.MCGrad(random_state=0, n_jobs=1, **params).fit(df["p"], df["y"], X=df[["x"]]).predict(df["p"], X=df[["x"]])
    )
    np.testing.assert_allclose(mcal.load(model).predict(df["p"], X=df[["x"]]), expected, rtol=0, atol=1e-12)


def test_soft_labels_for_a_method_without_them_name_the_methods_that_take_them(soft_csv, tmp_path, capsys):
    model = tmp_path / "m.json"
    labels = pd.read_csv(soft_csv)["y"]
    n_soft = int(((labels > 0) & (labels < 1)).sum())
    assert (
        main(["fit", str(soft_csv), "--score-col", "p", "--label-col", "y", "--method", "platt", "-o", str(model)]) == 2
    )
    err = capsys.readouterr().err
    assert (
        f"label column 'y' must hold 0/1 labels for method 'platt'; got {n_soft} soft label(s) strictly between" in err
    )
    assert err.rstrip().endswith("methods that accept soft labels: mcgrad")
    assert not model.exists()


@pytest.fixture
def array_model(table, tmp_path):
    """An MCGrad model fitted in Python on an array (no column names) of the column w, then saved."""
    path = tmp_path / "array_model.json"
    y = (table["y"] == "yes").to_numpy()
    model = mcal.MCGrad(max_rounds=2, early_stopping=None, min_child_samples=20, n_jobs=1, random_state=0)
    mcal.save(model.fit(table["p"].to_numpy(), y, X=table[["w"]].to_numpy()), path)
    return path


def test_predict_with_a_model_fitted_on_an_array_asks_for_features(array_model, csv, tmp_path, capsys):
    out = tmp_path / "o.csv"
    assert main(["predict", str(array_model), str(csv), "--score-col", "p", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        "mcal: error: --features must name the model's feature columns of DATA, in the order of the array it was "
        "fitted on: the model has no feature names (it was fitted in Python on an array without column names)" in err
    )
    assert not out.exists()
    assert main(["predict", str(array_model), str(csv), "--score-col", "p", "--features", "w,f", "-o", str(out)]) == 2
    assert (
        "--features must name the model's 1 feature column(s), in the order of the array it was fitted on; "
        "got 2: ['w', 'f']" in capsys.readouterr().err
    )
    assert not out.exists()


def test_predict_features_feed_a_model_fitted_on_an_array_in_order(array_model, csv, table, tmp_path):
    out = tmp_path / "o.parquet"
    assert main(["predict", str(array_model), str(csv), "--score-col", "p", "--features", "w", "-o", str(out)]) == 0
    expected = mcal.load(array_model).predict(table["p"].to_numpy(), X=table[["w"]].to_numpy())
    np.testing.assert_allclose(pd.read_parquet(out)["p_calibrated"], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "fixture, message",
    [
        ("field_model", "--features must be left out: the model reads the columns ['f'] of DATA by name; got ['f']"),
        ("platt_model", "--features must be left out: the model, a PlattScaling, uses only the scores; got ['f']"),
    ],
    ids=["named-columns", "univariate"],
)
def test_predict_features_are_refused_for_a_model_that_names_its_columns_or_has_none(
    request, csv, tmp_path, capsys, fixture, message
):
    model, out = request.getfixturevalue(fixture), tmp_path / "o.csv"
    assert main(["predict", str(model), str(csv), "--score-col", "p", "--features", "f", "-o", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture
def platt_model(table, tmp_path):
    path = tmp_path / "platt.json"
    mcal.save(mcal.PlattScaling().fit(table["p"], table["y"] == "yes"), path)
    return path


def test_predict_reads_the_columns_of_a_field_model_fitted_in_python_on_a_dataframe(table, csv, tmp_path):
    model, out = tmp_path / "m.json", tmp_path / "o.parquet"
    cal = mcal.PerFieldCalibrator(field="f").fit(table["p"], table["y"] == "yes", X=table[["f"]])
    mcal.save(cal, model)
    assert main(["predict", str(model), str(csv), "--score-col", "p", "-o", str(out)]) == 0
    np.testing.assert_allclose(
        pd.read_parquet(out)["p_calibrated"], cal.predict(table["p"], X=table[["f"]]), atol=1e-12
    )


def test_evaluate_plot_draws_a_score_column_named_like_mathtext(tmp_path, capsys):
    # the legend label "$\frac{x$" made matplotlib's mathtext parser raise
    rng = np.random.default_rng(0)
    p = rng.uniform(size=100)
    data = tmp_path / "d.csv"
    pd.DataFrame({"y": (rng.uniform(size=100) < p).astype(int), r"$\frac{x$": p}).to_csv(data, index=False)
    png = tmp_path / "d.png"
    assert main(["evaluate", str(data), "--score-col", r"$\frac{x$", "--label-col", "y", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _generated_group_models():
    return [
        mcal.HKRR(groups="generated", random_state=0),
        mcal.DFMC(groups="generated", n_estimators=5, n_jobs=1, random_state=0),
    ]


@pytest.mark.parametrize("cal", _generated_group_models(), ids=["hkrr", "dfmc"])
def test_predict_reads_the_segment_columns_of_a_generated_group_model_fitted_in_python_on_a_dataframe(
    table, csv, tmp_path, cal
):
    model, out = tmp_path / "m.json", tmp_path / "o.parquet"
    X = table[["w", "f"]]
    cal.fit(table["p"], table["y"] == "yes", X=X)
    mcal.save(cal, model)
    assert main(["predict", str(model), str(csv), "--score-col", "p", "-o", str(out)]) == 0
    np.testing.assert_allclose(pd.read_parquet(out)["p_calibrated"], cal.predict(table["p"], X=X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("cal", _generated_group_models(), ids=["hkrr", "dfmc"])
def test_predict_features_feed_a_generated_group_model_fitted_on_an_array_in_order(table, csv, tmp_path, cal):
    model, out = tmp_path / "m.json", tmp_path / "o.parquet"
    X = table[["w", "f"]].to_numpy()
    cal.fit(table["p"], table["y"] == "yes", X=X)
    mcal.save(cal, model)
    assert main(["predict", str(model), str(csv), "--score-col", "p", "--features", "w,f", "-o", str(out)]) == 0
    np.testing.assert_allclose(pd.read_parquet(out)["p_calibrated"], cal.predict(table["p"], X=X), rtol=0, atol=1e-12)


def test_mcgrad_without_features_fits_on_the_score_alone_as_in_python(csv, table, tmp_path):
    # `mcal fit --method mcgrad` without --features was refused, though MCGrad fits with X=None in Python
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
    params = [
        "--param",
        "max_rounds=2",
        "--param",
        "n_estimators=10",
        "--n-jobs",
        "1",
        "--param",
        "early_stopping=null",
    ]
    assert main(_fit_args(csv, model, "--method", "mcgrad", "--random-state", "0", "--quiet", *params)) == 0
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 0
    p, y = table["p"].to_numpy(), (table["y"] == "yes").to_numpy()
    python = mcal.MCGrad(max_rounds=2, n_estimators=10, n_jobs=1, early_stopping=None, random_state=0).fit(p, y)
    expected = python.predict(p)
    written = pd.read_csv(out)["p_calibrated"].to_numpy()
    np.testing.assert_allclose(written, expected, rtol=0, atol=1e-12)
    assert not np.allclose(written, p, atol=1e-3)  # the rounds did change the scores


def test_a_group_method_without_features_is_still_refused(csv, tmp_path, capsys):
    assert main(_fit_args(csv, tmp_path / "m.json", "--method", "hkrr")) == 2
    assert "method 'hkrr' needs feature columns: pass --features A,B,C" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_demo_default_methods_are_the_classifier_calibrators_only():
    from mcal._registry import METHODS
    from mcal.demo import default_methods

    names = default_methods()
    assert {"mcgrad", "mcnet", "venn-abers", "isotonic"} <= set(names)
    assert not {"regression-mcgrad", "regression-isotonic", "regression-linear"} & set(names)
    assert len(names) == len(METHODS) - 3
