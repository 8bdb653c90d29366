"""
MCGrad against isotonic calibration on Bank Marketing
=====================================================

Isotonic calibration maps each score to a calibrated probability, the same map for every row. MCGrad
(:class:`mcal.MCGrad`) also reads the features, and fixes the miscalibration of each segment. The data is UCI Bank
Marketing as shipped with mcal (a 15,000-row sample of it, so that the example runs in seconds), split into a base
model's training rows, calibration rows and test rows.
"""

import matplotlib.pyplot as plt
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import mcal
from mcal.datasets import BANK_CATEGORICAL, BANK_NUMERICAL, load_bank_marketing
from mcal.metrics import log_loss, mce
from mcal.segments import generate_segments

data = load_bank_marketing().sample(15_000, random_state=1).reset_index(drop=True)
train, calib, test = data.iloc[:5000], data.iloc[5000:10000], data.iloc[10000:]
features = BANK_CATEGORICAL + BANK_NUMERICAL

# the base model sees the numerical features only
base = make_pipeline(
    make_column_transformer((StandardScaler(), BANK_NUMERICAL)), LogisticRegression(max_iter=1000)
).fit(train[features], train["y"])
p_calib = base.predict_proba(calib[features])[:, 1]
p_test = base.predict_proba(test[features])[:, 1]

isotonic = mcal.IsotonicCalibration().fit(p_calib, calib["y"])
mcgrad = mcal.MCGrad(random_state=0, n_jobs=1).fit(p_calib, calib["y"], X=calib[features])
print(f"MCGrad kept {mcgrad.n_rounds_} rounds")

scores = {
    "base": p_test,
    "isotonic": isotonic.predict(p_test),
    "MCGrad": mcgrad.predict(p_test, X=test[features]),
}

# %%
# The log loss, and the MCE over segments of age, job, marital status and education, on the test rows. Isotonic
# calibration fixes the average; MCGrad lowers the segment-wise error too.
segments = generate_segments(test[["age", "job", "marital", "education"]])
for name, p in scores.items():
    result = mce(test["y"], p, segments=segments)
    print(f"{name:9s} log loss {log_loss(test['y'], p):.4f}   MCE {result.mce_sigma:5.2f} sigma")

# %%
# The features MCGrad's rounds split on most, by gain (``"score"`` is the input score):
importance = mcgrad.feature_importance()
ax = importance.sort_values().tail(8).plot.barh(figsize=(6, 3.5))
ax.set_xlabel("split gain")
plt.tight_layout()
