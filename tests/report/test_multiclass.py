"""The HTML report of k classes: metrics, top-label and per-class reliability, worst-class segments; offline."""

import subprocess

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from mcal.cli import main
from mcal.metrics import classwise_mce, multiclass_summary, top_label_mce
from mcal.multiclass import MulticlassTemperatureScaling
from mcal.report import make_multiclass_report
from mcal.segments import generate_segments
from tests.report.test_report import _chromium, _Page


@pytest.fixture(scope="module")
def data(overconfident_k_classes):
    rng = np.random.default_rng(5)
    n = 3000
    raw, y, region = overconfident_k_classes(rng, n, 1.5, [0.0, 0.0, 1.0, 0.0])
    calibrated = MulticlassTemperatureScaling().fit(raw, y).predict(raw)
    X = pd.DataFrame({"region": region, "age": rng.integers(18, 80, n)})
    return y, {"raw": raw, "temperature": calibrated}, X


@pytest.fixture(scope="module")
def report(data, tmp_path_factory):
    y, probs, X = data
    path = tmp_path_factory.mktemp("report") / "multiclass.html"
    out = make_multiclass_report(y, probs, path=path, X=X, class_names=["ant", "bee", "cat", "dog"],
                                 title="k <classes>", n_worst_segments=5)  # fmt: skip
    return out, _Page(out.read_text(encoding="utf-8"))


def test_report_has_the_sections_of_k_classes(report):
    _, page = report
    for section in ("header", "metrics", "reliability", "classwise", "multicalibration"):
        assert section in page.sections


def test_metrics_table_holds_the_numbers_of_multiclass_summary_and_the_mces(report, data):
    y, probs, X = data
    _, page = report
    expected = multiclass_summary(y, probs)
    for metric in ("log_loss", "brier_score", "accuracy", "top_label_ece", "classwise_ece"):
        np.testing.assert_allclose(page.metrics[metric], expected[metric].to_numpy(), rtol=1e-12)
    segs = generate_segments(X)
    worst = [classwise_mce(y, P, segments=segs).mce_sigma for P in probs.values()]
    np.testing.assert_allclose(page.metrics["classwise_mce_sigma"], worst, rtol=1e-12)
    top = [top_label_mce(y, P, segments=segs).mce_sigma for P in probs.values()]
    np.testing.assert_allclose(page.metrics["top_label_mce_sigma"], top, rtol=1e-12)
    assert page.metrics["log_loss"][1] < page.metrics["log_loss"][0]  # temperature scaling fitted on these rows


def test_one_top_label_panel_per_matrix_and_one_reliability_panel_per_class(report):
    _, page = report
    alts = [img["alt"] for img in page.images]
    assert sorted(a for a in alts if a.startswith("Top-label")) == [
        "Top-label reliability diagram of raw", "Top-label reliability diagram of temperature"]  # fmt: skip
    assert [a for a in alts if a.startswith("One-vs-rest")] == [
        f"One-vs-rest reliability of class {c}" for c in ("ant", "bee", "cat", "dog")
    ]


def test_worst_class_is_the_planted_one_and_its_segments_are_listed(report, data):
    y, probs, X = data
    _, page = report
    per_class = page.table("classwise")[0]
    assert [row[0][1] for row in per_class[1:]] == ["ant", "bee", "cat", "dog", "top label"]
    result = classwise_mce(y, probs["raw"], segments=generate_segments(X))
    assert result.worst_class == 2  # cat, under-predicted in the north
    assert "raw: worst class cat" in "".join(page.text)
    rows = page.table("worst-class")[0][1:]
    assert len(rows) == 5
    listed = [float(r[4][0]) for r in rows]
    np.testing.assert_allclose(listed, result.per_class[2].table["ecce_sigma"].head(5), rtol=1e-12)
    assert rows[0][1][1] == "region=north"


def test_report_is_self_contained_and_escapes_user_strings(report):
    out, page = report
    raw = out.read_text()
    assert "<link" not in raw and "url(" not in raw and raw.count("<script") == 1
    assert all(img["src"].startswith("data:image/svg+xml;base64,") for img in page.images)
    assert "k &lt;classes&gt;" in raw and "k <classes>" not in raw


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"y_probs": {"a": np.full((4, 3), 0.5)}}, ValueError, r"probability matrix 'a' rows must sum to 1"),
        ({"y_probs": {"a": np.eye(3)[[0, 1, 2, 0]], "b": np.eye(2)[[0, 1, 1, 0]]}}, ValueError,
         "same number of classes"),
        ({"class_names": ["x", "y"]}, ValueError, "class_names must name the 3 classes"),
        ({"y_true": [0, 1, 5, 7]}, ValueError, "y_true"),
        ({"y_probs": [np.eye(3)]}, TypeError, "y_probs must be a mapping"),
    ],
)  # fmt: skip
def test_bad_input_raises_clearly_and_writes_no_file(tmp_path, kwargs, error, match):
    args = {"y_true": [0, 1, 2, 0], "y_probs": {"a": np.full((4, 3), 1 / 3)}, **kwargs}
    path = tmp_path / "r.html"
    with pytest.raises(error, match=match):
        make_multiclass_report(args.pop("y_true"), args.pop("y_probs"), path=path, **args)
    assert not path.exists()


def test_cli_report_of_score_cols_writes_the_report(data, tmp_path, capsys):
    y, probs, X = data
    cols = [f"p_{c}" for c in ("ant", "bee", "cat", "dog")]
    df = pd.DataFrame(probs["raw"], columns=cols).assign(y=np.array(["ant", "bee", "cat", "dog"])[y], **X)
    df.to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "d.csv"), "--score-cols", ",".join(cols), "--label-col", "y",
                 "--segments", "region,age", "-o", str(out)]) == 0  # fmt: skip
    assert f"wrote {out}" in capsys.readouterr().out
    page = _Page(out.read_text())
    np.testing.assert_allclose(page.metrics["log_loss"], multiclass_summary(y, {"raw": probs["raw"]})["log_loss"])
    assert "One-vs-rest reliability of class dog" in [img["alt"] for img in page.images]
    assert main(["report", str(tmp_path / "d.csv"), "--score-cols", ",".join(cols), "--label-col", "region",
                 "-o", str(tmp_path / "bad.html")]) == 2  # fmt: skip
    assert "got labels ['north', 'south'] and the columns" in capsys.readouterr().err
    assert not (tmp_path / "bad.html").exists()


@pytest.mark.slow
def test_headless_browser_renders_the_figures(report, tmp_path):
    out, _ = report
    png = tmp_path / "shot.png"
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
           f"--screenshot={png}", "--window-size=1200,2000", out.resolve().as_uri()]  # fmt: skip
    subprocess.run(cmd, capture_output=True, timeout=120, check=True)
    image = matplotlib.image.imread(png)[..., :3]
    assert image.shape[:2] == (2000, 1200)
    # matplotlib's first colour (#1f77b4) appears only in the drawn figures
    blue = np.abs(image - np.array([0x1F, 0x77, 0xB4]) / 255).max(axis=2) < 0.08
    assert blue.sum() > 2000, f"figures not rendered: {blue.sum()} pixels of the curve colour"
