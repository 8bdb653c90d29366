"""
Reading a reliability diagram and a cumulative plot
===================================================

Two pictures of the same over-confident scores. The reliability diagram bins the scores and plots each bin's
observed rate against its mean score; its reading depends on the bins. The cumulative plot (Arrieta-Ibarra et
al. 2022) needs no bins: sort the rows by score and accumulate the differences between outcome and score; a
calibrated model gives a path that wanders near 0, and the steepness of the path over a range of scores is the
miscalibration there. ECCE is the range of that path; the dashed band is its critical value at 5%.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import expit

from mcal.metrics import ecce, ecce_pvalue, ecce_std, ece
from mcal.plotting import plot_cumulative_differences, plot_reliability_diagram

rng = np.random.default_rng(0)
n = 5000
z = rng.normal(-1.0, 1.2, n)
y = rng.random(n) < expit(z)  # the true probability is expit(z)
p_calibrated = expit(z)
p_overconfident = expit(1.8 * z)  # the same ranking, pushed towards 0 and 1

for name, p in [("calibrated", p_calibrated), ("over-confident", p_overconfident)]:
    print(
        f"{name:15s} ECE {ece(y, p):.4f}   ECCE {ecce(y, p):.4f} = {ecce(y, p) / ecce_std(y, p):.1f} sigma"
        f"   p-value {ecce_pvalue(y, p):.2g}"
    )

# %%
# The reliability diagram, with a 95% Wilson interval per bin: the over-confident scores lie below the diagonal
# above 0.3 (the observed rate is lower than predicted) and above it near 0.
fig, ax = plt.subplots(figsize=(5, 5))
plot_reliability_diagram(y, p_calibrated, confidence=0.95, label="calibrated", ax=ax)
plot_reliability_diagram(y, p_overconfident, confidence=0.95, label="over-confident", ax=ax)
fig.tight_layout()

# %%
# The cumulative plot: rising where outcomes exceed the scores, falling where the scores are too high.
fig, ax = plt.subplots(figsize=(6, 4))
plot_cumulative_differences(y, p_calibrated, label="calibrated", ax=ax)
plot_cumulative_differences(y, p_overconfident, label="over-confident", ax=ax)
fig.tight_layout()
