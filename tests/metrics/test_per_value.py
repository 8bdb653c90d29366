"""How many values a segment column contributes (``max_values_per_feature`` per feature, ``--segment-values``,
``--segments NAME:N``), and the per-value table of every value with enough rows (:func:`mcal.metrics.per_value_table`,
``mcal evaluate``, ``mcal report``, ``mcal monitor``).

The planted case of issue #32: 30 countries, the 2 most frequent calibrated, an error planted in 10 of the
others. The default audit (3 values per column) cannot name them; the per-value table and the audit with 31
values per column name exactly those.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from mcal.cli import main
from mcal.metrics import ecce, per_value_table
from mcal.segments import generate_segments

COUNTRIES = [f"c{i:02d}" for i in range(30)]
#: Countries whose scores are too low (true logit = score logit + 0.6); none is among the 2 most frequent.
PLANTED = set(COUNTRIES[5:25:2])


def planted_table(n=40000, seed=1):
    rng = np.random.default_rng(seed)
    frequency = np.linspace(3, 1, 30)
    country = rng.choice(COUNTRIES, n, p=frequency / frequency.sum())
    p = rng.uniform(0.05, 0.95, n)
    truth = np.where(np.isin(country, list(PLANTED)), expit(logit(p) + 0.6), p)
    y = (rng.random(n) < truth).astype(int)
    return pd.DataFrame({"p": p, "y": y, "country": country, "age": rng.integers(20, 70, n)})


@pytest.fixture(scope="module")
def table():
    return planted_table()


@pytest.fixture(scope="module")
def csv(table, tmp_path_factory):
    path = tmp_path_factory.mktemp("planted") / "scores.csv"
    table.to_csv(path, index=False)
    return path


def significant(rows, column="pvalue_adjusted"):
    return {row["description"].removeprefix("country=") for row in rows if row[column] < 0.05}


# -- the Python API ---------------------------------------------------------------------------------------------
def test_per_value_table_names_exactly_the_countries_with_a_planted_error(table):
    result = per_value_table(table["y"], table["p"], X=table[["country"]])
    assert len(result.table) == 30 and result.n_left_out["country"] == 0
    assert significant(result.table.to_dict("records")) == PLANTED


def test_a_value_row_holds_the_ecce_of_that_values_rows(table):
    result = per_value_table(table["y"], table["p"], X=table[["country", "age"]])
    row = result.table.set_index("description").loc["country=c07"]
    rows = (table["country"] == "c07").to_numpy()
    assert row["size"] == rows.sum()
    assert row["ecce"] == pytest.approx(ecce(table["y"][rows], table["p"][rows]), rel=1e-9)
    assert result.table["feature"].tolist() == ["country"] * 30 + ["age"] * 3  # age: 3 quantile bins


def test_values_with_fewer_rows_than_the_rule_are_counted_not_listed_and_missing_is_a_value():
    rng = np.random.default_rng(0)
    country = np.array(["de"] * 500 + ["fr"] * 500 + ["lu"] * 9 + [None] * 40, dtype=object)
    p = rng.uniform(0.1, 0.9, country.size)
    y = (rng.random(country.size) < p).astype(int)
    result = per_value_table(y, p, X=pd.DataFrame({"country": country}))
    assert set(result.table["description"]) == {"country=de", "country=fr", "country is missing"}
    assert result.n_left_out.to_dict() == {"country": 1} and result.min_samples_per_value == 10
    assert per_value_table(y, p, X=pd.DataFrame({"country": country}), min_samples_per_value=9).n_left_out[
        "country"] == 0  # fmt: skip


def test_a_value_of_weight_0_is_counted_not_listed():
    # it was listed with a NaN ECCE (and shown as 'nan' in mcal evaluate)
    rng = np.random.default_rng(0)
    country = np.repeat(["a", "b", "c"], 40)
    p = rng.uniform(0.1, 0.9, country.size)
    y = (rng.uniform(size=country.size) < p).astype(float)
    w = np.where(country == "b", 0.0, 1.0)
    result = per_value_table(y, p, X=pd.DataFrame({"country": country}), sample_weight=w)
    assert list(result.table["description"].sort_values()) == ["country=a", "country=c"]
    assert result.n_left_out.to_dict() == {"country": 1} and np.isfinite(result.table["ecce_sigma"]).all()


def test_generate_segments_takes_the_number_of_values_per_feature(table):
    X = table[["country", "age"]]
    default = generate_segments(X, max_depth=1).descriptions
    assert [d for d in default if d.startswith("country")][:2] == ["country=c00", "country=c01"]
    assert not any(d.removeprefix("country=") in PLANTED for d in default)
    per_feature = generate_segments(X, max_depth=1, max_values_per_feature={"country": 31})
    assert {d.removeprefix("country=") for d in per_feature.descriptions if d.startswith("country")} == set(COUNTRIES)
    assert sum(d.startswith("age") for d in per_feature.descriptions) == 3  # unnamed: the default 3
    assert per_feature.descriptions == generate_segments(X, max_depth=1, max_values_per_feature={
        "country": 31, "age": 3}).descriptions  # fmt: skip


@pytest.mark.parametrize(
    ("values", "error", "match"),
    [
        ({"town": 5}, ValueError, r"max_values_per_feature must name features of X .*got unknown \['town'\]"),
        ({"country": 1}, ValueError, r"max_values_per_feature\['country'\] must be an integer >= 2; got 1"),
        ({"country": 2.5}, TypeError, r"max_values_per_feature\['country'\] must be an integer >= 2"),
        (1, ValueError, "max_values_per_feature must be an integer >= 2; got 1"),
    ],
)
def test_a_bad_number_of_values_is_refused_by_name(table, values, error, match):
    with pytest.raises(error, match=match):
        generate_segments(table[["country", "age"]], max_values_per_feature=values)
    with pytest.raises(error, match=match):
        per_value_table(table["y"], table["p"], X=table[["country", "age"]], max_values_per_feature=values)


# -- the command line -------------------------------------------------------------------------------------------
def evaluate_json(csv, capsys, *segments):
    assert main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", "--max-depth", "1", "--json",
                 *segments]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)


def test_evaluate_names_the_planted_countries_with_more_values_per_column(csv, capsys):
    default = evaluate_json(csv, capsys, "--segments", "country")
    assert not significant(default["segments"]["p"]) & PLANTED  # the 2 most frequent and "not in {...}"
    per_column = evaluate_json(csv, capsys, "--segments", "country:31,age")
    countries = [row for row in per_column["segments"]["p"] if not row["description"].startswith("age")]
    assert significant(countries) == PLANTED | {"all"}  # age is off too: the planted error shifts every bin
    global_option = evaluate_json(csv, capsys, "--segments", "country", "--segment-values", "31")
    assert len(global_option["segments"]["p"]) == 31  # the whole table and every country
    assert significant(global_option["segments"]["p"]) == PLANTED | {"all"}


def test_evaluate_lists_every_value_and_names_the_planted_ones_by_default(csv, capsys):
    out = evaluate_json(csv, capsys, "--segments", "country")
    per_value = out["per_value"]
    assert per_value["min_samples_per_value"] == 10 and per_value["n_left_out"] == {"country": 0}
    assert len(per_value["rows"]["p"]) == 30 and significant(per_value["rows"]["p"]) == PLANTED
    assert main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", "--segments", "country"]) == 0
    printed = capsys.readouterr().out.split("per value (every value with >= 10 rows", 1)[1]
    assert all(f"country={c}" in printed for c in COUNTRIES)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--segments", "country:1"], "--segments 'country:1': the number of values must be an integer >= 2; got 1"),
        (["--segment-values", "4"], "--segment-values needs --segments"),
        (["--segments", "country:4,country"], "--segments must name each entry once"),
        # review of issue 32: "country:" was read as "country", "country:-3" said only "not a column of DATA"
        (
            ["--segments", "country:"],
            "--segments 'country:': NAME:N needs the number of values N after ':'; got nothing",
        ),
        (
            ["--segments", "age,country:-3"],
            "--segments 'country:-3': the number of values after ':' must be an integer"
            " >= 2 (nor is 'country:-3' a column of DATA); got '-3'",
        ),
    ],
)
def test_bad_numbers_of_values_exit_2_naming_the_option(csv, capsys, extra, message):
    assert main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", *extra]) == 2
    assert message in capsys.readouterr().err


def test_a_segment_values_below_2_is_a_usage_error(csv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", str(csv), "--score-col", "p", "--label-col", "y", "--segments", "country",
              "--segment-values", "1"])  # fmt: skip
    assert (
        exc.value.code == 2 and "argument --segment-values: must be an integer >= 2; got 1" in capsys.readouterr().err
    )


def test_report_has_a_per_value_section_listing_every_country(csv, tmp_path):
    out = tmp_path / "report.html"
    assert main(["report", str(csv), "--score-col", "p", "--label-col", "y", "--segments", "country", "--max-depth",
                 "1", "-o", str(out)]) == 0  # fmt: skip
    section = out.read_text().split('<section id="values">', 1)[1].split("</section>", 1)[0]
    assert all(f"<td>country={c}</td>" in section for c in COUNTRIES)
    assert "at least 10 rows" in section


def test_regression_report_has_the_per_value_section_naming_the_planted_countries(table, tmp_path):
    # issue 32: the per-value table was in the reports of binary labels only
    rng = np.random.default_rng(5)
    planted = table["country"].isin(PLANTED).to_numpy()
    outcome = table["p"] + 0.15 * planted + rng.normal(0, 0.3, len(table))
    path = tmp_path / "real.csv"
    table.assign(y=outcome).to_csv(path, index=False)
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--score-col", "p", "--label-col", "y", "--outcome", "regression",
                 "--segments", "country", "--max-depth", "1", "-o", str(out)]) == 0  # fmt: skip
    section = out.read_text().split('<section id="values">', 1)[1].split("</section>", 1)[0]
    rows = dict(re.findall(r"<tr><td>country=(c\d\d)</td>.*?<td>([^<]*)</td></tr>", section))
    assert sorted(rows) == COUNTRIES  # every country, each with its Holm-adjusted p-value last
    assert {c for c, text in rows.items() if text.startswith("&lt;") or float(text) < 0.05} == PLANTED


def test_monitor_prints_the_per_value_table_of_the_latest_window(table, tmp_path, capsys):
    path = tmp_path / "stream.csv"
    table.assign(t=np.arange(len(table)) // 10000).to_csv(path, index=False)
    assert main(["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--window", "1",
                 "--segments", "country:2", "--max-depth", "1", "--json"]) == 0  # fmt: skip
    per_value = json.loads(capsys.readouterr().out)["per_value"]
    latest = table.iloc[30000:]
    assert per_value["window_start"] == 3.0 and len(per_value["rows"]) == 30
    sizes = {row["description"]: row["size"] for row in per_value["rows"]}
    assert sizes == {f"country={c}": int(n) for c, n in latest["country"].value_counts().items()}


def test_monitor_page_has_the_per_value_section_of_the_latest_window(table, tmp_path):
    # issue 32: the terminal and --json listed every value, the -o page did not
    path = tmp_path / "stream.csv"
    table.assign(t=np.arange(len(table)) // 10000).to_csv(path, index=False)
    out = tmp_path / "monitor.html"
    assert main(["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--window", "1",
                 "--segments", "country:2", "--max-depth", "1", "--n-resamples", "0", "-o", str(out)]) == 0  # fmt: skip
    section = out.read_text().split('<section id="values">', 1)[1].split("</section>", 1)[0]
    latest = table.iloc[30000:]["country"].value_counts()
    sizes = dict(re.findall(r"<tr><td>country=(c\d\d)</td><td[^>]*>(\d+)</td>", section))
    assert {c: int(n) for c, n in sizes.items()} == latest.to_dict()  # every country, counted in the latest window
    assert "In the latest window, every value of each segment column with at least 10 rows" in section


def test_monitor_says_so_when_no_value_of_the_latest_window_has_enough_rows(table, tmp_path, capsys):
    # a latest window of 20 rows over 30 countries: the header was printed over an empty table
    path = tmp_path / "stream.csv"
    table.assign(t=(np.arange(len(table)) >= len(table) - 20).astype(int)).to_csv(path, index=False)
    out = tmp_path / "monitor.html"
    argv = ["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--window", "1",
            "--segments", "country:2", "--max-depth", "1", "--n-resamples", "0"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out.split("\nper value (", 1)[1]
    present = table["country"].iloc[-20:].nunique()
    assert f"{present} of country with fewer left out" in " ".join(printed.split()) and printed.rstrip().endswith(
        ":\n    none listed"
    )
    assert main([*argv, "-o", str(out)]) == 0
    section = out.read_text().split('<section id="values">', 1)[1].split("</section>", 1)[0]
    assert "<table" not in section and "<p>No value listed.</p>" in section


def test_make_report_adds_the_per_value_section_and_checks_its_tables(table, tmp_path):
    from mcal.report import make_report

    y, p, X = table["y"].to_numpy(), table["p"].to_numpy(), table[["country"]]
    tables = {"model": per_value_table(y, p, X=X)}
    html = make_report(y, {"model": p}, path=tmp_path / "r.html", per_value=tables).read_text()
    assert html.count("<tr><td>country=") == 30 and '<a href="#values">' in html
    with pytest.raises(TypeError, match="per_value must be a mapping of score column names to PerValueTable"):
        make_report(y, {"model": p}, path=tmp_path / "r.html", per_value={"model": tables["model"].table})
    with pytest.raises(ValueError, match=r"per_value must have one table per score column \['model'\]"):
        make_report(y, {"model": p}, path=tmp_path / "r.html", per_value={"other": tables["model"]})


def test_evaluate_fits_the_per_value_table_to_the_terminal_with_every_score_column_of_a_value_together(
    table, tmp_path, capsys, monkeypatch
):
    # review of issue 32: the table was printed with pandas' to_string, as wide as its columns made it
    path = tmp_path / "two.csv"
    table.assign(q=table["p"] / 2).to_csv(path, index=False)
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["evaluate", str(path), "--score-col", "p", "--score-col", "q", "--label-col", "y", "--segments",
                 "country"]) == 0  # fmt: skip
    printed = capsys.readouterr().out.split("\nper value (", 1)[1]
    lines = printed.splitlines()
    assert max(len(line) for line in lines) <= 60
    for c in COUNTRIES:  # the value's line, then a row per score column: q (half of p) over-predicts nowhere
        at = next(i for i, line in enumerate(lines) if f"  country={c}: " in line)
        assert lines[at + 1].split()[0] == "p" and lines[at + 2].split()[:3][0::2] == ["q", "under"]
