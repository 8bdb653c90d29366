"""The HTML report as a real browser draws it: figures rendered, no overlapping labels, no word broken in two.

Headless Chromium lays the page out; a script in the page measures it and ``--dump-dom`` brings the numbers back.
"""

import base64
import io
import json
import re
import subprocess
from html import unescape

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from scipy.special import expit, logit

from mcal.report import make_report
from tests.report.test_report import _chromium

pytestmark = pytest.mark.slow

#: The viewport width at which segment names used to break inside a word (issue 19).
WIDTH = 1300

_SVG = re.compile(r'src="data:image/svg\+xml;base64,([^"]+)"')

#: Measures the page: the box of every text of every inline figure (matplotlib writes a text as ``<g id="text_N">``
#: after a comment holding the string, a legend as ``<g id="legend_N">`` whose first patch is its frame), and the
#: words of the segment-name cells whose rectangles lie on more than one line.
_MEASURE = """
<script>
var box = function (el) { var r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
var label = function (el) {
  var c = Array.prototype.find.call(el.childNodes, function (n) { return n.nodeType === 8; });
  return c ? c.textContent.trim() : el.id;
};
var figures = Array.prototype.map.call(document.querySelectorAll("#measured-figures > svg"), function (svg) {
  return {
    texts: Array.prototype.map.call(svg.querySelectorAll('g[id^="text_"]'), function (g) {
      return {label: label(g), box: box(g), in_legend: g.closest('g[id^="legend_"]') !== null};
    }),
    legends: Array.prototype.map.call(svg.querySelectorAll('g[id^="legend_"] > g[id^="patch_"]:first-child'), box)
  };
});
var words = [], broken = [];
document.querySelectorAll("table.findings td.name, table.features td:first-child").forEach(function (td) {
  var walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT), node, m;
  while ((node = walker.nextNode())) {
    var re = /\\S+/g;
    while ((m = re.exec(node.data))) {
      var range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      var lines = new Set(Array.prototype.map.call(range.getClientRects(), function (r) { return Math.round(r.top); }));
      words.push(m[0]);
      if (lines.size > 1) broken.push(m[0]);
    }
  }
});
var pre = document.createElement("pre");
pre.id = "measured";
pre.textContent = JSON.stringify({figures: figures, words: words, broken: broken});
document.body.appendChild(pre);
</script>
"""


def _browse(page, tmp_path, *args, height=2000, width=WIDTH):
    """Run headless Chromium on ``page`` (a file) at ``width`` x ``height`` with ``args``; its stdout."""
    cmd = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={width},{height}",
        *args,
        page.resolve().as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


def _overlap(a, b, tol=0.5):
    """Whether boxes ``(left, top, right, bottom)`` share more than ``tol`` px in both directions."""
    return min(a[2], b[2]) - max(a[0], b[0]) > tol and min(a[3], b[3]) - max(a[1], b[1]) > tol


def _overlapping_labels(figures):
    """(figure index, label, label or "legend") for every two texts of a figure whose boxes intersect, and every
    text outside a legend that intersects the legend's frame."""
    found = []
    for k, fig in enumerate(figures):
        texts = [t for t in fig["texts"] if t["box"][2] > t["box"][0] and t["box"][3] > t["box"][1]]
        for i, a in enumerate(texts):
            found += [(k, a["label"], b["label"]) for b in texts[i + 1 :] if _overlap(a["box"], b["box"])]
            if not a["in_legend"]:
                found += [(k, a["label"], "legend") for frame in fig["legends"] if _overlap(a["box"], frame)]
    return found


def _measure(html, tmp_path):
    """Lay out ``html`` in Chromium with its figures also inlined (so their texts are in the DOM) and measure it."""
    inline = "".join(
        re.sub(r"^<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>)?", "", base64.b64decode(uri).decode("utf-8"))
        for uri in _SVG.findall(html)
    )
    page = tmp_path / "measured.html"
    page.write_text(
        html.replace("</body>", f'<div id="measured-figures">{inline}</div>{_MEASURE}</body>'), encoding="utf-8"
    )
    dom = _browse(page, tmp_path, "--dump-dom")
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    return json.loads(unescape(found.group(1)))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report with three score columns and segment names of two conditions on long feature names."""
    rng = np.random.default_rng(11)
    n = 4000
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(size=n) < p).astype(float)
    X = pd.DataFrame({
        "customer_segment": rng.choice(["enterprise", "small_business", "consumer"], n),
        "acquisition_channel": rng.choice(["organic_search", "paid_social", "referral"], n),
        "tenure_months": rng.integers(1, 120, n),
    })  # fmt: skip
    probs = {"calibrated": p, "over-confident": expit(2.0 * logit(p) - 0.5), "shifted": expit(logit(p) + 0.4)}
    path = tmp_path_factory.mktemp("report") / "report.html"
    return make_report(y, probs, path=path, X=X, n_worst_segments=6).read_text(encoding="utf-8")


def _svg_uri(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="svg")
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def test_headless_browser_renders_the_figures(report, tmp_path):
    page, png = tmp_path / "report.html", tmp_path / "shot.png"
    page.write_text(report, encoding="utf-8")
    _browse(page, tmp_path, f"--screenshot={png}")
    image = matplotlib.image.imread(png)[..., :3]  # floats in [0, 1]
    assert image.shape[:2] == (2000, WIDTH)
    non_white = (image < 0.9).any(axis=2).mean()
    assert non_white > 0.03, f"screenshot nearly blank: {non_white:.3%} non-white pixels"
    # matplotlib's first colour (#1f77b4) only appears in the drawn figures, not in text or tables
    blue = np.abs(image - np.array([0x1F, 0x77, 0xB4]) / 255).max(axis=2) < 0.08
    assert blue.sum() > 2000, f"figures not rendered: {blue.sum()} pixels of the curve colour"


def test_no_two_labels_overlap_and_no_segment_name_breaks_inside_a_word(report, tmp_path):
    measured = _measure(report, tmp_path)
    n_figures = len(_SVG.findall(report))
    assert len(measured["figures"]) == n_figures > 10
    assert all(len(fig["texts"]) >= 5 for fig in measured["figures"])  # every figure's ticks and labels measured
    assert _overlapping_labels(measured["figures"]) == []
    assert len(measured["words"]) > 20
    assert measured["broken"] == [], f"words broken across lines at {WIDTH} px"


def test_the_browser_check_finds_overlapping_labels_and_broken_words(report, tmp_path):
    # the same report with one figure whose labels collide and the old rule that let a cell break anywhere
    ax = Figure(figsize=(4, 3)).add_subplot()
    ax.plot([0, 1], [0, 1], label="a long legend entry")
    ax.legend(loc="upper left")
    ax.text(0.5, 0.5, "first label", fontsize=12)
    ax.text(0.52, 0.51, "second label", fontsize=12)
    ax.text(0.02, 0.93, "under the legend", fontsize=10)
    bad = report.replace(
        "</style>", "table.findings td.name, span.cond { white-space: normal; max-width: 2rem; overflow-wrap: anywhere; }"
        "</style>"
    ).replace("</body>", f'<img src="{_svg_uri(ax.figure)}"></body>')  # fmt: skip
    measured = _measure(bad, tmp_path)
    found = {(a, b) for _, a, b in _overlapping_labels(measured["figures"][-1:])}
    assert {("first label", "second label"), ("under the legend", "legend")} <= found
    assert len(measured["broken"]) > 5


#: Measures the table of the worst segments: the box of every cell of its first segment, with the row's score
#: column, the viewport's width, and how far the table overflows its scrolling box; once the page has loaded, so that
#: the small curves have their size.
_MEASURE_FINDINGS = """
<script>
window.addEventListener("load", function () {
var table = document.querySelector("table.TABLE"), first = table.tBodies[0], cells = [];
Array.prototype.forEach.call(first.rows, function (row) {
  Array.prototype.forEach.call(row.cells, function (cell) {
    var r = cell.getBoundingClientRect();
    cells.push({score: row.getAttribute("data-score"), text: cell.textContent.trim(), left: r.left, right: r.right});
  });
});
var pre = document.createElement("pre");
pre.id = "measured";
pre.textContent = JSON.stringify({viewport: document.documentElement.clientWidth, cells: cells,
  overflow: table.parentElement.scrollWidth - table.parentElement.clientWidth});
document.body.appendChild(pre);
});
</script>
"""


def _assert_first_group_on_screen(report, tmp_path, width, table):
    """Every cell of the first ``<tbody>`` of ``table.<table>`` (a row per score column) lies within the viewport of
    ``width`` px, and the table does not scroll sideways."""
    page = tmp_path / "measured.html"
    page.write_text(report.replace("</body>", f"{_MEASURE_FINDINGS.replace('TABLE', table)}</body>"), encoding="utf-8")
    found = re.search(r'<pre id="measured">(.*?)</pre>', _browse(page, tmp_path, "--dump-dom", width=width), re.S)
    assert found, "the measuring script did not run"
    measured = json.loads(unescape(found.group(1)))
    assert measured["viewport"] <= width
    scored = [c for c in measured["cells"] if c["score"] is not None]
    names = ["calibrated", "over-confident", "shifted"]
    assert [c["text"] for c in scored if c["text"] in names] == names
    outside = [c for c in measured["cells"] if c["left"] < 0 or c["right"] > measured["viewport"]]
    assert outside == [], f"cells of the first group of table.{table} beyond the {width}-px viewport"
    assert measured["overflow"] <= 0, f"table.{table} scrolls sideways"


#: Only the worst-segment table is shown in the screenshots, so that its first rows are on screen.
_FINDINGS_ONLY = (
    "header, nav, section:not(#multicalibration), #multicalibration > .grid, #multicalibration > p, "
    "#multicalibration > .scroll:first-of-type { display: none; }</style>"
)

#: The colours of the swatches beside the first three score columns' names (matplotlib's first three).
_SWATCHES = ((0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E), (0x2C, 0xA0, 0x2C))


@pytest.mark.parametrize("width", [1280, 1920])
def test_every_score_column_of_a_worst_segment_is_on_screen(report, tmp_path, width):
    # issue 32: with three score columns, only the first column's numbers were on screen at 1400 and 1920 px
    page = tmp_path / "measured.html"
    _assert_first_group_on_screen(report, tmp_path, width, "findings")
    shot = tmp_path / f"findings-{width}.png"
    page.write_text(report.replace("</style>", _FINDINGS_ONLY), encoding="utf-8")
    _browse(page, tmp_path, f"--screenshot={shot}", height=900, width=width)
    image = matplotlib.image.imread(shot)[..., :3]
    assert image.shape[:2] == (900, width)
    for colour in _SWATCHES:  # the swatch beside each column's name, in the first rows on screen
        near = np.abs(image - np.array(colour) / 255).max(axis=2) < 0.03
        assert near.sum() >= 50, f"no swatch of colour {colour} on screen at {width} px"


#: Clicks the worst-segment table's "ECCE / σ" heading once (ascending) and then again (descending), recording
#: each time every segment group with the ECCE / σ values of its rows and their score columns.
_SORT_FINDINGS = """
<script>
window.addEventListener("load", function () {
  var table = document.querySelector("table.findings"), out = [];
  var heading = Array.prototype.find.call(table.tHead.rows[0].cells, function (th) {
    return th.textContent === "ECCE / σ";
  });
  var groups = function () {
    return Array.prototype.map.call(table.tBodies, function (body) {
      return {segment: body.getAttribute("data-segment"), rows: Array.prototype.map.call(body.rows, function (row) {
        return {score: row.getAttribute("data-score"),
                ecce: parseFloat(row.cells[row.cells.length - (row.rowIndex === body.rows[0].rowIndex ? 3 : 2)]
                                   .getAttribute("data-value"))};
      })};
    });
  };
  heading.click(); out.push(groups());
  heading.click(); out.push(groups());
  var pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def test_sorting_by_a_column_moves_each_segment_with_all_its_score_rows(report, tmp_path):
    page = tmp_path / "sorted.html"
    page.write_text(report.replace("</body>", f"{_SORT_FINDINGS}</body>"), encoding="utf-8")
    found = re.search(r'<pre id="measured">(.*?)</pre>', _browse(page, tmp_path, "--dump-dom"), re.S)
    assert found, "the sorting script did not run"
    ascending, descending = json.loads(unescape(found.group(1)))
    names = ["calibrated", "over-confident", "shifted"]
    for order in (ascending, descending):
        assert len(order) >= 6 and all([r["score"] for r in g["rows"]] == names for g in order)
    # ascending by the smallest ECCE / sigma among a segment's rows, descending by the largest
    smallest = [min(r["ecce"] for r in g["rows"]) for g in ascending]
    largest = [max(r["ecce"] for r in g["rows"]) for g in descending]
    assert smallest == sorted(smallest) and largest == sorted(largest, reverse=True)
    assert sorted(g["segment"] for g in ascending) == sorted(g["segment"] for g in descending)
    assert smallest != [min(r["ecce"] for r in g["rows"]) for g in descending]  # the order did change


#: Only the table by feature value is shown in the screenshots.
_FEATURES_ONLY = "header, nav, section:not(#features) { display: none; }</style>"


@pytest.mark.parametrize("width", [1280, 1920])
def test_every_score_column_of_a_feature_value_is_on_screen(report, tmp_path, width):
    # issue 32: the table by feature value put the score columns side by side (3 columns each), off screen with many
    _assert_first_group_on_screen(report, tmp_path, width, "features")
    shot = tmp_path / f"features-{width}.png"
    page = tmp_path / "features.html"
    page.write_text(report.replace("</style>", _FEATURES_ONLY), encoding="utf-8")
    _browse(page, tmp_path, f"--screenshot={shot}", height=900, width=width)
    image = matplotlib.image.imread(shot)[..., :3]
    assert image.shape[:2] == (900, width)
    # the error directions of the over-confident and shifted columns, in their colours, in the first rows on screen
    for colour in ((0xA5, 0x36, 0x1F), (0x1F, 0x5F, 0xA5)):
        near = np.abs(image - np.array(colour) / 255).max(axis=2) < 0.1
        assert near.sum() >= 20, f"no error direction of colour {colour} on screen at {width} px"
