"""
The command line, end to end
============================

The ``mcal`` command fits a calibrator on a table of scores, labels and features, applies it to new rows,
evaluates and reports, without Python code. Each call below is a subprocess, as in a shell (``sys.executable -m
mcal`` is the ``mcal`` command of the Python running this example). The table is Bank Marketing with the scores
of a base model that sees the numerical features only.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

from sklearn.linear_model import LogisticRegression

from mcal.datasets import BANK_NUMERICAL, load_bank_marketing

data = load_bank_marketing().sample(10_000, random_state=2).reset_index(drop=True)
base = LogisticRegression(max_iter=1000).fit(data[BANK_NUMERICAL].iloc[:4000], data["y"].iloc[:4000])
data["p"] = base.predict_proba(data[BANK_NUMERICAL])[:, 1]
work = Path(tempfile.mkdtemp())
data.iloc[4000:8000].to_csv(work / "calib.csv", index=False)
data.iloc[8000:].to_csv(work / "new.csv", index=False)


def mcal_cli(*args):
    """Run ``mcal ARGS`` in ``work`` and print what it prints."""
    print("$ mcal", " ".join(args))
    run = subprocess.run([sys.executable, "-m", "mcal", *args], cwd=work, capture_output=True, text=True, check=False)
    print(run.stdout + run.stderr)
    return run.returncode


# %%
# Fit MCGrad on the calibration rows, with three categorical features; the model file is JSON with a digest.
mcal_cli("fit", "calib.csv", "--score-col", "p", "--label-col", "y", "--method", "mcgrad",
         "--features", "job,marital,education", "-o", "mcgrad.json")  # fmt: skip

# %%
# Apply it to new rows: ``predict`` adds the column ``p_calibrated``.
mcal_cli("predict", "mcgrad.json", "new.csv", "-o", "new_calibrated.csv")

# %%
# Evaluate both columns, with the MCE over segments of four features and the worst segments.
mcal_cli("evaluate", "new_calibrated.csv", "--score-col", "p", "--score-col", "p_calibrated", "--label-col", "y",
         "--segments", "age,job,marital")  # fmt: skip

# %%
# A gate for CI: exit status 1, and a line on stderr, when a condition holds.
status = mcal_cli("evaluate", "new_calibrated.csv", "--score-col", "p", "--label-col", "y",
                  "--fail-if", "ecce_sigma > 3")  # fmt: skip
print("exit status:", status)

# %%
# The HTML report: one self-contained file, with a verdict per score column (``--segments`` adds the segment
# tables, as for ``evaluate``).
mcal_cli("report", "new_calibrated.csv", "--score-col", "p", "--score-col", "p_calibrated", "--label-col", "y",
         "-o", "report.html")  # fmt: skip
print(f"report.html: {(work / 'report.html').stat().st_size / 1e6:.1f} MB")
