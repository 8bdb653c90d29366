"""The results files that a script can render from their CSV are what it renders (``--render``).

Each script's Markdown is rebuilt from a copy of its committed CSV in a temporary folder and compared with the
committed Markdown, every number replaced by ``#``: the CSV keeps 6 significant digits, so the last printed digit
can differ; any other line (a note written by hand, a table the script no longer writes) fails the test.
"""

import re
import shutil

import pytest

from tests.benchmarks.scripts import BENCH
from tests.benchmarks.scripts import script as _script

#: results file -> (script, its render arguments besides the output place)
RENDERED = {
    "mcgrad_memory": ("mcgrad_memory", ["--name", "mcgrad_memory"]),
    "mcgrad_memory_10m": ("mcgrad_memory", ["--name", "mcgrad_memory_10m"]),
    "mcgrad_profile": ("mcgrad_profile", []),
    "mcgrad_stopping_rule": ("mcgrad_stopping_rule", []),
    "mcgrad_tuning_vs_reference": ("mcgrad_tuning_vs_reference", []),
    "multiclass": ("multiclass", []),
    "mcgrad_overconfident": ("mcgrad_overconfident", []),
    "mcgrad_mce_small": ("mcgrad_mce", ["--name", "mcgrad_mce_small"]),
    "mcgrad_mce_census": ("mcgrad_mce", ["--name", "mcgrad_mce_census"]),
    "mcgrad_mce_bank_credit": ("mcgrad_mce", ["--name", "mcgrad_mce_bank_credit"]),
    "regression_vs_reference": ("regression_vs_reference", None),
    "regression_vs_reference_kfold": ("regression_vs_reference", None),
    "regression_vs_reference_se": ("regression_vs_reference", None),
    "regression_vs_reference_paper_defaults": ("regression_vs_reference", None),
}


def _shape(text: str) -> list[str]:
    return [re.sub(r"\d+(\.\d+)?", "#", line).rstrip() for line in text.strip().splitlines()]


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_the_results_file_is_what_its_script_renders_from_its_csv(name, tmp_path):
    script, args = RENDERED[name]
    shutil.copy(BENCH / "results" / f"{name}.csv", tmp_path)
    # regression_vs_reference.py names its files by --out (a path without extension)
    argv = (
        ["--render", "--out", str(tmp_path / name)] if args is None else ["--render", "--out-dir", str(tmp_path), *args]
    )
    _script(script).main(argv)
    rendered = (tmp_path / f"{name}.md").read_text(encoding="utf-8")
    assert _shape(rendered) == _shape((BENCH / "results" / f"{name}.md").read_text(encoding="utf-8"))
