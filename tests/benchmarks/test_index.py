"""The benchmarks' index (``benchmarks/README.md``) against the folders, ``run_all.py``, the results and the docs.

Every script of ``benchmarks/<topic>/`` is listed in the index and in ``run_all.TOPICS`` (which runs its quick
mode), every results file the index names exists and every file in ``benchmarks/results/`` is named there (the
folder holds only what the listed scripts write), and every page the index cites exists and names the file.
"""

import re

import pytest

from tests.benchmarks.scripts import BENCH
from tests.benchmarks.scripts import run_all as _run_all

ROOT = BENCH.parent
RESULTS = BENCH / "results"


def _rows() -> list[dict[str, str]]:
    """The rows of the index's tables: script, results and cited-in cells."""
    rows = []
    for line in (BENCH / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 5:
            rows.append({"script": cells[0].strip("`"), "results": cells[2], "cited": cells[3]})
    return rows


def _scripts_on_disk() -> set[str]:
    return {f"{p.parent.name}/{p.name}" for p in BENCH.glob("*/*.py") if p.parent.name != "common"
            and not p.name.startswith("_")}  # fmt: skip


def _result_stems(cell: str) -> set[str]:
    """The results files a cell names, as stems: ``a.md/.csv`` and ``a.csv`` give ``a``; ``_x`` after ``a`` gives
    ``a_x`` (the index's shorthand for a variant written with ``--out``); options (``--out``) are not files."""
    tokens = re.findall(r"`([^`]+)`", cell)
    stems, first = set(), None
    for token in tokens:
        if token.startswith(("--", ".")):
            continue  # an option, or the extensions of the names before it
        if token.startswith("_") and first:
            stems.add(first + token)
            continue
        stem = re.sub(r"(\.md)?(/\.csv|\.csv)?$", "", token)
        first = first or stem
        stems.add(stem)
    return stems


def test_every_script_is_in_the_index_and_in_run_all():
    listed = [row["script"] for row in _rows()]
    assert len(listed) == len(set(listed)), "a script is listed twice"
    assert set(listed) == _scripts_on_disk()
    registry = {f"{topic}/{name}.py" for topic, names in _run_all().TOPICS.items() for name in names}
    assert registry == _scripts_on_disk()


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row["script"])
def test_the_results_files_the_index_names_exist(row):
    stems = _result_stems(row["results"])
    if "appended" in row["results"] or "rows of" in row["results"]:
        return  # a script that adds to another script's results file (named by that one's row)
    assert stems, f"{row['script']} names no results file"
    for stem in stems:
        assert (RESULTS / f"{stem}.md").exists() or (RESULTS / f"{stem}.csv").exists(), stem


def test_every_results_file_is_named_in_the_index():
    named = set().union(*(_result_stems(row["results"]) for row in _rows()))
    on_disk = {p.stem for p in RESULTS.iterdir() if p.suffix in {".md", ".csv"}}
    assert on_disk - named == set()


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row["script"])
def test_the_pages_the_index_cites_exist(row):
    folder, stems = "", _result_stems(row["results"])
    for token in (t.strip() for t in row["cited"].split(",")):
        if token.startswith("("):
            continue  # "(none)"
        if "/" in token:
            folder = token.rsplit("/", 1)[0]
        path = ROOT / (token if "/" in token or token == "README.md" else f"{folder}/{token}")
        assert path.exists(), f"{row['script']} cites {token} ({path.relative_to(ROOT)}), which does not exist"
        text = path.read_text(encoding="utf-8")
        assert any(stem in text for stem in stems), f"{path.relative_to(ROOT)} names none of {sorted(stems)}"
