"""The HTML report: every section, the numbers of mcal.metrics, self-contained, rendered by a real browser."""

import base64
import datetime
import shutil
import subprocess
from html.parser import HTMLParser

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

import mcal
from mcal.cli import main
from mcal.metrics import calibration_summary, field_pcoc, mce, pcoc, reliability_intervals, worst_segments
from mcal.report import make_report
from mcal.segments import generate_segments


class _Page(HTMLParser):
    """Sections, tables (rows of cells with their data-value), images and text of a report."""

    def __init__(self, text):
        super().__init__()
        self.sections, self.images, self.tables, self.text = [], [], [], []
        self.metrics = {}
        self._row = self._cell = self._metric = self._table_class = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("section", "header", "footer") and "id" in a:
            self.sections.append(a["id"])
        elif tag == "img":
            self.images.append(a)
        elif tag == "table":
            self.tables.append((a.get("class"), []))
        elif tag == "tr":
            self._row, self._metric = [], a.get("data-metric")
        elif tag in ("td", "th") and self._row is not None:
            self._cell = [a.get("data-value"), ""]

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(tuple(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1][1].append(self._row)
            if self._metric is not None and self.tables[-1][0] == "metrics":
                self.metrics[self._metric] = [float(v) for v, _ in self._row[1:]]
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell[1] += data

    def table(self, cls):
        return [rows for c, rows in self.tables if cls in (c or "").split()]


def _findings(page):
    """The worst-segment table as (segment cells: #, segment, rows, observed, similar; rows of its score columns:
    score column, mean score, error, ECCE / σ, p) per listed segment: its first row holds both."""
    groups = []
    for row in page.table("findings")[0][1:]:  # after the header row
        if len(row) > 5:
            groups.append((row[:5], [row[5:10]]))
        else:
            groups[-1][1].append(row)
    return groups


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 3000
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(size=n) < p).astype(float)  # p is calibrated by construction
    q = expit(2.0 * logit(p) - 0.5)  # over-confident and low
    field = rng.choice(["north", "south", "<east>"], n)
    w = rng.uniform(0.5, 2.0, n)
    X = pd.DataFrame({"age": rng.integers(18, 80, n), "device": rng.choice(["ios", "android"], n), "region": field})
    return y, {"calibrated": p, "distorted": q}, field, w, X


@pytest.fixture(scope="module")
def report(data, tmp_path_factory):
    y, probs, field, w, X = data
    path = tmp_path_factory.mktemp("report") / "report.html"
    out = make_report(
        y,
        probs,
        path=path,
        X=X,
        field=pd.Series(field, name="region"),
        sample_weight=w,
        title="Test <report>",
        description="fixed sample & friends",
        n_worst_segments=4,
    )
    return out, _Page(out.read_text(encoding="utf-8"))


def test_make_report_returns_the_path_it_wrote(report):
    out, _ = report
    assert out.name == "report.html" and out.read_text().startswith("<!DOCTYPE html>")


def test_report_has_every_section(report):
    _, page = report
    assert page.sections == ["header", "verdict", "metrics", "reliability", "cumulative", "multicalibration",
                             "features", "fields", "notes"]  # fmt: skip


def test_metrics_table_holds_the_numbers_of_calibration_summary(report, data):
    y, probs, field, w, _X = data
    _, page = report
    expected = calibration_summary(y, probs, sample_weight=w, field=field)
    assert set(page.metrics) == set(expected.columns)
    for metric, values in page.metrics.items():
        np.testing.assert_array_equal(values, expected[metric].to_numpy(), err_msg=metric)
    header = page.table("metrics")[0][0]
    assert [text for _, text in header] == ["metric", "calibrated", "distorted"]


def test_the_calibrated_column_wins_the_calibration_rows(report):
    _, page = report
    assert page.metrics["ece"][0] < page.metrics["ece"][1]
    assert page.metrics["ecce_pvalue"][0] > 0.05 > page.metrics["ecce_pvalue"][1]


def test_header_says_what_data_rows_weights_when_and_which_version(report, data):
    y, _, _, w, _ = data
    _, page = report
    text = " ".join(page.text)
    assert "fixed sample & friends" in text
    assert f"{len(y):,}" in text
    assert f"total {w.sum():,.6g}" in text
    assert mcal.__version__ in text
    assert datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d") in text
    assert "region (3 values)" in text


def test_every_figure_is_embedded_svg(report):
    _, page = report
    n_listed = len(_findings(page))
    # the overlay, three panels per score column, and a small diagram of every column per listed segment
    assert n_listed >= 4 and len(page.images) == 1 + 2 * 3 + n_listed
    for img in page.images:
        assert img["src"].startswith("data:image/svg+xml;base64,")
        svg = base64.b64decode(img["src"].split(",", 1)[1])
        assert b"<svg" in svg[:1000] and b"</svg>" in svg[-100:]


def test_every_score_column_gets_a_reliability_a_cumulative_and_a_segment_panel(report):
    _, page = report
    panels = [img["alt"] for img in page.images if "class" not in img][1:]  # after the overlay of every column
    assert page.images[0]["alt"].startswith("Reliability diagram of every score column (calibrated, distorted)")
    assert [a.rsplit(" of ", 1)[1].split(" ")[0] for a in panels] == ["calibrated", "distorted"] * 3
    assert [a.split(" ")[0] for a in panels] == ["Reliability"] * 2 + ["Cumulative"] * 2 + ["ECCE"] * 2


def test_mce_section_holds_the_numbers_of_mce_and_its_worst_segments(report, data):
    y, probs, _, w, X = data
    _, page = report
    summary = {row[0][1]: [float(v) for v, _ in row[1:]] for row in page.table("mce")[0][1:]}
    segs = generate_segments(X)
    results = {name: mce(y, p, segments=segs, sample_weight=w) for name, p in probs.items()}
    for k, result in enumerate(results.values()):
        assert summary["MCE (ECCE / σ of the worst segment)"][k] == result.mce_sigma
        assert summary["p-value"][k] == result.pvalue
        assert summary["p-value, Holm-adjusted over the segments"][k] == result.pvalue_adjusted
        assert summary["minimum detectable error"][k] == result.mde
    assert summary["MCE (ECCE / σ of the worst segment)"][0] < summary["MCE (ECCE / σ of the worst segment)"][1]
    # one table follows the first column's worst segments, then the second's, across both columns
    worst = worst_segments(results, segs, n_worst=4, sample_weight=w)
    groups = _findings(page)
    listed = worst.drop_duplicates("rank")
    assert [head[1][1] for head, _ in groups] == listed["description"].tolist()
    assert [int(head[2][1].replace(",", "")) for head, _ in groups] == listed["size"].tolist()
    assert all([r[0][1] for r in rows] == list(probs) for _, rows in groups)  # every column beneath its segment
    for k, name in enumerate(probs):
        mine = worst[worst["score"] == name]
        assert [float(rows[k][3][0]) for _, rows in groups] == mine["ecce_sigma"].tolist()
        assert [rows[k][2][1] for _, rows in groups] == mine["direction"].tolist()
        assert [float(rows[k][4][0]) for _, rows in groups] == mine["pvalue_adjusted"].tolist()
    assert listed["listed_for"].iloc[0] == "calibrated" and "distorted" in set(listed["listed_for"])


def test_p_values_below_precision_never_print_as_zero(report):
    _, page = report
    cells = [c for table in page.table("findings") + page.table("mce") for row in table for c in row]
    tiny = [text for value, text in cells if value is not None and value != "nan" and float(value) == 0.0]
    assert tiny and all(text.startswith("< ") for text in tiny)


def test_verdict_tells_a_calibrated_column_from_a_miscalibrated_one(report):
    _, page = report
    text = " ".join(page.text)
    verdict = text.split("Verdict", 1)[1].split("Core metrics", 1)[0]
    calibrated, distorted = verdict.split("distorted :", 1)
    assert "calibrated overall: no evidence of miscalibration" in calibrated
    assert "In the segments: none of the" in calibrated
    assert "miscalibrated overall" in distorted and " fail " in distorted and "after the Holm adjustment" in distorted


def test_sections_without_segments_or_field_are_left_out(tmp_path, data):
    y, probs, _, _, _ = data
    page = _Page(make_report(y, probs, path=tmp_path / "r.html").read_text())
    assert page.sections == ["header", "verdict", "metrics", "reliability", "cumulative", "notes"]


def test_per_bin_tables_hold_the_wilson_intervals(report, data):
    y, probs, _, w, _ = data
    _, page = report
    for rows, p in zip(page.table("bins"), probs.values(), strict=False):
        iv = reliability_intervals(y, p, sample_weight=w, n_bins=10, confidence=0.95)
        body = rows[1:]
        assert len(body) == 10
        lower = [float(r[4][0]) for r in body]
        upper = [float(r[5][0]) for r in body]
        np.testing.assert_array_equal(lower, iv.lower)
        np.testing.assert_array_equal(upper, iv.upper)


def test_per_bin_table_prints_edges_that_tell_adjacent_bins_apart(tmp_path):
    # 200 bins of width 0.005 read "[0.00, 0.00)" to 2 decimals; 3 decimals give "[0.000, 0.005)"
    rng = np.random.default_rng(3)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    page = _Page(make_report(y, {"p": p}, path=tmp_path / "r.html", n_bins=200, progress=False).read_text())
    labels = [r[0][1] for r in page.table("bins")[0][1:]]
    assert len(labels) == 200 and len(set(labels)) == 200
    assert labels[0] == "[0.000, 0.005)" and labels[-1] == "[0.995, 1.000]"


def test_calibrated_column_stays_on_the_diagonal_within_its_intervals(report):
    _, page = report
    body = page.table("bins")[0][1:]
    mean_score = np.array([float(r[2][0]) for r in body])
    lower, upper = (np.array([float(r[k][0]) for r in body]) for k in (4, 5))
    assert np.all((lower <= mean_score) & (mean_score <= upper))
    distorted = page.table("bins")[1][1:]
    outside = [not (float(r[4][0]) <= float(r[2][0]) <= float(r[5][0])) for r in distorted]
    assert sum(outside) >= 5


def test_field_section_holds_pcoc_per_field_and_f_rce(report, data):
    y, probs, field, w, _X = data
    _, page = report
    rows = page.table("fields")[0][1:]
    assert sorted(r[0][1] for r in rows) == ["<east>", "north", "south"]
    for r in rows:
        rows_k = field == r[0][1]
        assert float(r[1][0]) == pytest.approx(w[rows_k].sum(), rel=1e-12)
        for cell, p in zip(r[2:], probs.values(), strict=False):
            assert float(cell[0]) == pytest.approx(pcoc(y[rows_k], p[rows_k], sample_weight=w[rows_k]), rel=1e-12)
    frce, spread = page.table("frce")[0][1:]
    np.testing.assert_array_equal([float(v) for v, _ in frce[1:]], page.metrics["f_rce"])
    expected = [field_pcoc(y, p, field=field, sample_weight=w).std for p in probs.values()]
    np.testing.assert_allclose([float(v) for v, _ in spread[1:]], expected, rtol=1e-12)


def test_user_strings_are_escaped(tmp_path):
    rng = np.random.default_rng(1)
    p = rng.uniform(size=200)
    y = rng.uniform(size=200) < p
    name = "<script>alert(1)</script>"
    out = make_report(
        y,
        {name: p},
        path=tmp_path / "r.html",
        field=np.where(p > 0.5, "<b>x</b>", "y"),
        title="<i>t</i>",
        description='"quoted" <tag>',
    )
    raw = out.read_text()
    assert "<script>alert" not in raw and "<b>x</b>" not in raw and "<i>t</i>" not in raw and "<tag>" not in raw
    text = " ".join(_Page(raw).text)
    assert name in text and "<b>x</b>" in text and '"quoted" <tag>' in text


def test_report_is_self_contained(report):
    out, page = report
    raw = out.read_text()
    assert "<link" not in raw and "@import" not in raw and "url(" not in raw
    assert raw.count("<script") == 1 and "<script>" in raw  # the inline one that sorts tables, nothing fetched
    assert "http://" not in raw.split("<body>", 1)[1].replace("http://www.w3.org", "")
    assert all(img["src"].startswith("data:") for img in page.images)


def test_report_size_does_not_grow_with_the_rows(tmp_path):
    rng = np.random.default_rng(2)
    sizes = []
    for n in (2_000, 200_000):
        p = rng.uniform(size=n)
        y = rng.uniform(size=n) < p
        sizes.append(make_report(y, {"p": p}, path=tmp_path / f"r{n}.html").stat().st_size)
    assert sizes[1] < 1.5 * sizes[0] and sizes[1] < 500_000


def test_report_leaves_matplotlib_global_style_alone(tmp_path, data):
    y, probs, _, _, _ = data
    before = dict(matplotlib.rcParams)
    make_report(y, probs, path=tmp_path / "r.html")
    assert dict(matplotlib.rcParams) == before


@pytest.mark.slow
def test_progress_bar_on_request(tmp_path, data, capsys):
    y, probs, _, _, _ = data
    make_report(y, probs, path=tmp_path / "r.html", progress=True)
    assert "report" in capsys.readouterr().err
    make_report(y, probs, path=tmp_path / "q.html")
    assert capsys.readouterr().err == ""


# ----------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "y, probs, kwargs, error, match",
    [
        ([0, 1, 1], {"p": [0.1, np.nan, 0.5]}, {}, ValueError, "score column 'p' must be finite"),
        ([0, 1, 1], {"p": [np.nan] * 3}, {}, ValueError, "score column 'p' must be finite"),
        ([1], {"p": [0.5]}, {}, ValueError, "at least 2 rows for a report; got 1"),
        ([1, 1, 1], {"p": [0.2, 0.4, 0.5]}, {}, ValueError, "both classes"),
        ([0, 1, 1], {"p": [0.2, 0.4]}, {}, ValueError, "same number of samples"),
        ([0, 1, 1], {"p": [0.2, 0.4, 1.5]}, {}, ValueError, "score column 'p' must lie in \\[0, 1\\]"),
        ([0, 1, 1], {}, {}, ValueError, "at least one score column"),
        ([0, 1, 1], [0.2, 0.4, 0.5], {}, TypeError, "y_probs must be a mapping"),
        ([0, 1, 1], {3: [0.2, 0.4, 0.5]}, {}, TypeError, "keys must be strings"),
        ([0, 1, 2], {"p": [0.2, 0.4, 0.5]}, {}, ValueError, "y_true must be binary"),
        ([0, 1, 1], {"p": [0.2, 0.4, 0.5]}, {"sample_weight": [1, -1, 1]}, ValueError, "non-negative"),
        ([0, 1, 1], {"p": [0.2, 0.4, 0.5]}, {"confidence": 1.0}, ValueError, "confidence must be a number"),
        ([0, 1, 1], {"p": [0.2, 0.4, 0.5]}, {"n_bins": 0}, ValueError, "n_bins must be a positive integer"),
        ([0, 1, 1], {"p": [0.2, 0.4, 0.5]}, {"title": 3}, TypeError, "title must be a string"),
        (
            [0, 1, 1],
            {"p": [0.2, 0.4, 0.5]},
            {"X": [[1], [2], [3]], "segments": np.ones((3, 1), bool)},
            ValueError,
            "either X .* or segments, not both",
        ),
        (
            [0, 1, 1],
            {"p": [0.2, 0.4, 0.5]},
            {"segments": np.ones((2, 1), bool)},
            ValueError,
            "segments must cover 3 rows",
        ),
        (
            [0, 1, 1],
            {"p": [0.2, 0.4, 0.5]},
            {"X": [[1], [2], [3]], "n_worst_segments": 0},
            ValueError,
            "n_worst_segments must be a positive integer",
        ),
        (
            [0, 1, 1],
            {"p": [0.2, 0.4, 0.5]},
            {"X": [[1], [2], [3]], "n_worst_segments": 2.0},
            TypeError,
            "n_worst_segments must be a positive integer; got 2.0 of type float",
        ),
    ],
)
def test_bad_input_raises_clearly_and_writes_no_file(tmp_path, y, probs, kwargs, error, match):
    with pytest.raises(error, match=match):
        make_report(y, probs, path=tmp_path / "r.html", **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_folder_is_reported_before_any_work(tmp_path):
    with pytest.raises(FileNotFoundError, match="path must be in an existing folder"):
        make_report([0, 1], {"p": [0.2, 0.8]}, path=tmp_path / "nowhere" / "r.html")
    with pytest.raises(IsADirectoryError, match="path must name a file"):
        make_report([0, 1], {"p": [0.2, 0.8]}, path=tmp_path)


# ----------------------------------------------------------------------------------------------- command line


@pytest.fixture
def csv(data, tmp_path):
    y, probs, field, w, X = data
    df = pd.DataFrame(
        {
            "y": np.where(y == 1, "yes", "no"),
            **probs,
            "region": field,
            "w": w,
            "bad": np.nan,
            "age": X["age"],
            "device": X["device"],
        }
    )
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    return path


def test_cli_report_writes_the_report_and_prints_its_path(csv, tmp_path, data, capsys):
    out = tmp_path / "report.html"
    assert (
        main(
            [
                "report",
                str(csv),
                "--label-col",
                "y",
                "--pos-label",
                "yes",
                "--score-col",
                "calibrated",
                "--score-col",
                "distorted",
                "--field",
                "region",
                "--weight-col",
                "w",
                "--segments",
                "age,device",
                "--max-depth",
                "1",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    page = _Page(out.read_text())
    assert page.sections == ["header", "verdict", "metrics", "reliability", "cumulative", "multicalibration",
                             "features", "values", "fields", "notes"]  # fmt: skip
    y, probs, field, w, X = data
    expected = calibration_summary(y, probs, sample_weight=w, field=field)
    np.testing.assert_allclose(page.metrics["log_loss"], expected["log_loss"], rtol=1e-12)
    text = " ".join(page.text)
    assert str(csv) in text and "weight column 'w'" in text and "region (3 values)" in text
    n_segments = generate_segments(X[["age", "device"]], max_depth=1).n_segments
    assert f"over the {n_segments} segments" in text
    assert all(" & " not in head[1][1] for head, _ in _findings(page))  # depth 1: one condition each


@pytest.mark.parametrize(
    "args, match",
    [
        (["--score-col", "missing"], "--score-col 'missing' is not a column of DATA"),
        (["--score-col", "bad"], "score column 'bad' must be finite"),
        (["--score-col", "calibrated", "--field", "nope"], "--field 'nope' is not a column"),
        (["--score-col", "calibrated", "--score-col", "calibrated"], "each column once"),
        (["--score-col", "calibrated", "--weight-col", "nope"], "--weight-col 'nope' is not a column"),
        (["--score-col", "calibrated", "--segments", "age,nope"], "--segments 'nope' is not a column"),
        (["--score-col", "calibrated", "--segments", "age,"], "--segments must not hold an empty name"),
        (["--score-col", "calibrated", "--max-depth", "2"], "--max-depth needs --segments"),
        (["--score-col", "calibrated", "--categorical", "age"], "--categorical needs --segments"),
        (
            ["--score-col", "calibrated", "--segments", "age", "--categorical", "device"],
            "--categorical must name columns given with --segments ('age'); got ['device']",
        ),
        (
            ["--score-col", "calibrated", "--segments", "age", "--categorical", "age,age"],
            "--categorical must name each entry once",
        ),
        (
            ["--score-col", "calibrated", "--segments", "age", "--categorical", ","],
            "--categorical must not hold an empty",
        ),
    ],
)
def test_cli_bad_input_fails_clearly_and_writes_no_file(csv, tmp_path, capsys, args, match):
    out = tmp_path / "report.html"
    assert main(["report", str(csv), "--label-col", "y", "--pos-label", "yes", *args, "-o", str(out)]) == 2
    assert match in capsys.readouterr().err
    assert not out.exists()


def test_cli_one_row_data_fails_clearly_and_writes_no_file(tmp_path, capsys):
    path = tmp_path / "one.csv"
    pd.DataFrame({"y": [1], "p": [0.4]}).to_csv(path, index=False)
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--label-col", "y", "--score-col", "p", "-o", str(out)]) == 2
    assert "at least 2 rows" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow
def test_demo_writes_the_report_and_prints_its_path(tmp_path, capsys):
    assert main(["demo", "--quick", "--methods", "isotonic", "--output-dir", str(tmp_path / "d")]) == 0
    report = tmp_path / "d" / "report.html"
    assert f"report: {report}" in capsys.readouterr().out
    page = _Page(report.read_text())
    assert {"metrics", "reliability", "cumulative", "multicalibration", "fields"} <= set(page.sections)
    assert [t for _, t in page.table("metrics")[0][0]] == ["metric", "uncalibrated", "isotonic"]


# ----------------------------------------------------------------------------------------------- browser


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        "chromium not found: .ci/run installs Debian's chromium (apt-get install chromium); "
        "install it to run the browser check"
    )


@pytest.mark.slow
def test_importing_the_report_module_loads_no_matplotlib():
    import sys

    code = "import sys, mcal.report, mcal.plotting; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_segment_of_zero_weight_is_not_listed_and_gets_no_curve(tmp_path):
    rng = np.random.default_rng(3)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(float)
    w = np.ones(300)
    w[:30] = 0.0
    masks = np.zeros((300, 2), dtype=bool)
    masks[:, 0] = True
    masks[:30, 1] = True
    page = _Page(make_report(y, {"p": p}, path=tmp_path / "r.html", segments=masks, sample_weight=w).read_text())
    assert [head[1][1] for head, _ in _findings(page)] == ["segment 0"]
    assert sum("class" in img for img in page.images) == 1  # only the positive-weight segment has a curve


@pytest.mark.slow
def test_cli_report_int_coded_column_declared_categorical_segments_as_the_column_as_text(data, tmp_path, capsys):
    y, probs, _, _, X = data
    code = 1 + X["age"].to_numpy() // 10  # integer codes 2..8
    df = pd.DataFrame({"y": y.astype(int), "p": probs["distorted"], "device": X["device"], "code": code})
    pages = []
    as_text = df.assign(code=code.astype(str))
    for name, frame, extra in (("numbers", df, ["--categorical", "code"]), ("text", as_text, [])):
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
        out = tmp_path / f"{name}.html"
        assert main(["report", str(tmp_path / f"{name}.parquet"), "--label-col", "y", "--score-col", "p", "--segments",
                     "device,code", "--max-depth", "1", *extra, "-o", str(out)]) == 0  # fmt: skip
        pages.append(_Page(out.read_text()))
    assert pages[0].table("mce") == pages[1].table("mce")
    assert pages[0].table("segments") == pages[1].table("segments")
    assert "code=" in " ".join(head[1][1] for head, _ in _findings(pages[0]))  # values, not quantile bins


@pytest.mark.slow
def test_make_report_categorical_features_declares_an_int_coded_column_categorical(data, tmp_path):
    y, probs, _, _, X = data
    codes = X[["device"]].assign(code=1 + X["age"] // 10)
    declared = make_report(y, probs, path=tmp_path / "a.html", X=codes, categorical_features=["device", "code"])
    text = make_report(y, probs, path=tmp_path / "b.html", X=codes.assign(code=codes["code"].astype(str)))
    pages = [_Page(p.read_text()) for p in (declared, text)]
    assert pages[0].table("mce") == pages[1].table("mce") and pages[0].table("segments") == pages[1].table("segments")


def test_make_report_refuses_categorical_features_without_x(tmp_path):
    with pytest.raises(ValueError, match="categorical_features applies only to segments generated from X"):
        make_report([0, 1], {"p": [0.2, 0.8]}, path=tmp_path / "r.html", categorical_features=["a"])
    assert not (tmp_path / "r.html").exists()


@pytest.mark.slow
def test_worst_segment_table_is_capped_for_many_columns(tmp_path):
    from mcal.report._segments import MAX_FINDINGS_ROWS, MAX_THUMBNAIL_COLUMNS

    rng = np.random.default_rng(3)
    n = 2000
    X = pd.DataFrame({f"f{i}": rng.choice(["a", "b", "c"], n) for i in range(3)})
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < p).astype(float)
    probs = {f"col{k}": np.clip(p + rng.normal(0, 0.1, n), 0.01, 0.99) for k in range(8)}
    segs = generate_segments(X)
    results = {name: mce(y, q, segments=segs) for name, q in probs.items()}
    n_listed = worst_segments(results, segs, n_worst=10)["rank"].nunique()
    assert n_listed > MAX_FINDINGS_ROWS  # the cap is exercised
    path = make_report(y, probs, path=tmp_path / "r.html", segments=segs, n_worst_segments=10)
    page = _Page(path.read_text(encoding="utf-8"))
    groups = _findings(page)
    assert len(groups) == MAX_FINDINGS_ROWS and all(len(rows) == len(probs) for _, rows in groups)
    assert [int(head[0][1]) for head, _ in groups] == list(range(1, MAX_FINDINGS_ROWS + 1))  # the first ranks
    drawn = ", ".join(list(probs)[:MAX_THUMBNAIL_COLUMNS])
    thumbs = [img["alt"] for img in page.images if "reliability curves of the segment" in img["alt"]]
    assert len(probs) > MAX_THUMBNAIL_COLUMNS
    assert thumbs == [f"reliability curves of the segment for {drawn}"] * len(groups)
    text = "".join(page.text)
    assert f"first {MAX_FINDINGS_ROWS} of the {n_listed} segments listed" in text
    assert f"for the first {MAX_THUMBNAIL_COLUMNS} score columns" in text


def test_a_metric_p_value_below_its_floor_reads_below_it_never_zero(report):
    _, page = report
    (row,) = [r for r in page.table("metrics")[0] if r[0][1] == "ECCE p-value"]
    value, text = row[2]  # the distorted column: miscalibrated beyond the p-value's precision
    assert float(value) == 0.0 and text == "< 1e-15"
    assert float(row[1][0]) > 0.05 and row[1][1] == f"{float(row[1][0]):.3g}"


@pytest.mark.slow
def test_verdict_calls_an_error_that_changes_sign_over_or_under_confidence(tmp_path):
    # issue 32: an over-confident column (too low near 0, too high near 1) was called "under-predicted"
    rng = np.random.default_rng(5)
    n = 6000
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(size=n) < p).astype(float)
    X = pd.DataFrame({"region": rng.choice(["north", "south"], n)})
    probs = {"over": expit(2.0 * logit(p) - 0.5), "under": expit(0.5 * logit(p)), "shifted": expit(logit(p) + 0.6)}
    page = _Page(make_report(y, probs, path=tmp_path / "r.html", X=X).read_text(encoding="utf-8"))
    verdict = " ".join(page.text).split("Verdict", 1)[1].split("Core metrics", 1)[0]
    over, rest = verdict.split("under :", 1)
    under, shifted = rest.split("shifted :", 1)
    # the crossing of expit(2 logit p - 0.5) and p: logit p = 0.5, p = 0.62; of expit(logit(p) / 2): p = 0.5
    assert over.count("over-confident: scores too low below 0.6") == 2  # overall and in the worst segment
    assert "under-confident: scores too high below 0.5" in under and "over-confident" not in under
    assert "confident" not in shifted and "over-predicted" in shifted  # one-signed: too high everywhere


def test_verdict_calls_scores_that_fall_as_the_outcome_rises_reversed_not_over_confident(rng):
    # issue 32 item 10 review: a negative calibration slope (the observed rate falls as the score rises) was called
    # "over-confident: ... (calibration slope -1.00 < 1)", as if the scores were right but too extreme
    from mcal.report._verdict import confidence_shape

    p = rng.uniform(0.02, 0.98, 4000)
    y = (rng.uniform(size=p.size) < 1.0 - p).astype(float)
    shape = confidence_shape(y, p, np.ones_like(p))
    assert shape is not None and shape.startswith("reversed: the observed rate falls as the score rises")
    assert "confident" not in shape
    b = float(shape.split("slope ", 1)[1].split(" ")[0])
    assert -1.2 < b < -0.8  # the fitted slope of logit P(y = 1) = -logit p
    flat = (rng.uniform(size=p.size) < 0.3).astype(float)  # scores carry nothing: slope 0, over-confident
    assert confidence_shape(flat, p, np.ones_like(p)).startswith("over-confident")
