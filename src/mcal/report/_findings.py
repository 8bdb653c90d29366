"""Readable forms of the segment findings: p-values that never read "0", and one table across score columns."""

from __future__ import annotations

import pandas as pd

from mcal._shared.brownian import PVALUE_FLOOR
from mcal._shared.text import pvalue_text


def format_pvalue(pvalue: float, *, floor: float = PVALUE_FLOOR) -> str:
    """A p-value as text, ``"< 1e-15"`` (``floor``) below its precision instead of ``"0"``.

    Parameters
    ----------
    pvalue : float
        A p-value in [0, 1], or NaN (no test: ``"–"``).
    floor : float, default=1e-15
        Smallest p-value printed as a number; for a p-value adjusted over ``m`` tests, ``m`` times that of one.

    Returns
    -------
    text : str
        Three significant digits, or ``"< floor"``.

    Examples
    --------
    >>> format_pvalue(0.0), format_pvalue(0.01234), format_pvalue(0.0, floor=347e-15), format_pvalue(float("nan"))
    ('< 1e-15', '0.0123', '< 3.5e-13', '–')
    """
    return pvalue_text(pvalue, floor)


def format_pvalue_columns(table: pd.DataFrame, *, floor: float = PVALUE_FLOOR) -> pd.DataFrame:
    """A copy of ``table`` whose p-value columns (names ending in ``pvalue``) are text from :func:`format_pvalue`.

    For printed tables, so that a p-value below ``floor`` reads ``"< 1e-15"``, never ``"0"``; other columns are kept.

    Parameters
    ----------
    table : DataFrame
        Any table; columns whose names end in ``pvalue`` hold p-values in [0, 1] or NaN.
    floor : float, default=1e-15
        Smallest p-value printed as a number.

    Returns
    -------
    formatted : DataFrame
        A copy of ``table``, its p-value columns as text.

    Examples
    --------
    >>> format_pvalue_columns(pd.DataFrame({"ecce": [0.5], "ecce_pvalue": [0.0]}))["ecce_pvalue"].tolist()
    ['< 1e-15']
    """
    out = table.copy()
    for name in out.columns:
        if str(name).endswith("pvalue"):
            out[name] = [format_pvalue(float(v), floor=floor) for v in out[name]]
    return out


def findings_table(worst: pd.DataFrame, n_tests: int) -> pd.DataFrame:
    """The rows of :func:`mcal.metrics.worst_segments` as one text table: a row per segment, a column group per
    score column (mean score, direction, ECCE / σ, Holm-adjusted p-value).

    Parameters
    ----------
    worst : DataFrame
        As returned by :func:`mcal.metrics.worst_segments`.
    n_tests : int
        Segments the p-values were adjusted over (sets the floor of the adjusted p-values, ``n_tests * 1e-15``).

    Returns
    -------
    table : DataFrame of str
        Index: the rank; columns: ``("", "segment")``, ``("", "rows")``, ``("", "observed")``, ``("", "similar")``
        and, for each score column ``c``, ``(c, "mean")``, ``(c, "error")``, ``(c, "ECCE/σ")`` and
        ``(c, "p (Holm)")``. Where the observed rate of a segment differs between score columns (one class
        against the rest, a column per class), ``(c, "observed")`` replaces ``("", "observed")``.
    """
    floor = min(1.0, n_tests * PVALUE_FLOOR)
    shared = bool((worst.groupby("rank")["mean_outcome"].nunique(dropna=False) <= 1).all())
    rows = {}
    for rank, group in worst.groupby("rank", sort=True):
        first = group.iloc[0]
        row = {("", "segment"): first["description"], ("", "rows"): f"{int(first['size']):,}"}
        if shared:
            row[("", "observed")] = f"{first['mean_outcome']:.4g}"
        row[("", "similar")] = str(int(group["n_similar"].max()))
        for r in group.itertuples(index=False):
            if not shared:
                row[(r.score, "observed")] = f"{r.mean_outcome:.4g}"
            row[(r.score, "mean")] = f"{r.mean_prediction:.4g}"
            row[(r.score, "error")] = r.direction or "–"
            row[(r.score, "ECCE/σ")] = f"{r.ecce_sigma:.3g}"
            row[(r.score, "p (Holm)")] = format_pvalue(r.pvalue_adjusted, floor=floor)
        rows[rank] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table
