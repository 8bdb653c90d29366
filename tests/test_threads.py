"""Threads: the default leaves the cores that other processes hold (the load average), and ``mcal fit --n-jobs``."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("lightgbm")

import mcal
from mcal._lightgbm import lightgbm_threads
from mcal.cli import main


@pytest.mark.parametrize(
    "load, n_rows, threads",
    [(0.0, 10**6, 4), (0.4, 10**6, 4), (1.6, 10**6, 2), (2.4, 10**6, 2), (3.6, 10**6, 1), (16.0, 10**6, 1),
     (0.0, 25_000, 2), (3.0, 25_000, 1)],
)  # fmt: skip
def test_default_threads_are_at_most_the_cores_the_load_leaves_free(monkeypatch, load, n_rows, threads):
    # issue #32: with two busy processes, 2 threads on 2 cores took 10-25 times the single-thread fit
    monkeypatch.setattr("mcal._lightgbm._cores", lambda: 4)
    monkeypatch.setattr("mcal._lightgbm.os.getloadavg", lambda: (load, 0.0, 0.0))
    assert lightgbm_threads(None, n_rows) == threads
    assert lightgbm_threads(-1, n_rows) == 4 and lightgbm_threads(3, n_rows) == 3  # explicit n_jobs: as asked


def test_one_thread_by_rows_reads_no_load_and_no_load_average_means_the_cores(monkeypatch):
    monkeypatch.setattr("mcal._lightgbm._cores", lambda: 4)
    monkeypatch.setattr("mcal._lightgbm.os.getloadavg", lambda: pytest.fail("read the load for one thread"))
    assert lightgbm_threads(None, 19_999) == 1

    def unavailable():
        raise OSError("no load average")

    monkeypatch.setattr("mcal._lightgbm.os.getloadavg", unavailable)
    assert lightgbm_threads(None, 10**6) == 4


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
        (["--method", "mcgrad", "--n-jobs", "0"], "--n-jobs must be an integer >= 1, or a negative one .*; got 0"),
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
