"""Size of an HTML report and how long headless Chromium takes to open it, against a blank page.

    PYTHONPATH=src python -m mcal demo --output-dir /tmp/demo       # the full demo, not --quick
    PYTHONPATH=src python benchmarks/report/report_open.py /tmp/demo/report.html [--repeats 3]
    PYTHONPATH=src python benchmarks/report/report_open.py --quick          # a tiny report, nothing written

For each of a blank page and the report, Chromium (``--headless --dump-dom``) is started ``--repeats`` times; the
wall time of each start includes the browser's own start-up, so the blank page is the floor. A script appended
to a copy of the report reads the browser's navigation timing at the load event (``domContentLoaded`` and
``load``, ms from the navigation start), which excludes start-up. Appends a dated section to
``benchmarks/results/report_scale.md`` (nothing for ``--quick``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import git_commit

RESULTS = Path(__file__).resolve().parents[1] / "results"

#: Writes the navigation timing into the page once it has loaded, for ``--dump-dom`` to bring back.
_TIMING = """<script>window.addEventListener("load", function () { setTimeout(function () {
var t = performance.getEntriesByType("navigation")[0], pre = document.createElement("pre");
pre.id = "timing"; pre.textContent = JSON.stringify({dom: t.domContentLoadedEventEnd, load: t.loadEventEnd});
document.body.appendChild(pre); }, 0); });</script>"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    raise SystemExit("chromium not found (apt-get install chromium)")


def open_once(page: Path, profile: Path) -> tuple[float, str]:
    """Wall seconds of one headless Chromium start on ``page`` (to the dumped DOM) and the DOM."""
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
           "--window-size=1300,2000", "--dump-dom", page.resolve().as_uri()]  # fmt: skip
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True).stdout
    return time.perf_counter() - start, out


def measure(report: Path, repeats: int) -> dict:
    html = report.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        blank, timed = tmp / "blank.html", tmp / "timed.html"
        blank.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
        timed.write_text(html.replace("</body>", _TIMING + "</body>"), encoding="utf-8")
        blank_s = [open_once(blank, tmp / "profile")[0] for _ in range(repeats)]
        report_s, loads = [], []
        for _ in range(repeats):
            seconds, dom = open_once(timed, tmp / "profile")
            report_s.append(seconds)
            found = re.search(r'<pre id="timing">(.*?)</pre>', dom, re.S)
            loads.append(json.loads(found.group(1)) if found else {"dom": np.nan, "load": np.nan})
    return {
        "bytes": report.stat().st_size,
        "figures": len(re.findall(r'src="data:image/svg\+xml;base64,', html)),
        "blank_s": blank_s,
        "report_s": report_s,
        "dom_ms": [t["dom"] for t in loads],
        "load_ms": [t["load"] for t in loads],
    }


def section(report: Path, m: dict, command: str) -> str:
    med = statistics.median
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"\n## {now}: the full demo report in headless Chromium\n\n"
        f"- mcal commit {git_commit()}; report made by `{command}`\n"
        f"- measured by `python benchmarks/report/report_open.py {report.name}` ({len(m['report_s'])} starts each)\n\n"
        f"The report is {m['bytes'] / 1e6:.2f} MB with {m['figures']} embedded SVG figures. Headless Chromium "
        f"(`--dump-dom`, 1300 x 2000) took {med(m['report_s']):.2f} s from start to the dumped page (median; "
        f"{min(m['report_s']):.2f}-{max(m['report_s']):.2f} s) against {med(m['blank_s']):.2f} s for a blank page "
        f"(the browser's start-up), so {med(m['report_s']) - med(m['blank_s']):.2f} s for the report itself. Inside "
        f"the page, the DOM was ready after {med(m['dom_ms']):.0f} ms and the load event (every figure decoded) "
        f"ended after {med(m['load_ms']):.0f} ms from the navigation start (medians).\n"
    )


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", type=Path, help="the report.html of a full `mcal demo` run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--command", default="mcal demo", help="how the report was made, for the results file")
    parser.add_argument("--quick", action="store_true", help="a tiny report, one start each; nothing written")
    args = parser.parse_args(argv)
    if args.quick:
        from mcal.report import make_report

        rng = np.random.default_rng(0)
        p = rng.uniform(0.05, 0.95, 500)
        with tempfile.TemporaryDirectory() as folder:
            path = make_report((rng.uniform(size=500) < p).astype(float), {"p": p}, path=Path(folder) / "r.html")
            return measure(path, 1)
    if args.report is None:
        parser.error("the report to open is required without --quick")
    m = measure(args.report, args.repeats)
    text = section(args.report, m, args.command)
    with (RESULTS / "report_scale.md").open("a", encoding="utf-8") as fh:
        fh.write(text)
    print(text)
    return m


if __name__ == "__main__":
    main()
