"""How the command line reads and writes tables: formats by extension, missing values, outputs that are inputs."""

import gzip
import os

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal.cli import main
from mcal.cli._common import read_table


@pytest.fixture
def table(rng):
    n = 400
    p = rng.uniform(0.05, 0.95, n)
    return pd.DataFrame({"p": p, "y": (rng.uniform(size=n) < p).astype(int), "f": rng.integers(0, 3, n)})


@pytest.fixture
def csv(table, tmp_path):
    path = tmp_path / "scores.csv"
    table.to_csv(path, index=False)
    return path


@pytest.fixture
def model(table, tmp_path):
    path = tmp_path / "platt.json"
    mcal.save(mcal.PlattScaling().fit(table["p"], table["y"]), path, metadata={"score_col": "p"})
    return path


@pytest.mark.parametrize("ending, sep", [(".csv", ","), (".csv.gz", ","), (".tsv", "\t")])
def test_predict_writes_the_separator_of_the_extension(csv, model, table, tmp_path, ending, sep):
    out = tmp_path / f"out{ending}"
    assert main(["predict", str(model), str(csv), "-o", str(out)]) == 0
    raw = gzip.decompress(out.read_bytes()) if ending.endswith(".gz") else out.read_bytes()
    assert raw.decode().splitlines()[0] == sep.join(["p", "y", "f", "p_calibrated"])
    written = pd.read_csv(out, sep=sep)
    np.testing.assert_allclose(written["p_calibrated"], mcal.load(model).predict(table["p"]), rtol=0, atol=1e-15)
    pd.testing.assert_frame_equal(written.drop(columns="p_calibrated"), table)


@pytest.mark.parametrize("name", ["out.xlsx", "out.txt", "out"])
def test_an_output_extension_that_cannot_be_written_fails_before_the_model_is_read(csv, tmp_path, capsys, name):
    out = tmp_path / name
    absent_model = tmp_path / "absent.json"  # read only after the output is checked
    assert main(["predict", str(absent_model), str(csv), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        f"mcal: error: -o/--output must end in one of .csv, .csv.gz, .tsv, .parquet, .pq (the format written); "
        f"got '{out}'" in err
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "name", "endings"),
    [
        (["fit", "{csv}", "--score-col", "p", "--label-col", "y", "--method", "platt"], "model.csv", ".json"),
        (["report", "{csv}", "--score-col", "p", "--label-col", "y"], "x.csv", ".html, .htm"),
        (["monitor", "{csv}", "--score-col", "p", "--label-col", "y", "--time-col", "f"], "out.csv", ".html, .htm"),
        (["report", "{csv}", "--score-cols", "p,y", "--label-col", "f"], "report.json", ".html, .htm"),
    ],
    ids=["fit", "report", "monitor", "report-score-cols"],
)
def test_an_output_in_a_format_the_command_does_not_write_is_refused_before_any_work(
    csv, tmp_path, capsys, command, name, endings
):
    # issue 32: `mcal monitor -o out.csv` and `mcal report -o x.csv` wrote an HTML page into a .csv file
    out = tmp_path / name
    assert main([*(a.format(csv=csv) for a in command), "-o", str(out)]) == 2
    assert f"mcal: error: -o/--output must end in one of {endings} (the format written); got '{out}'" in (
        capsys.readouterr().err
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["fit", "{csv}", "--score-col", "p", "--label-col", "y", "--method", "platt", "-o", "{out}"],
        ["predict", "{model}", "{csv}", "-o", "{out}"],
        ["evaluate", "{csv}", "--score-col", "p", "--label-col", "y", "--plot", "{out}"],
        ["report", "{csv}", "--score-col", "p", "--label-col", "y", "-o", "{out}"],
    ],
    ids=["fit", "predict", "evaluate", "report"],
)
@pytest.mark.parametrize("link", [False, True], ids=["same-path", "symlink"])
def test_an_output_that_is_the_data_file_is_refused_and_the_data_kept(csv, model, tmp_path, capsys, command, link):
    out = csv
    if link:
        out = tmp_path / "alias.csv"
        os.symlink(csv, out)
    before = csv.read_bytes()
    assert main([a.format(csv=csv, model=model, out=out) for a in command]) == 2
    option = "--plot" if command[0] == "evaluate" else "-o/--output"
    assert (
        f"mcal: error: {option} must differ from DATA, which it would overwrite; got '{out}', the same file as "
        f"DATA '{csv}'" in capsys.readouterr().err
    )
    assert csv.read_bytes() == before


def test_predict_refuses_to_write_over_its_model_file(csv, tmp_path, capsys, table):
    model = tmp_path / "model.csv"  # mcal.save takes any name
    mcal.save(mcal.PlattScaling().fit(table["p"], table["y"]), model)
    before = model.read_bytes()
    assert main(["predict", str(model), str(csv), "-o", str(model)]) == 2
    assert "-o/--output must differ from MODEL, which it would overwrite" in capsys.readouterr().err
    assert model.read_bytes() == before


def test_an_output_inside_a_parquet_data_folder_is_refused(table, model, tmp_path, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    table.to_parquet(folder / "part-0.parquet")
    out = folder / "part-1.parquet"
    assert main(["predict", str(model), str(folder), "-o", str(out)]) == 2
    assert f"-o/--output must be outside the folder DATA; got '{out}', inside '{folder}'" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet"]


@pytest.fixture
def country_csv(tmp_path):
    """Namibia's country code NA beside US, a numeric column x with empty cells and one R-style NA, and text
    values that pandas reads as missing by default (null, None)."""
    path = tmp_path / "countries.csv"
    path.write_text(
        "country,x,note,p,y\nNA,1.5,null,0.2,0\nUS,,None,0.7,1\nNA,,ok,0.4,1\nUS,NA,ok,0.6,0\nUS,2.5,,0.3,0\n"
    )
    return path


def _predicted(country_csv, model, tmp_path, *na_options):
    out = tmp_path / "out.parquet"
    assert main(["predict", str(model), str(country_csv), "--score-col", "p", *na_options, "-o", str(out)]) == 0
    return pd.read_parquet(out)


def test_text_values_that_look_missing_stay_values_and_empty_numeric_cells_are_missing(country_csv, model, tmp_path):
    df = _predicted(country_csv, model, tmp_path)
    assert df["country"].tolist() == ["NA", "US", "NA", "US", "US"]
    assert df["note"].iloc[:4].tolist() == ["null", "None", "ok", "ok"] and pd.isna(df["note"].iloc[4])
    assert df["x"].dtype == np.float64  # empty cells and the NA in a column of numbers are missing
    np.testing.assert_array_equal(df["x"].isna(), [False, True, True, True, False])


def test_na_values_lists_the_texts_that_are_missing_in_every_column(country_csv, model, tmp_path):
    df = _predicted(country_csv, model, tmp_path, "--na-values", "NA,null")
    np.testing.assert_array_equal(df["country"].isna(), [True, False, True, False, False])
    np.testing.assert_array_equal(df["note"].isna(), [True, False, False, False, True])
    np.testing.assert_array_equal(df["x"].isna(), [False, True, True, True, False])


def test_empty_na_values_make_only_empty_cells_missing(country_csv, model, tmp_path):
    df = _predicted(country_csv, model, tmp_path, "--na-values", "")
    assert df["country"].tolist() == ["NA", "US", "NA", "US", "US"]
    assert df["x"].tolist()[3] == "NA"  # R's marker is then text, and x a text column
    np.testing.assert_array_equal(df["x"].isna(), [False, True, True, False, False])


def test_a_country_feature_keeps_its_na_level_through_fit_and_predict(country_csv, tmp_path):
    model, out = tmp_path / "m.json", tmp_path / "out.csv"
    assert (
        main(
            [
                "fit",
                str(country_csv),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                "per-field-isotonic",
                "--field",
                "country",
                "-o",
                str(model),
            ]
        )
        == 0
    )
    assert sorted(mcal.load(model).field_values_) == ["NA", "US"]
    assert main(["predict", str(model), str(country_csv), "-o", str(out)]) == 0
    assert pd.read_csv(out, keep_default_na=False)["country"].tolist() == ["NA", "US", "NA", "US", "US"]


@pytest.mark.parametrize(
    "cells, expected",
    [
        (["NA", "NA", "NA"], [np.nan, np.nan, np.nan]),  # markers only: a missing numeric column (it was read as text)
        (["TRUE", "FALSE", "NA"], [True, False, np.nan]),  # R's logical with NA (it was text, all levels unseen)
    ],
)
def test_pandas_markers_are_missing_in_a_column_of_markers_only_or_of_true_false(tmp_path, cells, expected):
    path = tmp_path / "d.csv"
    pd.DataFrame({"c": cells, "t": ["a", "NA", "b"]}).to_csv(path, index=False)
    df = read_table(path)
    assert [None if pd.isna(v) else v for v in df["c"]] == [None if pd.isna(v) else v for v in expected]
    assert df["t"].tolist() == ["a", "NA", "b"]


@pytest.fixture
def yes_no_na_csv(tmp_path):
    """Text labels yes/no with R's NA for an unknown label in the third and fifth rows."""
    path = tmp_path / "labels.csv"
    path.write_text("p,y\n0.2,no\n0.7,yes\n0.4,NA\n0.6,yes\n0.3,NA\n")
    return path


@pytest.mark.parametrize(
    "command", [["fit", "--method", "platt", "-o", "m.json"], ["evaluate"]], ids=["fit", "evaluate"]
)
def test_na_beside_two_text_labels_is_reported_as_missing_labels(yes_no_na_csv, tmp_path, capsys, command):
    args = [command[0], str(yes_no_na_csv), "--score-col", "p", "--label-col", "y", "--pos-label", "yes"]
    assert main(args + [str(tmp_path / a) if a.endswith(".json") else a for a in command[1:]]) == 2
    err = capsys.readouterr().err
    assert (
        f"label column 'y' must not contain missing values; got a missing value on line 4 of {yes_no_na_csv} (2 such"
        in err
    )
    assert not (tmp_path / "m.json").exists()


def test_na_beside_one_other_text_label_stays_a_label(tmp_path):
    path, model = tmp_path / "regions.csv", tmp_path / "m.json"
    path.write_text("p,y\n0.2,EU\n0.7,NA\n0.4,NA\n0.6,EU\n0.3,NA\n")
    assert (
        main(
            [
                "fit",
                str(path),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--pos-label",
                "NA",
                "--method",
                "platt",
                "-o",
                str(model),
            ]
        )
        == 0
    )
    expected = mcal.PlattScaling().fit([0.2, 0.7, 0.4, 0.6, 0.3], [0, 1, 1, 0, 1])
    assert mcal.load(model).slope_ == expected.slope_


def test_a_feature_column_named_like_the_label_keeps_its_na_text_in_predict(tmp_path, model):
    path = tmp_path / "d.csv"
    path.write_text("p,y\n0.2,no\n0.7,yes\n0.4,NA\n")  # predict reads no labels: y is an ordinary text column
    df = _predicted(path, model, tmp_path)
    assert df["y"].tolist() == ["no", "yes", "NA"]


def test_na_values_for_parquet_data_is_refused(table, tmp_path, capsys):
    path = tmp_path / "scores.parquet"
    table.to_parquet(path)
    assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--na-values", "NA"]) == 2
    assert f"--na-values must be left out for Parquet, whose missing values are typed; got {path}" in (
        capsys.readouterr().err
    )


def test_sep_for_parquet_data_is_refused(table, tmp_path, capsys):
    # it was silently ignored
    path = tmp_path / "scores.parquet"
    table.to_parquet(path)
    assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--sep", ";"]) == 2
    assert f"--sep must be left out for Parquet, which has no field separator; got {path}" in capsys.readouterr().err


def test_a_plot_format_matplotlib_cannot_write_is_refused_before_the_metrics(table, tmp_path, capsys, monkeypatch):
    # the metrics were computed first, and the command then failed in savefig
    path = tmp_path / "scores.csv"
    table.to_csv(path, index=False)
    monkeypatch.setattr("mcal.cli._evaluate.read_data", lambda args: pytest.fail("read the data first"))
    out = tmp_path / "diagram.xlsx"
    assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--plot", str(out)]) == 2
    assert "--plot must end in an image format matplotlib writes (" in capsys.readouterr().err
    assert not out.exists()


def test_na_values_on_a_dask_cluster_is_refused_before_it_starts(table, tmp_path, capsys):
    pytest.importorskip("distributed")
    path = tmp_path / "scores.parquet"
    table.to_parquet(path)
    args = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--dask-workers", "1", "--na-values", "NA"]
    assert main(args) == 2
    assert "--na-values must be left out on a Dask cluster, which reads Parquet; got 'NA'" in capsys.readouterr().err


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
@pytest.mark.parametrize("ending", [".csv", ".csv.gz", ".txt"])
def test_the_separator_is_detected_from_the_header_line(table, tmp_path, sep, ending):
    path = tmp_path / f"d{ending}"
    table.to_csv(path, sep=sep, index=False)
    pd.testing.assert_frame_equal(read_table(path), table)


def test_a_one_column_csv_is_one_column(tmp_path, table, model):
    # pandas' own detection took the header's 'p' for the separator and split every row into unnamed columns
    path, out = tmp_path / "p.csv", tmp_path / "o.csv"
    table[["p"]].to_csv(path, index=False)
    assert list(read_table(path).columns) == ["p"]
    assert main(["predict", str(model), str(path), "--score-col", "p", "-o", str(out)]) == 0
    np.testing.assert_allclose(pd.read_csv(out)["p_calibrated"], mcal.load(model).predict(table["p"]), atol=1e-12)


def test_quoted_separators_inside_values_stay_inside(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('name,p\n"Smith, J",0.25\n"a;b",0.5\n', encoding="utf-8")
    frame = read_table(path)
    assert frame["name"].tolist() == ["Smith, J", "a;b"] and frame["p"].tolist() == [0.25, 0.5]


@pytest.mark.parametrize("command", ["evaluate", "report", "monitor", "predict", "fit"])
def test_a_missing_score_cell_is_named_by_column_and_file_line_in_every_command(table, model, tmp_path, capsys,
                                                                                  command):  # fmt: skip
    # issue 32: evaluate said "y_prob must be finite ... np.float64(nan) at index 5", fit "score column 'p'"
    path = tmp_path / "scores.csv"
    table.assign(p=table["p"].where(table.index != 5), t=np.arange(len(table))).to_csv(path, index=False)
    out = str(tmp_path / "out")
    extra = {"evaluate": [], "report": ["-o", out + ".html"], "monitor": ["--time-col", "t", "--window", "100"],
             "fit": ["--method", "platt", "-o", out + ".json"]}  # fmt: skip
    if command == "predict":
        argv = ["predict", str(model), str(path), "--score-col", "p", "-o", out + ".csv"]
    else:
        argv = [command, str(path), "--score-col", "p", "--label-col", "y", *extra[command]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (f"mcal: error: score column 'p' must be finite (no missing value, NaN or infinity); got a missing value "
            f"on line 7 of {path}") in err  # fmt: skip
    assert "np." not in err and "index" not in err and not list(tmp_path.glob("out*"))


def test_decimal_commas_are_named_by_cell_and_read_with_decimal(table, tmp_path, capsys):
    path, dots = tmp_path / "semicolons.csv", tmp_path / "dots.csv"
    table.to_csv(dots, index=False)
    table.to_csv(path, sep=";", decimal=",", index=False)
    argv = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--json"]
    assert main(argv) == 2
    first = f"{table['p'].iloc[0]}".replace(".", ",")
    assert (f"score column 'p' must hold numbers; got {first!r} on line 2 of {path} ({len(table):,} such cells in "
            "all); decimal commas? read the file with --decimal ,") in capsys.readouterr().err  # fmt: skip
    assert main([*argv, "--decimal", ","]) == 0
    with_commas = capsys.readouterr().out
    assert main(["evaluate", str(dots), "--score-col", "p", "--label-col", "y", "--json"]) == 0
    assert with_commas == capsys.readouterr().out
    assert main([*argv, "--decimal", ";"]) == 2
    assert f"--decimal must be one character other than the field separator; got ';' for {path}" in (
        capsys.readouterr().err
    )


def test_a_score_out_of_range_or_a_negative_weight_names_its_line(table, tmp_path, capsys):
    path = tmp_path / "scores.csv"
    table.assign(p=table["p"].where(table.index != 3, 1.5), w=np.where(table.index == 9, -2.0, 1.0)).to_csv(
        path, index=False
    )
    assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y"]) == 2
    assert f"score column 'p' must lie in [0, 1]; got 1.5 on line 5 of {path}" in capsys.readouterr().err
    table.assign(w=np.where(table.index == 9, -2.0, 1.0)).to_parquet(tmp_path / "w.parquet")
    assert main(["evaluate", str(tmp_path / "w.parquet"), "--score-col", "p", "--label-col", "y", "--weight-col",
                 "w"]) == 2  # fmt: skip
    assert f"weight column 'w' must be non-negative; got -2 on row 10 of {tmp_path / 'w.parquet'}" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("command", ["evaluate", "fit"])
def test_a_bad_label_cell_is_named_by_its_file_line(table, tmp_path, capsys, command):
    # issue 32 item 9: labels said "got 1 value(s): 2.0 at index 6" and, for regression, "got dtype object, e.g.
    # 'abc' at index 11": an index of the table, not the line of the file
    path = tmp_path / "scores.csv"
    extra = ["--method", "isotonic", "-o", str(tmp_path / "m.json")] if command == "fit" else []
    table.assign(y=table["y"].where(table.index != 6, 2)).to_csv(path, index=False)
    assert main([command, str(path), "--score-col", "p", "--label-col", "y", *extra]) == 2
    err = capsys.readouterr().err
    assert f"label column 'y' must be binary (0 or 1); got 2 on line 8 of {path}; for a continuous label" in err
    regression = ["--method", "regression-isotonic"] if command == "fit" else ["--outcome", "regression"]
    extra = [*regression, "-o", str(tmp_path / "m.json")] if command == "fit" else regression
    table.astype({"y": object}).assign(y=table["y"].astype(object).where(table.index != 11, "abc")).to_csv(
        path, index=False
    )
    assert main([command, str(path), "--score-col", "p", "--label-col", "y", *extra]) == 2
    assert f"label column 'y' must hold numbers; got 'abc' on line 13 of {path}" in capsys.readouterr().err
    table.assign(y=table["y"].where(table.index != 4)).to_csv(path, index=False)
    assert main([command, str(path), "--score-col", "p", "--label-col", "y", *extra]) == 2
    err = capsys.readouterr().err
    assert (
        f"label column 'y' must be finite (no missing value, NaN or infinity); got a missing value on line 6 of {path}"
        in err
    )
    assert "index" not in err and not (tmp_path / "m.json").exists()


def test_library_messages_show_plain_values_and_the_first_text_cell():
    from mcal._validation import check_y_prob

    with pytest.raises(ValueError, match=r"got 1 value\(s\): nan at index 1$"):
        check_y_prob(np.array([0.2, np.nan]))
    with pytest.raises(ValueError, match=r"got dtype object, e.g. '0,5' at index 1$"):
        check_y_prob(np.array([0.2, "0,5"], dtype=object))
