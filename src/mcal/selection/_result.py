"""The comparison table of :func:`mcal.select_calibrator`, its decision rule, and the frozen result."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._base import BaseCalibrator
from mcal._constraints import TEXT_WIDTH, validate_params

#: Columns of :attr:`CalibratorSelection.table`, in order.
TABLE_COLUMNS = ("log_loss", "log_loss_se", "delta", "delta_se", "mce_sigma", "mce_pvalue", "fit_seconds",
                 "chosen", "note")  # fmt: skip


def paired_se(d: NDArray[np.float64], w: NDArray[np.float64]) -> tuple[float, float]:
    """Weighted mean of the per-row values ``d`` and its standard error ``sqrt(sum w^2 (d - mean)^2) / W``."""
    total = w.sum()
    mean = float(np.dot(w, d) / total)
    return mean, float(np.sqrt(np.dot(w * w, (d - mean) ** 2)) / total)


def comparison_table(
    losses: dict[str, NDArray[np.float64] | None],
    w: NDArray[np.float64],
    mce: dict[str, tuple[float, float]],
    seconds: dict[str, float],
    failures: dict[str, str],
    se_tolerance: float,
    segmented: bool = True,
) -> tuple[pd.DataFrame, str, str]:
    """The table of :class:`CalibratorSelection` from each candidate's held-out per-row log loss (None for a
    candidate that failed), with the best and the chosen method.

    ``losses`` is in complexity order, simplest first. The best has the lowest mean; the chosen is the first whose
    mean exceeds the best's by at most ``se_tolerance`` paired standard errors and, when the MCE is ``segmented``
    (over segments of features, not the whole table alone), whose ``mce_sigma`` exceeds the best's by at most
    ``se_tolerance`` (sigmas are standard errors of the MCE's scale).
    """
    scored = {name: ll for name, ll in losses.items() if ll is not None}
    means = {name: paired_se(ll, w) for name, ll in scored.items()}
    best = min(means, key=lambda name: means[name][0])  # the first (simplest) of equal means
    rows: dict[str, dict[str, Any]] = {}
    for name in losses:
        if name not in scored:
            rows[name] = dict.fromkeys(TABLE_COLUMNS[:-2], math.nan) | {"chosen": False, "note": failures[name]}
            rows[name]["fit_seconds"] = seconds[name]
            continue
        delta, delta_se = paired_se(scored[name] - scored[best], w)
        rows[name] = {"log_loss": means[name][0], "log_loss_se": means[name][1], "delta": delta,
                      "delta_se": delta_se, "mce_sigma": mce[name][0], "mce_pvalue": mce[name][1],
                      "fit_seconds": seconds[name], "chosen": False}  # fmt: skip
    best_mce = float(rows[best]["mce_sigma"]) if segmented else math.inf
    chosen = next(name for name, row in rows.items() if _within(row, se_tolerance, best_mce))
    rows[chosen]["chosen"] = True
    for name, row in rows.items():
        if name not in failures:
            row["note"] = _note(name, row, best, chosen, se_tolerance, best_mce)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(TABLE_COLUMNS))
    table.index.name = "method"
    return table, best, chosen


def _within(row: dict[str, Any], se_tolerance: float, best_mce: float) -> bool:
    """Within the noise of the best on both criteria (NaN, a failed candidate, is never within)."""
    return _within_log_loss(row, se_tolerance) and bool(row["mce_sigma"] <= best_mce + se_tolerance)


def _within_log_loss(row: dict[str, Any], se_tolerance: float) -> bool:
    return bool(row["delta"] <= se_tolerance * row["delta_se"])


def _note(name: str, row: dict[str, Any], best: str, chosen: str, se_tolerance: float, best_mce: float) -> str:
    ratio = row["delta"] / row["delta_se"] if row["delta_se"] > 0 else math.inf
    if name == chosen:
        return "chosen: lowest log loss" if name == best else f"chosen: simplest within {se_tolerance:g} SE of the best"
    if name == best:
        return "lowest log loss; a simpler method is within the noise"
    if _within(row, se_tolerance, best_mce):
        return f"within {se_tolerance:g} SE of the best; a simpler method is too"
    if _within_log_loss(row, se_tolerance):
        return f"log loss within {se_tolerance:g} SE of the best, but MCE {row['mce_sigma'] - best_mce:.1f} sigma above"
    return f"worse than the best by {ratio:.1f} SE"


@dataclass(frozen=True, eq=False)
class CalibratorSelection:
    """The outcome of :func:`mcal.select_calibrator`: the comparison of the candidates on held-out
    rows, and the chosen method refitted on all rows.

    Attributes
    ----------
    chosen : str
        Name of the chosen method: the simplest within ``se_tolerance`` paired standard errors of the best's
        held-out log loss and, with segments (``n_segments > 1``), within ``se_tolerance`` sigmas of its
        ``mce_sigma``.
    best : str
        Name of the method of lowest held-out log loss.
    calibrator : BaseCalibrator
        The chosen method, fitted on all rows.
    table : DataFrame of shape (n_candidates, 9)
        One row per candidate, indexed by name, simplest first: ``log_loss`` (weighted mean held-out log loss,
        nats) and ``log_loss_se`` (its standard error), ``delta`` (``log_loss`` minus the best's) and
        ``delta_se`` (the paired standard error of that difference, 0 for the best), ``mce_sigma`` and
        ``mce_pvalue`` (the multicalibration error of the held-out predictions and its Holm-adjusted p-value,
        :func:`mcal.metrics.mce`, over segments generated once from ``X``; without ``X`` over the whole table,
        the ECCE in sigmas), ``fit_seconds`` (fitting and predicting its folds, and its MCE), ``chosen`` (bool)
        and ``note`` (why it was or was not chosen; for a candidate whose fit failed, the error, its numbers NaN).
    se_tolerance : float
        Standard errors of the rule (paired SE of log loss; sigmas of the MCE).
    folds : ndarray of int of shape (n_samples,)
        The held-out fold of each row, in ``0 .. cv - 1``; every candidate was scored on these.
    n_segments : int
        Segments of the MCE (1 without ``X``).
    """

    chosen: str
    best: str
    calibrator: BaseCalibrator
    table: pd.DataFrame
    se_tolerance: float
    folds: NDArray[np.intp]
    n_segments: int

    @property
    def reason(self) -> str:
        """Why ``chosen`` was chosen, in one sentence."""
        row, best = self.table.loc[self.chosen], self.table.loc[self.best]
        if self.chosen == self.best:
            simpler = list(self.table.index[: self.table.index.get_loc(self.chosen)])
            if not simpler:
                return f"{self.chosen} has the lowest held-out log loss ({best['log_loss']:.6f}) and is the simplest candidate"
            return (
                f"{self.chosen} has the lowest held-out log loss ({best['log_loss']:.6f}); every simpler method "
                f"is worse by more than {self.se_tolerance:g} paired SE"
                + (f", or its MCE by more than {self.se_tolerance:g} sigma" if self.n_segments > 1 else "")
            )
        mce = f" and within {self.se_tolerance:g} sigma of its MCE" if self.n_segments > 1 else ""
        return (f"{self.chosen} is the simplest method within {self.se_tolerance:g} paired SE of the best, "
                f"{self.best}{mce} (log loss {row['log_loss']:.6f} against {best['log_loss']:.6f}, difference "
                f"{row['delta']:.2g} ± {row['delta_se']:.2g})")  # fmt: skip

    @validate_params({"width": TEXT_WIDTH})
    def summary(self, width: int = 100) -> str:
        """The table as text for a terminal, with the rule and the reason beneath.

        Parameters
        ----------
        width : int >= 1, default=100
            Characters per line: the columns ``note``, ``fit_seconds`` and ``mce_pvalue`` are left out, in this
            order, while the table is wider; the reason is wrapped.

        Returns
        -------
        text : str
        """
        import textwrap

        shown = self.table.drop(columns=["log_loss_se", "chosen"])
        shown.index = [f"{name} *" if chosen else str(name) for name, chosen in self.table["chosen"].items()]
        text = shown.to_string(formatters=_FORMATTERS)
        for column in ("note", "fit_seconds", "mce_pvalue"):
            if max(len(line) for line in text.splitlines()) <= width:
                break
            shown = shown.drop(columns=[column])
            text = shown.to_string(formatters=_FORMATTERS)
        rule = (f"* chosen: {self.chosen}. {self.reason}. Held-out log loss over {int(self.folds.max()) + 1} "
                f"shared folds; MCE over {self.n_segments} segment(s).")  # fmt: skip
        return text + "\n" + textwrap.fill(rule, width, break_long_words=False)

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON-safe data (what ``mcal fit --method auto`` records in the model file).

        Returns
        -------
        data : dict
            ``{"chosen", "best", "reason", "se_tolerance", "n_folds", "n_segments", "table"}``; ``table`` maps
            each method to its row, non-finite numbers as None.
        """
        table = {
            name: {k: (v if isinstance(v, (str, bool)) else _finite_or_none(v)) for k, v in row.items()}
            for name, row in self.table.iterrows()
        }
        return {"chosen": self.chosen, "best": self.best, "reason": self.reason,
                "se_tolerance": self.se_tolerance, "n_folds": int(self.folds.max()) + 1,
                "n_segments": self.n_segments, "table": table}  # fmt: skip


def _finite_or_none(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


_FORMATTERS = {
    "log_loss": "{:.6f}".format,
    "delta": "{:+.2g}".format,
    "delta_se": "{:.2g}".format,
    "mce_sigma": "{:.2f}".format,
    "mce_pvalue": lambda v: "< 1e-15" if v < 1e-15 else f"{v:.2g}",  # never "0": the tail's precision ends there
    "fit_seconds": "{:.2f}".format,
}
