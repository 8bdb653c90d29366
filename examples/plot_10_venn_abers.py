"""
Venn-Abers intervals
====================

:class:`mcal.VennAbers` fits isotonic calibration twice per score, with the score's row labelled 0 and labelled 1,
and returns the pair ``(p0, p1)``: one of the two is perfectly calibrated when the data are exchangeable (Vovk,
Petej and Fedorova 2015), and their width says how much the calibration data support the score. ``predict``
merges them into ``p1 / (1 - p0 + p1)``. With few calibration rows the intervals are wide; with many, narrow.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import expit

import mcal
from mcal.metrics import log_loss

rng = np.random.default_rng(0)


def sample(n):
    z = rng.normal(-0.5, 1.5, n)
    return expit(1.6 * z), (rng.random(n) < expit(z)).astype(int)  # over-confident scores


p_test, y_test = sample(5000)
grid = np.linspace(0.01, 0.99, 300)
fig, ax = plt.subplots(figsize=(6, 4.5))
for n in (100, 3000):
    p_calib, y_calib = sample(n)
    va = mcal.VennAbers().fit(p_calib, y_calib)
    p0, p1 = va.predict_interval(grid)
    ax.fill_between(grid, p0, p1, alpha=0.35, label=f"(p0, p1), {n} calibration rows")
    width = np.subtract(*va.predict_interval(p_test)[::-1])
    print(f"{n:5d} rows: mean width {width.mean():.3f}, test log loss {log_loss(y_test, va.predict(p_test)):.4f}")
ax.plot(grid, expit(np.log(grid / (1 - grid)) / 1.6), "k--", lw=1, label="true probability")
ax.set_xlabel("score")
ax.set_ylabel("calibrated probability")
ax.legend(fontsize=8)
fig.tight_layout()
