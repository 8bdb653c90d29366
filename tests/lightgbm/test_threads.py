"""Threads: the default leaves the cores that other processes hold, and ``mcal fit --n-jobs``."""

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("lightgbm")

import mcal
from mcal._lightgbm import lightgbm_threads, others_running
from mcal.cli import main


@pytest.mark.parametrize(
    "others, n_rows, threads",
    [(0, 10**6, 4), (1, 10**6, 3), (2, 10**6, 2), (3, 10**6, 1), (16, 10**6, 1), (0, 25_000, 2), (3, 25_000, 1)],
)
def test_default_threads_are_at_most_the_cores_other_processes_leave_free(monkeypatch, others, n_rows, threads):
    # issue #32: with two busy processes, 2 threads on 2 cores took 10-25 times the single-thread fit
    monkeypatch.setattr("mcal._lightgbm._cores", lambda: 4)
    monkeypatch.setattr("mcal._lightgbm.others_running", lambda: others)
    assert lightgbm_threads(None, n_rows) == threads
    assert lightgbm_threads(-1, n_rows) == 4 and lightgbm_threads(3, n_rows) == 3  # explicit n_jobs: as asked


def test_one_thread_by_rows_reads_no_load(monkeypatch):
    monkeypatch.setattr("mcal._lightgbm._cores", lambda: 4)
    monkeypatch.setattr("mcal._lightgbm.others_running", lambda: pytest.fail("read the load for one thread"))
    assert lightgbm_threads(None, 19_999) == 1


def fake_proc(root, loadavg, states):
    (root / "self" / "task").mkdir(parents=True)
    (root / "loadavg").write_text(loadavg)
    for tid, (comm, state) in enumerate(states, 1):
        (root / "self" / "task" / str(tid)).mkdir()
        (root / "self" / "task" / str(tid) / "stat").write_text(f"{tid} ({comm}) {state} 1 1 1 0 -1 4194560\n")
    return root


def test_others_running_takes_this_process_runnable_threads_from_the_machine(tmp_path):
    # 7 runnable on the machine, of which 2 are this process's (one named with ") R (" to fool a naive parse)
    proc = fake_proc(tmp_path, "0.52 0.58 0.59 7/512 4321\n", [("python", "R"), ("a) R (b", "S"), ("omp", "R")])
    assert others_running(proc) == 5
    # the machine's count includes the reader itself even where the listing saw it sleeping
    assert others_running(fake_proc(tmp_path / "b", "0.0 0.0 0.0 1/90 1\n", [("python", "S")])) == 0


def test_others_running_falls_back_to_the_load_average(monkeypatch, tmp_path):
    monkeypatch.setattr("mcal._lightgbm.os.getloadavg", lambda: (2.6, 0.0, 0.0))
    assert others_running(tmp_path / "missing") == 3

    def unavailable():
        raise OSError("no load average")

    monkeypatch.setattr("mcal._lightgbm.os.getloadavg", unavailable)
    assert others_running(tmp_path / "missing") == 0


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="reads Linux's /proc")
def test_others_running_counts_two_spinning_processes():
    # a spinning process is always runnable, whatever else the machine runs: the count is at least 2
    spin = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.5)
        assert min(others_running() for _ in range(5)) >= 2
    finally:
        for p in spin:
            p.kill()
            p.wait()


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 2000)
    path = tmp_path / "scores.csv"
    pd.DataFrame({"p": p, "y": (rng.uniform(size=p.size) < p).astype(int), "f": rng.integers(0, 3, p.size)}).to_csv(
        path, index=False
    )
    return path


def test_fit_n_jobs_sets_the_threads_of_the_model(csv, tmp_path):
    out = tmp_path / "m.json"
    argv = ["fit", str(csv), "--score-col", "p", "--label-col", "y", "--features", "f", "--quiet", "-o", str(out)]
    assert main([*argv, "--method", "mcgrad", "--n-jobs", "1", "--param", "max_rounds=1"]) == 0
    assert mcal.load(out).n_jobs == 1
    assert main([*argv, "--method", "mcgrad", "--param", "max_rounds=1"]) == 0
    assert mcal.load(out).n_jobs is None  # the default: chosen at each fit and predict


@pytest.mark.parametrize(
    "extra, match",
    [
        (
            ["--method", "mcgrad", "--n-jobs", "0"],
            "--n-jobs must be an integer >= 1, or a negative integer counting back .*; got 0",
        ),
        (["--method", "mcgrad", "--n-jobs", "2", "--param", "n_jobs=1"], "--param n_jobs is set by --n-jobs N"),
        (
            ["--method", "platt", "--n-jobs", "2"],
            "--n-jobs is not used by method 'platt'; methods with threads .*mcgrad",
        ),
    ],
)
def test_fit_n_jobs_is_refused_where_it_cannot_apply(csv, tmp_path, capsys, extra, match):
    import re

    out = tmp_path / "m.json"
    argv = ["fit", str(csv), "--score-col", "p", "--label-col", "y", "--quiet", "-o", str(out), *extra]
    assert main(argv) == 2
    assert re.search(match, capsys.readouterr().err)
    assert not out.exists()
