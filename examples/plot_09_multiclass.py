"""
Calibrating k classes
=====================

:mod:`mcal.multiclass` calibrates an (n, k) matrix of class probabilities: temperature, vector and matrix scaling,
Dirichlet calibration, one-vs-rest around any binary calibrator, and MCGrad with a softmax objective, which also
reads the features. The metrics for k classes are in :mod:`mcal.metrics` (``multiclass_log_loss``,
``top_label_ece``, ``classwise_ece``, ``classwise_mce``, ...). The data are synthetic: three classes, a model
that is over-confident and misses a feature.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.special import softmax

from mcal.metrics import classwise_ece, classwise_mce, multiclass_log_loss, top_label_ece
from mcal.multiclass import DirichletCalibration, MulticlassMCGrad, MulticlassTemperatureScaling

rng = np.random.default_rng(0)
n, k = 9000, 3
X = pd.DataFrame({"device": pd.Categorical(rng.choice(["phone", "tablet", "desktop"], n))})
logits = rng.normal(0, 1.2, (n, k))
device_shift = np.where(X["device"].to_numpy() == "phone", 0.8, 0.0)[:, None] * np.array([1.0, -0.5, -0.5])
labels = np.array([rng.choice(k, p=row) for row in softmax(logits + device_shift, axis=1)])
proba = softmax(2.0 * logits, axis=1)  # over-confident, and blind to the device
half = n // 2

calibrators = {
    "temperature": MulticlassTemperatureScaling(),
    "Dirichlet": DirichletCalibration(),
    "MCGrad": MulticlassMCGrad(random_state=0, n_jobs=1),
}
results = {"base": proba[half:]}
for name, cal in calibrators.items():
    features = {"X": X[:half]} if name == "MCGrad" else {}
    cal.fit(proba[:half], labels[:half], **features)
    results[name] = cal.predict(proba[half:], **({"X": X[half:]} if name == "MCGrad" else {}))

# %%
# Top-label ECE asks whether the confidence (the largest probability) is calibrated; classwise ECE averages the ECE
# of each class's column; the classwise MCE is the worst class's multicalibration error over the segments of X.
y_test = labels[half:]
for name, q in results.items():
    print(
        f"{name:12s} log loss {multiclass_log_loss(y_test, q):.4f}   top-label ECE {top_label_ece(y_test, q):.4f}"
        f"   classwise ECE {classwise_ece(y_test, q):.4f}   classwise MCE "
        f"{classwise_mce(y_test, q, X=X[half:]).mce_sigma:5.1f} sigma"
    )

# %%
# The confidence against the accuracy, in 10 bins, before and after temperature scaling.
fig, ax = plt.subplots(figsize=(5, 5))
for name in ("base", "temperature"):
    q = results[name]
    confidence, correct = q.max(axis=1), q.argmax(axis=1) == y_test
    bins = np.minimum((confidence * 10).astype(int), 9)
    used = np.unique(bins)
    ax.plot([confidence[bins == b].mean() for b in used], [correct[bins == b].mean() for b in used], "o-", label=name)
ax.plot([0, 1], [0, 1], "k:", lw=1)
ax.set_xlabel("confidence")
ax.set_ylabel("accuracy")
ax.legend()
fig.tight_layout()
