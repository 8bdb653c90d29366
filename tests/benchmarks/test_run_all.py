"""``benchmarks/run_all.py --topic T``: the quick modes of a topic's scripts, written to a folder of their own.

The cheap topics only (the whole of ``--topic all`` takes about 12 minutes on 2 cores); ``mcnet`` runs the quick
modes of both MCNet benchmarks (issue #30). Each run must pass and leave ``benchmarks/results/`` untouched.
"""

import pytest

from tests.benchmarks.scripts import BENCH
from tests.benchmarks.scripts import run_all as _run_all

pytestmark = pytest.mark.slow

#: topic -> the results files its quick runs write (monitor and report write none in quick mode)
WRITTEN = {
    "monitor": set(),
    "report": set(),
    "package": {"input_safety.md", "input_safety.csv", "dependency_weight.md", "dependency_weight.csv"},
    "mcnet": {"mcnet.md", "mcnet.csv", "mcnet_synthetic.md", "mcnet_synthetic.csv"},
}


def _results_state() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (BENCH / "results").iterdir()}


@pytest.mark.parametrize("topic", sorted(WRITTEN))
def test_quick_runs_of_a_topic_pass_and_write_only_to_their_folder(topic, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    before = _results_state()
    assert _run_all().main(["--topic", topic, "--out-dir", str(tmp_path)]) == 0
    written = {p.name for p in (tmp_path / topic).iterdir()}
    assert WRITTEN[topic] <= written
    assert _results_state() == before


def test_run_all_counts_a_failed_quick_run(tmp_path, monkeypatch, capsys):
    run_all = _run_all()
    monkeypatch.setitem(run_all.TOPICS, "monitor", {"monitor_drift": ["--no-such-option"]})
    assert run_all.main(["--topic", "monitor", "--out-dir", str(tmp_path)]) == 1
    assert "failed: monitor_drift" in capsys.readouterr().out


def test_run_all_skips_a_script_whose_needs_are_missing(tmp_path, monkeypatch, capsys):
    run_all = _run_all()
    monkeypatch.setitem(run_all.NEEDS, "monitor_drift", ("module", "no_such_module.sub"))
    assert run_all.main(["--topic", "monitor", "--out-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "skipped monitor/monitor_drift.py: needs the module no_such_module.sub" in out
    assert "0 of 0 quick runs of monitor passed (1 skipped)" in out


def test_help_states_the_whole_first_paragraph(capsys):
    with pytest.raises(SystemExit):
        _run_all().main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "MCNet Tables 1-3), or the quick mode of every script of a topic. options:" in out
