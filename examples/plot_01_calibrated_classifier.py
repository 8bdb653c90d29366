"""
Calibrating a scikit-learn model
================================

:class:`mcal.CalibratedClassifier` wraps a scikit-learn classifier and calibrates its probabilities: by default it
cross-fits 5 (base model, isotonic calibration) pairs and averages them, as scikit-learn's
``CalibratedClassifierCV`` does. Here the base model is Gaussian naive Bayes, whose probabilities are far from
calibrated, on 12,000 rows of UCI Bank Marketing (shipped with mcal).
"""

import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

import mcal
from mcal.datasets import BANK_NUMERICAL, load_bank_marketing
from mcal.metrics import ece, log_loss
from mcal.plotting import plot_calibration

data = load_bank_marketing().sample(12_000, random_state=0)
X, y = data[BANK_NUMERICAL].to_numpy(float), data["y"].to_numpy()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)

base = GaussianNB().fit(X_train, y_train)
calibrated = mcal.CalibratedClassifier(GaussianNB(), random_state=0).fit(X_train, y_train)

p_base = base.predict_proba(X_test)[:, 1]
p_cal = calibrated.predict_proba(X_test)[:, 1]
for name, p in [("naive Bayes", p_base), ("calibrated", p_cal)]:
    print(f"{name:12s} log loss {log_loss(y_test, p):.4f}   ECE {ece(y_test, p):.4f}")

# %%
# The reliability diagram (top) plots the observed rate of positives against the mean predicted probability in
# each bin, with a 95% Wilson interval; calibrated scores lie on the diagonal. The histogram (bottom) shows where
# the scores fall: naive Bayes pushes most of them to 0 or 1.
fig, axes = plt.subplots(2, 1, figsize=(6, 7), height_ratios=(3, 1), sharex=True)
plot_calibration(y_test, {"naive Bayes": p_base, "calibrated": p_cal}, axes=tuple(axes))
fig.tight_layout()
