"""The report's opening verdict: for each score column, in plain words, whether it is calibrated overall and in the
segments, which segments still fail and by how much."""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._shared.brownian import PVALUE_FLOOR
from mcal._shared.text import p_equals
from mcal._validation import EPS

#: Level of the verdict's tests: global ECCE p-value, and Holm-adjusted segment p-values.
ALPHA = 0.05


def column_verdict(
    name: str, y: NDArray, p: NDArray, w: NDArray, summary: pd.Series, result: Any | None,
    worst_rows: NDArray | None = None,
) -> str:  # fmt: skip
    """One column's verdict as an HTML list item: calibration in the large, then in the segments (``worst_rows``:
    the rows of the worst segment, whose error is described by its shape)."""
    mean_score, observed = float(np.average(p, weights=w)), float(np.average(y, weights=w))
    pvalue = float(summary["ecce_pvalue"])
    sigma = float(summary["ecce_sigma_scale"])
    means = f"mean score {mean_score:.4g} against an observed rate of {observed:.4g}"
    if pvalue >= ALPHA:
        overall = (
            f"calibrated overall: no evidence of miscalibration (ECCE {sigma:.2f} σ, {p_equals(pvalue)}); {means}."
        )
    else:
        shape = confidence_shape(y, p, w)
        overall = (f"<b>miscalibrated overall</b> (ECCE {sigma:.2f} σ, {p_equals(pvalue)}); {means}"
                   + ("" if shape is None else f"; {shape}") + ".")  # fmt: skip
    parts = [f'<li data-score="{escape(name)}"><b>{escape(name)}</b>: {overall}']
    if result is not None:
        shape = None if worst_rows is None else confidence_shape(y[worst_rows], p[worst_rows], w[worst_rows])
        parts.append(" " + _segments_verdict(result.table, shape))
    return "".join(parts) + "</li>"


def confidence_shape(y: NDArray, p: NDArray, w: NDArray) -> str | None:
    """ "over-confident: ...", "under-confident: ..." or "reversed: ..." where the error changes sign over the
    scores, else None.

    The logistic recalibration :math:`\\operatorname{expit}(a + b \\operatorname{logit} p)` (Cox 1958) is fitted by
    weighted maximum likelihood (scikit-learn's ``LogisticRegression`` with ``C=inf``, no penalty); a slope ``b``
    below 1 by more than two standard errors (Fisher information) is over-confidence (scores too low at the low end
    and too high at the high end), above 1 under-confidence, when the recalibration crosses the diagonal between the
    5th and 95th percentiles of the scores, so that the error does change sign there; otherwise the error is
    one-signed and the mean direction says it. A slope below 0 by more than two standard errors is no
    over-confidence but scores that run against the outcome ("reversed"): the observed rate falls as the score rises.
    """
    from scipy.special import expit, logit
    from sklearn.linear_model import LogisticRegression

    keep = w > 0
    z = logit(np.clip(p[keep], EPS, 1.0 - EPS))
    yk, wk = y[keep], w[keep]
    if z.size < 3 or np.ptp(z) == 0.0 or np.ptp(yk) == 0.0:
        return None
    fit = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(z[:, None], yk, sample_weight=wk)
    a, b = float(fit.intercept_[0]), float(fit.coef_[0, 0])
    q = expit(a + b * z)
    X = np.column_stack([np.ones_like(z), z])
    var_b = np.linalg.pinv(X.T @ (X * (wk * q * (1.0 - q))[:, None]))[1, 1]  # inverse Fisher information
    low, high = np.quantile(z, [0.05, 0.95])
    if not (abs(b - 1.0) > 2.0 * np.sqrt(var_b) and abs(1.0 - b) > 1e-12 and low < a / (1.0 - b) < high):
        return None
    cross = float(expit(a / (1.0 - b)))
    if b + 2.0 * np.sqrt(var_b) < 0.0:
        return (f"reversed: the observed rate falls as the score rises (calibration slope {b:.2f} < 0); scores too "
                f"low below {cross:.2g} and too high above it")  # fmt: skip
    if b < 1.0:
        return (f"over-confident: scores too low below {cross:.2g} and too high above it (calibration slope "
                f"{b:.2f} < 1)")  # fmt: skip
    return f"under-confident: scores too high below {cross:.2g} and too low above it (calibration slope {b:.2f} > 1)"


def _segments_verdict(table: pd.DataFrame, shape: str | None = None) -> str:
    tested = table[table["pvalue"].notna()]
    failing = tested[tested["pvalue_adjusted"] < ALPHA]
    worst = tested.iloc[0]
    floor = min(1.0, len(tested) * PVALUE_FLOOR)
    how = (
        f"{escape(str(worst['description']))} ({int(worst['size']):,} rows): mean score {worst['mean_prediction']:.4g}"
        f" against {worst['mean_outcome']:.4g} observed, {shape or _direction(worst)}, ECCE {worst['ecce_sigma']:.2f} σ, "
        f"Holm-adjusted {p_equals(worst['pvalue_adjusted'], floor=floor)}"
    )
    if failing.empty:
        return f"In the segments: none of the {len(tested):,} fails after the Holm adjustment; the worst is {how}."
    return (
        f"<b>In the segments: {len(failing):,} of {len(tested):,} fail</b> after the Holm adjustment "
        f"(p &lt; {ALPHA}); the worst is {how}."
    )


def _direction(row: pd.Series) -> str:
    if row["direction"] == "over":
        return "over-predicted"
    if row["direction"] == "under":
        return "under-predicted"
    return "neither over- nor under-predicted on average"


def verdict_section(items: list[str], best: str | None) -> str:
    """The verdict section from each column's :func:`column_verdict`, and the column of lowest log loss."""
    lead = "" if best is None else f"<p>Lowest log loss: <b>{escape(best)}</b>.</p>"
    return (
        '<section id="verdict"><h2>Verdict</h2>'
        f'<ul class="verdict">{"".join(items)}</ul>{lead}'
        f'<p class="note">Calibrated overall: the ECCE test (no bins) does not reject at {ALPHA}. A segment fails '
        f"when its ECCE / σ test rejects at {ALPHA} after Holm's adjustment for the number of segments tested, "
        "which holds the chance of any false alarm to 5 % however the segments overlap.</p></section>"
    )
