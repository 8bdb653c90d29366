"""
Monitoring calibration over time
================================

:func:`mcal.monitor.monitor` splits the rows into time windows and follows calibration from window to window:
log loss, PCOC, ECCE in sigma (with intervals) per window, and a drift alarm, an e-process that keeps its false
alarm rate at ``alpha`` however many windows are looked at. The data are synthetic: 30 daily windows of 500 rows,
calibrated for 20 days, then the base rate shifts.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.special import expit

from mcal.monitor import monitor

rng = np.random.default_rng(0)
n_days, per_day = 30, 500
day = np.repeat(np.arange(n_days), per_day)
times = pd.Timestamp("2026-01-01") + pd.to_timedelta(day, unit="D") + pd.to_timedelta(rng.random(day.size), unit="D")
z = rng.normal(-1.5, 1.0, day.size)
drift = np.where(day >= 20, 0.5, 0.0)  # from day 20 on, the outcome's logit is 0.5 higher than the score says
y = (rng.random(day.size) < expit(z + drift)).astype(int)
p = expit(z)

result = monitor(y, p, times, window="1D", n_resamples=50)
print(f"alarm: {result.alarm}, first window of the alarm: {result.alarm_window}")
columns = ["window_start", "n_samples", "positive_rate", "mean_score", "pcoc", "ecce_sigma_scale", "evalue", "alarm"]
print(result.table.loc[17:23, columns].to_string())

# %%
# PCOC (predicted over observed positives) per window with its 95% interval, and the e-value of the drift alarm on
# a log scale; the alarm fires when it reaches 1 / alpha = 20.
table = result.table
start = table["window_start"]
fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
ax1.errorbar(
    start, table["pcoc"], yerr=[table["pcoc"] - table["pcoc_low"], table["pcoc_high"] - table["pcoc"]], fmt="o"
)
ax1.axhline(1.0, color="k", lw=1, ls=":")
ax1.set_ylabel("PCOC")
ax2.semilogy(start, table["evalue"], "o-")
ax2.axhline(20, color="r", lw=1, ls="--")
ax2.set_ylabel("e-value")
fig.autofmt_xdate()
fig.tight_layout()
