"""``mcal monitor`` and the ``--fail-if`` gates of ``mcal evaluate`` and ``mcal monitor``, through ``main``."""

import argparse

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from mcal.cli import main
from mcal.cli._gates import EVALUATE, Condition
from mcal.monitor import monitor


@pytest.fixture
def scores(rng):
    """8 days of 600 rows; calibrated for 4 days, then the labels shift by +0.8 on the logit scale."""
    n = 4800
    p = rng.uniform(0.05, 0.6, n)
    t = pd.Timestamp("2024-01-01") + pd.to_timedelta(np.sort(rng.uniform(0, 8, n)), unit="D")
    shift = np.where(t >= pd.Timestamp("2024-01-05"), 0.8, 0.0)
    y = (rng.random(n) < expit(logit(p) + shift)).astype(int)
    return pd.DataFrame({"p": p, "y": y, "t": t, "a": rng.integers(0, 3, n)})


@pytest.fixture
def folder(scores, tmp_path):
    """The table as a Parquet folder of 3 files."""
    path = tmp_path / "scores"
    path.mkdir()
    for k in range(3):
        scores.iloc[k * 1600 : (k + 1) * 1600].to_parquet(path / f"part-{k}.parquet")
    return path


def run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.slow
def test_monitor_on_a_parquet_folder_equals_the_python_api(scores, folder, tmp_path, capsys):
    out = tmp_path / "monitor.html"
    status, stdout, _ = run(["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t",
                             "--segments", "a", "-o", str(out)], capsys)  # fmt: skip
    assert status == 0
    expected = monitor(scores["y"], scores["p"], scores["t"], X=scores[["a"]])
    assert f"4800 rows in {len(expected.table)} windows of 1D" in stdout
    assert f"drift alarm: fired in the window starting {expected.alarm_window}" in stdout
    html = out.read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == 5 and f"{expected.table['log10_evalue'].iloc[-1]:.4g}" in html
    assert "MCE p: the worst segment's p-value, not adjusted for the number of segments" in html


def test_monitor_gates_name_each_window_where_a_condition_held(scores, folder, capsys):
    table = monitor(scores["y"], scores["p"], scores["t"]).table
    held = table.loc[table["ecce_sigma_scale"] > 3, "window_start"]
    assert 0 < len(held) < len(table)
    argv = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t",
            "--fail-if", "ecce_sigma > 3", "--fail-if", "n_samples < 10"]  # fmt: skip
    status, _, err = run(argv, capsys)
    assert status == 1
    lines = [line for line in err.splitlines() if "held for window" in line]
    assert lines == [
        f"mcal: fail-if: ecce_sigma > 3 held for window {start} (ecce_sigma = "
        f"{table.loc[table['window_start'] == start, 'ecce_sigma_scale'].iloc[0]:.6g})"
        for start in held
    ]
    assert f"{len(held)} condition(s) held; exit status 1" in err


def test_monitor_gate_on_the_alarm_names_every_window_from_the_first_alarm_on(scores, folder, capsys):
    result = monitor(scores["y"], scores["p"], scores["t"])
    argv = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t",
            "--fail-if", "alarm == 1"]  # fmt: skip
    status, _, err = run(argv, capsys)
    fired = result.table.loc[result.table["alarm"], "window_start"]
    assert status == 1 and fired.iloc[0] == result.alarm_window
    assert [line.split(" held for window ")[1].split(" (")[0] for line in err.splitlines() if "held for" in line] == [
        str(start) for start in fired
    ]


def test_monitor_writes_no_page_when_drawing_fails(folder, tmp_path, capsys, monkeypatch):
    import matplotlib.figure

    out = tmp_path / "m.html"
    out.write_text("yesterday's page")

    def full_disk(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full_disk)
    argv = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t", "-o", str(out)]
    status, _, err = run(argv, capsys)
    assert status == 2 and "No space left on device" in err
    assert out.read_text() == "yesterday's page" and sorted(p.name for p in tmp_path.iterdir()) == ["m.html", "scores"]


def test_monitor_exits_0_when_no_condition_held(folder, capsys):
    argv = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--fail-if",
            "pcoc > 10", "--fail-if", "evalue >= 1e300"]  # fmt: skip
    assert run(argv, capsys)[0] == 0


def test_monitor_with_numeric_times_needs_a_numeric_window(scores, tmp_path, capsys):
    path = tmp_path / "s.csv"
    scores.assign(t=np.arange(len(scores)) // 600).to_csv(path, index=False)
    base = ["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t"]
    status, out, _ = run([*base, "--window", "2"], capsys)
    assert status == 0 and "4800 rows in 4 windows of 2.0" in out
    status, _, err = run(base, capsys)
    assert status == 2 and "--window must be a number for the numeric time column 't'; got '1D'" in err


def test_monitor_writes_nothing_when_it_fails(folder, tmp_path, capsys):
    out = tmp_path / "m.html"
    argv = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "-o", str(out)]
    status, _, err = run([*argv, "--time-col", "t", "--window", "1 fortnight"], capsys)
    assert status == 2 and "window must be a fixed length" in err
    status, _, err = run([*argv, "--time-col", "nope"], capsys)
    assert status == 2 and "--time-col 'nope' is not a column of DATA" in err
    assert list(tmp_path.iterdir()) == [folder]


def test_monitor_refuses_an_output_inside_the_data_folder(folder, capsys):
    argv = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t", "-o",
            str(folder / "m.html")]  # fmt: skip
    status, _, err = run(argv, capsys)
    assert status == 2 and "-o/--output must be outside the folder DATA" in err


@pytest.mark.parametrize("alpha", ["0", "1", "nan"])
def test_monitor_alpha_must_lie_strictly_between_0_and_1(folder, capsys, alpha):
    argv = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--alpha", alpha]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and "argument --alpha: must be a number in (0, 1)" in capsys.readouterr().err


def test_evaluate_gates_exit_1_naming_each_condition_that_held(scores, tmp_path, capsys):
    path = tmp_path / "s.csv"
    scores.to_csv(path, index=False)
    argv = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--segments", "a", "--json"]
    status, out, _ = run(argv, capsys)
    assert status == 0
    status, out2, err = run([*argv, "--fail-if", "ecce_sigma > 3", "--fail-if", "mce_sigma>=5",
                             "--fail-if", "roc_auc < 0.5"], capsys)  # fmt: skip
    assert status == 1 and out2 == out  # stdout stays the JSON document
    assert "mcal: fail-if: ecce_sigma > 3 held for score column 'p' (ecce_sigma = " in err
    assert "mcal: fail-if: mce_sigma >= 5 held for score column 'p' (mce_sigma = " in err
    assert "roc_auc" not in err and "2 condition(s) held" in err
    assert run([*argv, "--fail-if", "ecce_sigma > 1000"], capsys)[0] == 0


@pytest.mark.parametrize("command", ["evaluate", "monitor"])
def test_bad_input_exits_2_not_the_1_of_a_held_gate(scores, tmp_path, capsys, command):
    path = tmp_path / "s.csv"
    scores.to_csv(path, index=False)
    base = [command, str(path), "--score-col", "p", "--label-col", "y"]
    base += ["--time-col", "t"] if command == "monitor" else []
    assert run([*base, "--fail-if", "ecce_sigma > 0"], capsys)[0] == 1  # the gate holds on good input
    for bad in (["--label-col", "nope"], ["--weight-col", "nope"], ["--pos-label", "7"]):
        status, _, err = run([*base, *bad, "--fail-if", "ecce_sigma > 0"], capsys)
        assert status == 2 and err.startswith("mcal: error:") and "fail-if" not in err
    status, _, err = run([command, str(tmp_path / "absent.csv"), *base[2:], "--fail-if", "ecce_sigma > 0"], capsys)
    assert status == 2 and "does not exist" in err


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("ecce_sigma >> 3", "must be METRIC OP NUMBER with OP one of < <= > >= == !="),
        ("ecce_sigma > three", "must be METRIC OP NUMBER"),
        ("ecce_sigma > 3 or 1", "must be METRIC OP NUMBER"),
        ("__import__('os').system('true') > 0", "must be METRIC OP NUMBER"),
        ("> 3", "must be METRIC OP NUMBER"),
        ("ecce_sigma => 3", "must be METRIC OP NUMBER"),
        ("ecce_sigma > inf", "must be METRIC OP NUMBER with OP one of < <= > >= == != and a finite NUMBER"),
        ("ecce_sigma > 1e999", "a finite NUMBER (e.g. 'ecce_sigma > 3'); got 'ecce_sigma > 1e999'"),
        ("ecce_sigma < -1e999", "a finite NUMBER"),
        ("eccee > 3", "must name one of the metrics brier_score, ecce, ecce_pvalue, ecce_sigma, ecce_sigma_scale"),
    ],
)
def test_a_malformed_condition_or_unknown_metric_is_a_usage_error(tmp_path, capsys, condition, message):
    argv = ["evaluate", str(tmp_path / "missing.csv"), "--score-col", "p", "--label-col", "y", "--fail-if", condition]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and "mce_sigma" in err  # every message lists the metrics


def test_a_metric_that_needs_an_option_not_given_is_a_usage_error(scores, tmp_path, capsys):
    path = tmp_path / "s.csv"
    scores.to_csv(path, index=False)
    status, _, err = run(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--fail-if",
                          "f_rce > 0.1"], capsys)  # fmt: skip
    assert status == 2 and "--fail-if 'f_rce > 0.1': the metric f_rce needs --field" in err
    status, _, err = run(["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t",
                          "--fail-if", "mce_pvalue < 0.01"], capsys)  # fmt: skip
    assert status == 2 and "the metric mce_pvalue needs --segments" in err


@pytest.mark.parametrize(
    ("text", "value", "holds"),
    [("pcoc<=1.2", 1.2, True), (" pcoc < 1.2 ", 1.2, False), ("pcoc == -1e-3", -0.001, True),
     ("pcoc != 1", 1.0, False), ("pcoc >= .5", 0.5, True), ("pcoc > 2", float("nan"), False),
     ("pcoc != 2", float("nan"), False)],
)  # fmt: skip
def test_conditions_compare_numbers_and_an_undefined_value_holds_none(text, value, holds):
    condition = EVALUATE.parse(text)
    assert isinstance(condition, Condition) and condition.holds(value) is holds


def test_parse_is_the_argparse_type_of_fail_if():
    with pytest.raises(argparse.ArgumentTypeError, match="metrics: brier_score"):
        EVALUATE.parse("ecce_sigma")


def test_monitor_json_holds_every_window_with_iso_starts_and_null_for_undefined(scores, tmp_path, capsys):
    import json

    path = tmp_path / "s.csv"
    scores.assign(y=np.where(scores["t"] < pd.Timestamp("2024-01-02"), 0, scores["y"])).to_csv(path, index=False)
    status, out, _ = run(["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--json"],
                         capsys)  # fmt: skip
    doc = json.loads(out)
    expected = monitor(*[pd.read_csv(path)[c] for c in ("y", "p", "t")])
    assert status == 0 and doc["n_samples"] == 4800 and doc["alarm"] is True
    assert doc["alarm_window"] == expected.alarm_window.isoformat()
    assert [w["window_start"] for w in doc["windows"]][:2] == ["2024-01-01T00:00:00", "2024-01-02T00:00:00"]
    assert doc["windows"][0]["pcoc"] is None and doc["windows"][1]["pcoc"] == pytest.approx(expected.table["pcoc"][1])


def test_monitor_gates_on_the_bootstrap_interval_of_the_mce(folder, capsys):
    argv = ["monitor", str(folder), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--segments", "a",
            "--n-resamples", "50", "--json"]  # fmt: skip
    status, out, _ = run(argv, capsys)
    import json

    windows = json.loads(out)["windows"]
    assert status == 0 and all(w["mce_sigma_low"] < w["mce_sigma_high"] for w in windows)
    # calibrated days 1-4 against shifted days 5-8: a gate on the interval's lower end names only shifted days
    threshold = max(w["mce_sigma_high"] for w in windows[:4])
    status, _, err = run([*argv, "--fail-if", f"mce_sigma_low > {threshold}"], capsys)
    held = [line for line in err.splitlines() if "held for window" in line]
    assert status == 1 and held
    assert all(any(f"2024-01-0{d}" in line for d in "5678") for line in held)
    status, _, err = run([*argv[:-3], "--n-resamples", "1"], capsys)
    assert status == 2 and "--n-resamples must be 0 (no bootstrap intervals) or an integer >= 2; got 1" in err


def test_monitor_refuses_a_window_without_a_unit_on_datetime_times(scores, tmp_path, capsys):
    path = tmp_path / "s.csv"
    scores.to_csv(path, index=False)
    base = ["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t"]
    for window in ("5", "2.5"):  # pandas would read them as nanoseconds: one window per row
        status, out, err = run([*base, "--window", window], capsys)
        assert status == 2 and out == ""
        assert (f"--window must be a pandas offset such as 1D or 6h (a length with a unit) for the datetime time "
                f"column 't'; got '{window}'") in err  # fmt: skip
    status, out, _ = run([*base, "--window", "2D"], capsys)
    assert status == 0 and "4800 rows in 5 windows of 2D" in out


def test_monitor_reads_iso_8601_times_in_mixed_precision_and_names_a_bad_one(scores, tmp_path, capsys):
    text = scores["t"].dt.strftime("%Y-%m-%dT%H:%M:%S")
    text[1::2] = text[1::2] + ".5"  # every other row with fractional seconds, as in the review
    path = tmp_path / "s.csv"
    scores.assign(t=text).to_csv(path, index=False)
    base = ["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t", "--n-resamples", "0"]
    status, out, _ = run([*base, "--json"], capsys)
    import json

    expected = monitor(scores["y"], scores["p"], pd.to_datetime(text, format="ISO8601"), n_resamples=0).table
    windows = json.loads(out)["windows"]
    assert status == 0 and [w["n_samples"] for w in windows] == expected["n_samples"].tolist()
    assert len(windows) == 8 and windows[0]["window_start"] == "2024-01-01T00:00:00"
    bad = text.copy()
    bad[7] = "2024-01-0x"
    scores.assign(t=bad).to_csv(path, index=False)
    status, _, err = run(base, capsys)
    assert status == 2 and "--time-col 't' must be datetimes, numbers or dates as text" in err
    assert "got '2024-01-0x' at index 7" in err


def test_evaluate_gates_on_interval_bounds_with_ci_only(scores, tmp_path, capsys):
    import json

    path = tmp_path / "s.csv"
    scores.to_csv(path, index=False)
    base = ["evaluate", str(path), "--score-col", "p", "--label-col", "y"]
    status, _, err = run([*base, "--fail-if", "ecce_sigma_low > 3"], capsys)
    assert status == 2 and "--fail-if 'ecce_sigma_low > 3': the metric ecce_sigma_low needs --ci" in err
    status, _, err = run([*base, "--ci", "--fail-if", "mce_sigma_low > 3"], capsys)
    assert status == 2 and "the metric mce_sigma_low needs --segments" in err
    argv = [*base, "--ci", "--n-resamples", "50", "--json"]
    status, out, _ = run(argv, capsys)
    metrics = json.loads(out)["metrics"]["p"]
    low, high = metrics["ecce_sigma_scale_low"], metrics["ecce_sigma_scale_high"]
    assert status == 0 and low < metrics["ecce_sigma_scale"] < high
    status, _, err = run([*argv, "--fail-if", f"ecce_sigma_low > {low - 0.01}", "--fail-if",
                          f"ecce_sigma_high < {low}"], capsys)  # fmt: skip
    assert status == 1 and f"ecce_sigma_low > {low - 0.01:g} held for score column 'p'" in err
    assert "ecce_sigma_high" not in err and "1 condition(s) held" in err
    assert run([*argv, "--fail-if", f"ecce_sigma_low > {low + 0.01}"], capsys)[0] == 0


def test_fail_if_help_says_the_mce_pvalue_is_not_adjusted(capsys):
    with pytest.raises(SystemExit):
        main(["monitor", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "mce_pvalue is the worst segment's p-value, not adjusted for the number of segments" in help_text
    assert "Windows without rows are left out" in help_text


@pytest.mark.slow
def test_a_closed_stdout_ends_the_command_quietly_with_141(scores, tmp_path):
    import os
    import subprocess
    import sys

    path = tmp_path / "s.csv"
    scores.to_csv(path, index=False)
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-m", "mcal", "evaluate", str(path), "--score-col", "p", "--label-col", "y", "--segments",
            "a", "--json", "--fail-if", "ecce_sigma > 0"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.close()  # as `| head -0`: the reader is gone before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == ""


@pytest.mark.slow
def test_monitor_prints_finite_log10_evalues_without_a_warning(rng, tmp_path, capsys):
    # issue 32: "mcal: warning: overflow encountered in exp" and inf e-values from the 4th window on
    n = 12 * 1500
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.random(n) < p**3).astype(int)
    path = tmp_path / "bad.csv"
    pd.DataFrame({"p": p, "y": y, "t": np.arange(n) // 1500}).to_csv(path, index=False)
    status, out, err = run(["monitor", str(path), "--score-col", "p", "--label-col", "y", "--time-col", "t",
                            "--window", "1", "-o", str(tmp_path / "m.html")], capsys)  # fmt: skip
    assert status == 0 and "warning" not in err
    expected = monitor(y, p, np.arange(n) // 1500, window=1).table
    lines = out.splitlines()
    head = lines[1].split()
    assert "log10_evalue" in head and "evalue" not in head and "inf" not in out
    shown = [float(line.split()[head.index("log10_evalue")]) for line in lines[2:14]]
    np.testing.assert_allclose(shown, expected["log10_evalue"], rtol=1e-5)
    assert shown[-1] > 900  # e-values near 1e900, beyond the float range
    alarm = "drift alarm: fired in the window starting 0.0 (e-value >= 20, log10_evalue >= 1.3; level 0.05)"
    assert alarm in " ".join(out.split())  # wrapped at the terminal's width
