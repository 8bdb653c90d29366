"""
Auditing segments with the MCE
==============================

A model can be calibrated on average and miscalibrated in a segment of the data (retired clients, single clients
under 30, ...). :func:`mcal.metrics.mce` generates segments from the features (conjunctions of up to three
conditions) and reports the multicalibration error: the largest ECCE over the segments, in units of its standard
deviation under calibration (``mce_sigma``). :func:`mcal.metrics.worst_segments` lists the segments behind it, with
p-values adjusted for the number of segments tested (Holm).
"""

import matplotlib.pyplot as plt
from sklearn.linear_model import LogisticRegression

from mcal.datasets import load_bank_marketing
from mcal.metrics import ecce, ecce_pvalue, ecce_std, mce, worst_segments
from mcal.plotting import plot_segment_errors
from mcal.report import findings_table, format_pvalue
from mcal.segments import generate_segments

data = load_bank_marketing().sample(16_000, random_state=0).reset_index(drop=True)
train, test = data.iloc[:8000], data.iloc[8000:].reset_index(drop=True)

# a base model on two numerical features only: it cannot see the job or the marital status
features = ["duration", "balance"]
model = LogisticRegression(max_iter=1000).fit(train[features], train["y"])
p = model.predict_proba(test[features])[:, 1]
sigmas = ecce(test["y"], p) / ecce_std(test["y"], p)
print(f"overall: ECCE = {sigmas:.1f} sigma, p-value {format_pvalue(ecce_pvalue(test['y'], p))}")

# %%
# Overall the scores are miscalibrated: too high for the lowest and the highest scores, too low in between. Over
# segments of age, job, marital status and education the error is larger, and the segments say where:
audit = test[["age", "job", "marital", "education"]]
segments = generate_segments(audit)
result = mce(test["y"], p, segments=segments)
print(
    f"{result.n_segments} segments; MCE = {result.mce_sigma:.1f} sigma, worst-segment p-value {format_pvalue(result.pvalue)}"
)

# %%
# The worst segments, grouped with their near-duplicates. ``ECCE/σ`` is the segment's ECCE in units of its
# standard deviation under calibration; ``p (Holm)`` is its p-value adjusted for all the segments tested, so a
# small value there is a finding, not the luck of many tests.
worst = worst_segments({"base": result}, segments, n_worst=8)
print(findings_table(worst, result.n_segments).to_string())

# %%
# Each point is a segment: its size against its error in sigma; the labelled ones are the worst.
fig, ax = plt.subplots(figsize=(7, 4))
plot_segment_errors(result, ax=ax)
fig.tight_layout()
