"""Progress bars: drawn on a terminal or on request, silent in pipes and with enabled=False."""

import io
import sys

import pytest

from mcal import _progress
from mcal._base import BaseCalibrator
from mcal._progress import progress, should_show


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _run(n, **kwargs):
    with progress(total=n, desc="MCGrad rounds", unit="round", **kwargs) as bar:
        for _ in range(n):
            bar.update(loss=0.25)
    return bar


def test_disabled_progress_counts_steps_and_writes_nothing(capsys):
    bar = _run(4, enabled=False)
    assert bar.n == 4 and bar.total == 4 and not bar.shown
    assert capsys.readouterr() == ("", "")


def test_automatic_progress_is_silent_when_stderr_is_not_a_terminal(capsys):
    bar = _run(3, enabled=None)
    assert not bar.shown
    assert capsys.readouterr().err == ""


def test_automatic_progress_draws_on_a_terminal(monkeypatch):
    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    bar = _run(3, enabled=None)
    assert bar.shown
    assert "MCGrad rounds" in stream.getvalue()
    assert bar._bar.n == 3 and "loss=0.25" in bar._bar.postfix  # tqdm redraws at most every 0.1 s


def test_enabled_progress_draws_even_in_a_pipe(capsys):
    bar = _run(5, enabled=True)
    assert "MCGrad rounds" in capsys.readouterr().err
    assert bar._bar.n == 5 and bar._bar.total == 5


def test_a_loop_that_stops_early_closes_its_bar(capsys):
    with progress(total=100, desc="epochs", enabled=True) as bar:
        for _ in range(7):
            bar.update()
    assert bar.n == 7 and bar._bar.n == 7
    assert "epochs" in capsys.readouterr().err
    assert bar._bar.disable  # tqdm marks a closed bar disabled


def test_enabled_without_tqdm_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # makes `import tqdm.auto` fail
    with pytest.raises(ImportError, match=r"mcal\[progress\]"):
        _run(1, enabled=True)


def test_automatic_progress_without_tqdm_stays_silent_on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    monkeypatch.setattr(_progress, "is_available", lambda name: False)
    assert not should_show(None)
    assert not _run(2, enabled=None).shown


def test_a_closed_stderr_counts_as_no_terminal(monkeypatch):
    stream = io.StringIO()
    stream.close()
    monkeypatch.setattr(sys, "stderr", stream)
    assert not should_show(None)


@pytest.mark.parametrize("enabled", ["yes", 1, 0.0])
def test_enabled_must_be_bool_or_none(enabled):
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        _run(1, enabled=enabled)


def test_numpy_bools_are_accepted_as_check_bool_accepts_them():
    import numpy as np

    assert not should_show(np.False_)


@pytest.mark.parametrize("total", [-1, 2.5, True, "3"])
def test_total_must_be_a_non_negative_integer_or_none(total):
    with pytest.raises(ValueError, match="total must be a non-negative integer or None"):
        with progress(total=total, desc="x", enabled=False):
            pass


def test_unknown_total_is_allowed(capsys):
    with progress(total=None, desc="steps", enabled=True) as bar:
        bar.update(2)
    assert bar.n == 2 and "steps" in capsys.readouterr().err


@pytest.mark.slow
def test_importing_mcal_does_not_import_tqdm():
    import subprocess

    code = "import sys, mcal, mcal._progress, mcal.report; print('tqdm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class LoopingCalibrator(BaseCalibrator):
    """The identity, fitted by a loop of three steps with a progress setting, as MCGrad and MCNet have."""

    def __init__(self, *, progress=False):
        self.progress = progress

    def _fit(self, y_prob, y, sample_weight, X):
        with progress(total=3, desc="looping steps", enabled=self.progress) as bar:
            for _ in range(3):
                bar.update()

    def _predict(self, y_prob, X):
        return y_prob


@pytest.mark.parametrize("quiet", [False, True])
def test_mcal_fit_shows_a_method_progress_on_a_terminal_unless_quiet(tmp_path, monkeypatch, quiet):
    import numpy as np
    import pandas as pd

    from mcal._registry import METHODS
    from mcal.cli import main

    monkeypatch.setitem(METHODS, "looping", f"{__name__}:LoopingCalibrator")
    data = tmp_path / "d.csv"
    pd.DataFrame({"p": np.linspace(0.1, 0.9, 20), "y": [0, 1] * 10}).to_csv(data, index=False)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    args = [
        "fit",
        str(data),
        "--score-col",
        "p",
        "--label-col",
        "y",
        "--method",
        "looping",
        "-o",
        str(tmp_path / "m.json"),
    ]
    assert main(args + (["--quiet"] if quiet else [])) == 0
    assert ("looping steps" in terminal.getvalue()) is not quiet


def test_a_loop_that_stops_early_ends_its_bar_at_the_count_reached(capsys):
    # issue 32: mcal fit's bar read "0/100 rounds" when early stopping ended at round 5
    with progress(total=100, desc="MCGrad rounds", enabled=True, unit="round") as bar:
        for _ in range(5):
            bar.update()
    drawn = [part.strip() for part in capsys.readouterr().err.split("\r") if part.strip()]
    assert bar._bar.total == 5 and "5/5" in drawn[-1] and "100%" in drawn[-1], drawn
    assert not any("/100" in part for part in drawn[1:]), drawn  # after the first draw, never out of 100


@pytest.mark.parametrize("name", ["d.csv", "d.csv.gz"])
def test_reading_a_large_csv_shows_its_progress_on_a_terminal_unless_quiet(tmp_path, monkeypatch, name):
    # issue 32: nothing showed while a large CSV was read
    import numpy as np
    import pandas as pd

    from mcal.cli import _common

    path = tmp_path / name
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"p": rng.uniform(size=3000), "y": rng.integers(0, 2, 3000), "c": ["NA", "a", "b"] * 1000})
    frame.to_csv(path, index=False)
    expected = _common.read_table(path)  # below the size that shows a bar
    monkeypatch.setattr(_common, "SHOW_READ_BYTES", 1)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert _common.read_table(path, quiet=True).equals(expected) and terminal.getvalue() == ""
    steps = []
    update = _progress.Progress.update
    monkeypatch.setattr(_progress.Progress, "update", lambda self, n=1: (steps.append(n), update(self, n)))
    got = _common.read_table(path)
    pd.testing.assert_frame_equal(got, expected)
    drawn = terminal.getvalue()
    assert f"reading {name}: " in drawn and "0/1 [" in drawn and "MiB" in drawn
    assert steps == [1]  # the file's one MiB begun, counted once
