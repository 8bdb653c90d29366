"""The report's opening verdict: for each score column, in plain words, whether it is calibrated overall and in the
segments, which segments still fail and by how much."""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal.report._findings import PVALUE_FLOOR, p_equals

#: Level of the verdict's tests: global ECCE p-value, and Holm-adjusted segment p-values.
ALPHA = 0.05


def column_verdict(
    name: str, y: NDArray, p: NDArray, w: NDArray, summary: pd.Series, result: Any | None
) -> str:  # fmt: skip
    """One column's verdict as an HTML list item: calibration in the large, then in the segments."""
    mean_score, observed = float(np.average(p, weights=w)), float(np.average(y, weights=w))
    pvalue = float(summary["ecce_pvalue"])
    sigma = float(summary["ecce_sigma_scale"])
    means = f"mean score {mean_score:.4g} against an observed rate of {observed:.4g}"
    if pvalue >= ALPHA:
        overall = (
            f"calibrated overall: no evidence of miscalibration (ECCE {sigma:.2f} σ, {p_equals(pvalue)}); {means}."
        )
    else:
        overall = f"<b>miscalibrated overall</b> (ECCE {sigma:.2f} σ, {p_equals(pvalue)}); {means}."
    parts = [f'<li data-score="{escape(name)}"><b>{escape(name)}</b>: {overall}']
    if result is not None:
        parts.append(" " + _segments_verdict(result.table))
    return "".join(parts) + "</li>"


def _segments_verdict(table: pd.DataFrame) -> str:
    tested = table[table["pvalue"].notna()]
    failing = tested[tested["pvalue_adjusted"] < ALPHA]
    worst = tested.iloc[0]
    floor = min(1.0, len(tested) * PVALUE_FLOOR)
    how = (
        f"{escape(str(worst['description']))} ({int(worst['size']):,} rows): mean score {worst['mean_prediction']:.4g}"
        f" against {worst['mean_outcome']:.4g} observed, {_direction(worst)}, ECCE {worst['ecce_sigma']:.2f} σ, "
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
