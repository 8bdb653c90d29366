"""``mcal evaluate --segments``: multicalibration error of each score column, through the entry point."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from mcal.cli import main
from mcal.metrics import mce
from mcal.segments import generate_segments


@pytest.fixture
def table(rng):
    n = 4000
    job = rng.choice(["admin", "tech", "services"], n)
    age = rng.integers(20, 70, n)
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < np.where(job == "admin", np.clip(p + 0.2, 0, 1), p)).astype(int)
    return pd.DataFrame({"p": p, "q": np.clip(p + 0.05, 0, 1), "y": y, "job": job, "age": age})


@pytest.fixture
def csv(table, tmp_path):
    path = tmp_path / "scores.csv"
    table.to_csv(path, index=False)
    return path


def test_evaluate_prints_one_table_of_worst_segments_across_columns(csv, table, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # wide enough for a row per segment
    assert main(["evaluate", str(csv), "--score-col", "p", "--score-col", "q", "--label-col", "y",
                 "--segments", "job,age", "--max-depth", "2"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "mce_sigma" in out and "p: MCE" in out and "q: MCE" in out
    lines = out.split("worst segments (", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["segment", "rows"])
    first = lines[start + 1].split()
    # rank, segment, rows, observed rate (by hand), then p's mean score and direction: under-predicted admins
    admin = table[table["job"] == "admin"]
    assert first[:4] == ["1", "job=admin", f"{len(admin):,}", f"{admin['y'].mean():.4g}"]
    assert first[5:7] == [f"{admin['p'].mean():.4g}", "under"]
    # p-values below precision print as "< 1e-15", adjusted ones as "< m * 1e-15", never as 0
    assert "p < 1e-15, Holm-adjusted p < " in out
    assert lines[start + 1].split()[-2] == "<"
    assert "Holm-adjusted" in out


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.slow
def test_evaluate_stacks_every_score_column_beneath_its_segment_within_the_terminal(
    csv, table, capsys, monkeypatch, width
):
    # issue 32: three score columns with --ci printed rows of about 500 characters
    monkeypatch.setenv("COLUMNS", str(width))
    scores = ["p", "q", "r"]
    table.assign(r=np.clip(table["p"] - 0.05, 0, 1)).to_csv(csv, index=False)
    argv = ["evaluate", str(csv), "--label-col", "y", "--segments", "job,age", "--ci", "--n-resamples", "20"]
    assert main([*argv, *(a for s in scores for a in ("--score-col", s))]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= width
    # the metrics: a row per metric, a column per score column, each value with its interval
    header, log_loss = out.splitlines()[1:3]
    assert header.split()[:2] == ["p", "q"] and log_loss.split()[0] == "log_loss"
    assert re.fullmatch(r"log_loss +0\.\d{6} \[0\.\d+, 0\.\d+\] +0\.\d{6} \[0\.\d+, 0\.\d+\].*", log_loss)
    # the worst segments: a line per segment, a row per score column beneath it
    lines = out.split("worst segments (", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["score", "column"])
    admin = table[table["job"] == "admin"]
    assert lines[start + 1].startswith(f" 1  job=admin: {len(admin):,} rows, observed {admin['y'].mean():.4g}")
    rows = [line.split() for line in lines[start + 2 : start + 5]]
    assert [r[0] for r in rows] == scores
    assert rows[0][1:3] == [f"{admin['p'].mean():.4g}", "under"]
    assert all(re.fullmatch(r"\[[\d.e-]+,", r[4]) for r in rows)  # ECCE / sigma [low, high]


def test_evaluate_puts_a_long_score_column_name_on_its_own_line_within_the_terminal(csv, table, capsys, monkeypatch):
    # issue 32 item 4 review: a 62-character score column name made the metrics and the worst segments 85-100
    # characters wide at COLUMNS=80
    monkeypatch.setenv("COLUMNS", "80")
    long = "a_very_long_score_column_name_from_the_production_pipeline_v2"
    table.assign(**{long: np.clip(table["p"] - 0.05, 0, 1)}).to_csv(csv, index=False)
    argv = ["evaluate", str(csv), "--label-col", "y", "--segments", "job", "--score-col", "p", "--score-col", long]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    lines = out.splitlines()
    block = lines.index(f"{long}:")  # the metrics of the long column, a row per metric beneath its name
    assert re.fullmatch(r"log_loss +0\.\d{6}", lines[block + 1])
    segments = out.split("worst segments (", 1)[1].splitlines()
    name = next(i for i, line in enumerate(segments) if line.strip() == long)
    numbers = segments[name + 1].split()  # its mean score, error direction, ECCE / sigma and p-value beneath
    assert float(numbers[0]) > 0 and numbers[1] in ("over", "under") and float(numbers[2]) >= 0


def test_evaluate_groups_near_duplicates_unless_all_segments(table, tmp_path, capsys):
    # "team" is "job" but for 5% of the rows: team=admin is a near-duplicate of job=admin
    rng = np.random.default_rng(1)
    team = np.where(rng.random(len(table)) < 0.95, table["job"], "other")
    path = tmp_path / "teams.csv"
    table.assign(team=team).to_csv(path, index=False)
    args = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--segments", "job,team", "--json"]
    assert main(args) == 0
    grouped = json.loads(capsys.readouterr().out)["worst_segments"]
    assert main([*args, "--all-segments"]) == 0
    listed = json.loads(capsys.readouterr().out)["worst_segments"]
    assert grouped["p_adjustment"] == "holm" and grouped["max_overlap"] == 0.8 and listed["max_overlap"] is None
    admin = {"job=admin", "team=admin", "job=admin & team=admin"}
    first = grouped["rows"][0]
    assert first["description"] in admin and first["n_similar"] >= 2
    assert sum(r["description"] in admin for r in grouped["rows"]) == 1
    assert sum(r["description"] in admin for r in listed["rows"]) == 3
    assert all(r["n_similar"] == 0 for r in listed["rows"])


def test_evaluate_json_has_the_full_segment_table_matching_mce(csv, table, capsys):
    assert main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", "--segments", "job,age", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = mce(table["y"], table["p"], segments=generate_segments(table[["job", "age"]]))
    rows = out["segments"]["p"]
    assert len(rows) == expected.n_segments
    assert rows[0]["description"] == expected.worst_segment
    assert out["metrics"]["p"]["mce_sigma"] == pytest.approx(expected.mce_sigma)
    assert out["metrics"]["p"]["mce_pvalue"] == pytest.approx(expected.pvalue)
    assert out["metrics"]["p"]["mce_pvalue_adjusted"] == pytest.approx(expected.pvalue_adjusted)


def test_evaluate_without_segments_has_no_mce(csv, capsys):
    assert main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "segments" not in out and "mce_sigma" not in out["metrics"]["p"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-depth", "2"], "--max-depth needs --segments"),
        (["--segments", "job,nope"], "--segments 'nope' is not a column"),
        (["--segments", "job,"], "--segments must not hold an empty name; got 'job,'"),
        (["--segments", "job,age,job"], "--segments must name each entry once; got ['job'] more than once"),
    ],
)
def test_evaluate_bad_segment_options_fail_clearly(csv, capsys, extra, message):
    assert main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", *extra]) == 2
    assert message in capsys.readouterr().err


def test_evaluate_refuses_a_negative_max_depth_as_a_usage_error(csv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", "--segments", "job", "--max-depth", "-1"])
    assert (
        exc.value.code == 2
        and "error: argument --max-depth: must be an integer >= 0; got -1" in capsys.readouterr().err
    )


@pytest.mark.slow
def test_demo_reports_mce_at_least_the_global_ecce_sigma(tmp_path):
    assert main(["demo", "--quick", "--methods", "platt", "--output-dir", str(tmp_path / "d")]) == 0
    doc = json.loads((tmp_path / "d" / "metrics.json").read_text())
    assert doc["segment_features"] == ["age", "marital", "education", "job"]
    for row in doc["metrics"].values():
        # the whole table is one of the segments, so the maximum is at least its ECCE / sigma
        assert row["mce_sigma"] >= row["ecce_sigma_scale"] - 1e-12 and 0 <= row["mce_pvalue"] <= row["ecce_pvalue"]


def test_a_date_column_segments_alike_from_parquet_and_csv(table, tmp_path, capsys):
    # Parquet keeps Python dates, which segments refuse unless declared categorical (no option here); CSV has text
    table["day"] = [pd.Timestamp("2024-01-01").date() + pd.Timedelta(days=int(a) % 3) for a in table["age"]]
    outputs = []
    for path, write in ((tmp_path / "s.parquet", table.to_parquet), (tmp_path / "s.csv", table.to_csv)):
        write(path, index=False)
        assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--segments", "day,job",
                     "--max-depth", "1"]) == 0  # fmt: skip
        outputs.append(capsys.readouterr().out)
    assert "day=2024-01-02" in outputs[0]
    assert outputs[0] == outputs[1]


@pytest.fixture
def coded(table, rng):
    """The table with an integer-coded region (1..12, unequal frequencies, so no ties in the most frequent)."""
    share = np.arange(12, 0, -1, dtype=float)
    return table.assign(region=rng.choice(np.arange(1, 13), len(table), p=share / share.sum()))


@pytest.mark.parametrize("as_json", [False, True])
def test_an_int_coded_column_declared_categorical_segments_as_the_same_column_as_text(coded, tmp_path, capsys, as_json):
    numbers, text = tmp_path / "numbers.parquet", tmp_path / "text.parquet"
    coded.to_parquet(numbers, index=False)
    coded.assign(region=coded["region"].astype(str)).to_parquet(text, index=False)
    common = ["--score-col", "p", "--label-col", "y", "--segments", "job,region", "--max-depth", "2"]
    common += ["--json"] if as_json else []
    assert main(["evaluate", str(numbers), *common, "--categorical", "region"]) == 0
    declared = capsys.readouterr().out
    assert main(["evaluate", str(text), *common]) == 0
    assert declared == capsys.readouterr().out
    assert "region=1" in declared and "region <=" not in declared  # one segment per code, not quantile bins


def test_declaring_one_column_leaves_the_others_of_the_kind_segments_give_them(coded, tmp_path, capsys):
    # a Parquet decimal column is an object column of numbers: categorical for segments, numerical for MCGrad's
    # encoder, whose reading of the dtypes --categorical had used for the undeclared columns
    from decimal import Decimal

    frame = coded.assign(level=[Decimal(int(v)) for v in coded["region"] % 3])
    path = tmp_path / "t.parquet"
    frame.to_parquet(path, index=False)
    common = ["--score-col", "p", "--label-col", "y", "--segments", "level,region", "--max-depth", "1", "--json"]
    assert main(["evaluate", str(path), *common, "--categorical", "region"]) == 0
    declared = capsys.readouterr().out
    text = tmp_path / "text.parquet"
    frame.assign(region=frame["region"].astype(str)).to_parquet(text, index=False)
    assert main(["evaluate", str(text), *common]) == 0
    assert declared == capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--categorical", "job"], "--categorical needs --segments"),
        (
            ["--segments", "job,age", "--categorical", "age,q"],
            "--categorical must name columns given with --segments ('job,age'); got ['q']",
        ),
        (
            ["--segments", "job,age", "--categorical", "age,age"],
            "--categorical must name each entry once; got ['age'] more than once in 'age,age'",
        ),
        (["--segments", "job,age", "--categorical", "age,"], "--categorical must not hold an empty name; got 'age,'"),
    ],
)
def test_evaluate_bad_categorical_option_fails_clearly(csv, capsys, extra, message):
    assert main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", *extra]) == 2
    assert message in capsys.readouterr().err
