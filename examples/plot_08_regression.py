"""
Calibrating a regression model
==============================

For a prediction of a real outcome (revenue, watch time), calibration means that the mean outcome among rows with
prediction ``v`` is ``v``. :class:`mcal.RegressionMCGrad` runs MCGrad's rounds with the squared error and reads
the features; :class:`mcal.regression.IsotonicRecalibration` is the univariate map. The metrics take
``outcome="regression"``. The data are synthetic: a prediction that is too flat, and off by a per-region amount.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import mcal
from mcal.metrics import ecce, ecce_std, mce, mse
from mcal.plotting import plot_reliability_diagram
from mcal.regression import IsotonicRecalibration

rng = np.random.default_rng(0)
n = 10_000
X = pd.DataFrame({"region": pd.Categorical(rng.choice(["north", "south", "east", "west"], n))})
truth = rng.gamma(2.0, 10.0, n)
offset = X["region"].map({"north": 4.0, "south": -3.0, "east": 0.0, "west": 1.5}).to_numpy(float)
y = truth + offset + rng.normal(0, 5, n)
y_pred = 0.7 * truth + 6.0  # too flat: high values under-predicted, low ones over-predicted
half = n // 2

isotonic = IsotonicRecalibration().fit(y_pred[:half], y[:half])
mcgrad = mcal.RegressionMCGrad(random_state=0, n_jobs=1).fit(y_pred[:half], y[:half], X=X[:half])
y_test, X_test = y[half:], X[half:]
predictions = {
    "base": y_pred[half:],
    "isotonic": isotonic.predict(y_pred[half:]),
    "RegressionMCGrad": mcgrad.predict(y_pred[half:], X=X_test),
}

# %%
# ECCE is in the outcome's units here; divided by its sigma it is a z-like statistic. The MCE is over the regions.
for name, v in predictions.items():
    sigmas = ecce(y_test, v, outcome="regression") / ecce_std(y_test, v, outcome="regression")
    mce_sigma = mce(y_test, v, X=X_test, outcome="regression").mce_sigma
    print(f"{name:17s} MSE {mse(y_test, v):7.2f}   ECCE {sigmas:5.1f} sigma   MCE {mce_sigma:5.1f} sigma")

# %%
# The reliability diagram of a regression: mean outcome against mean prediction per bin.
fig, ax = plt.subplots(figsize=(5, 5))
for name, v in predictions.items():
    plot_reliability_diagram(y_test, v, outcome="regression", label=name, ax=ax)
fig.tight_layout()
