"""Readable text of the metrics' result objects: their summaries lead with what a segment is, not its number."""

from __future__ import annotations

import math
import textwrap

import pandas as pd

from mcal._shared.brownian import PVALUE_FLOOR


def pvalue_text(pvalue: float, floor: float = PVALUE_FLOOR) -> str:
    """A p-value to 3 significant digits, ``"< 1e-15"`` (``floor``) below its precision, ``"–"`` for NaN."""
    if math.isnan(pvalue):
        return "–"
    return f"< {floor:.2g}" if pvalue < floor else f"{pvalue:.3g}"


def p_equals(pvalue: float, *, floor: float = PVALUE_FLOOR) -> str:
    """``"p = 0.0123"``, or ``"p < 1e-15"`` below the floor (see :func:`mcal.report.format_pvalue`).

    Parameters
    ----------
    pvalue : float
        A p-value in [0, 1], or NaN.
    floor : float, default=PVALUE_FLOOR
        Smallest p-value printed as a number.

    Returns
    -------
    text : str
        ``"p = "`` followed by the p-value to three significant digits, or ``"p < floor"``.
    """
    text = pvalue_text(pvalue, floor)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def findings_note(worst: pd.DataFrame, n_tests: int, max_overlap: float | None) -> str:
    """One sentence saying how the table of :func:`mcal.report.findings_table` was made.

    Parameters
    ----------
    worst : DataFrame
        As returned by :func:`mcal.metrics.worst_segments`.
    n_tests : int
        Segments the p-values were adjusted over.
    max_overlap : float or None
        The ``max_overlap`` that :func:`mcal.metrics.worst_segments` grouped near-duplicates with (None: not grouped).

    Returns
    -------
    note : str
        The order of the rows, the number of tests, the grouping rule and the meaning of the error column.
    """
    scores = list(dict.fromkeys(worst["score"]))
    order = f"{scores[0]}'s worst segments first, then each later column's" if len(scores) > 1 else "worst first"
    grouped = int(worst.drop_duplicates("rank")["n_similar"].sum())
    rule = (
        "near-duplicates not grouped"
        if max_overlap is None
        else f"{grouped} near-duplicate(s) grouped into the row they resemble (same error direction, sharing "
        f">= {max_overlap:.0%} of the larger segment's weight)"
    )
    return (
        f"{order}; {n_tests:,} segments tested, p-values Holm-adjusted for {n_tests:,} tests; {rule}; error: "
        "'over' where the mean score exceeds the observed rate, 'under' where it falls short"
    )


def segments_text(table: pd.DataFrame, n_worst: int, width: int) -> str:
    """The first ``n_worst`` rows of a per-segment table of :class:`~mcal.metrics.MCEResult` as text: the
    description first (left-aligned, wrapped onto more lines where the numbers leave too little room within
    ``width``, between conditions and words where it can, later lines indented), then rows, mean prediction ("predicted"), mean outcome
    ("observed"), error direction, ECCE / sigma and the Holm-adjusted p-value."""
    tested = int(table["pvalue"].notna().sum())
    rows = table.head(n_worst)
    numbers = pd.DataFrame({
        "rows": [f"{int(v):,}" for v in rows["size"]],
        "predicted": [f"{v:.4g}" for v in rows["mean_prediction"]],
        "observed": [f"{v:.4g}" for v in rows["mean_outcome"]],
        "error": [d or "–" for d in rows["direction"]],
        "ECCE/σ": [f"{v:.3g}" for v in rows["ecce_sigma"]],
        "p (Holm)": [pvalue_text(v, min(1.0, tested * PVALUE_FLOOR)) for v in rows["pvalue_adjusted"]],
    })  # fmt: skip
    right = numbers.to_string(index=False).splitlines()
    room = max(len("segment"), width - len(right[0]) - 2)
    names = [["segment"]] + [textwrap.wrap(str(d), room, subsequent_indent="  ", break_on_hyphens=False) or [""]
                             for d in rows["description"]]  # fmt: skip
    size = max(len(part) for name in names for part in name)
    return "\n".join(
        "\n".join([name[0].ljust(size) + "  " + line, *name[1:]]) for name, line in zip(names, right, strict=True)
    )


def plain_text(text: object) -> str:
    """A label that matplotlib draws as written: ``text`` with its dollar signs escaped.

    Matplotlib parses text between dollar signs as mathtext: a segment ``price=$5 to $10`` drew as math, and
    ``$\\frac{x$`` raised a ParseSyntaxException.

    Parameters
    ----------
    text : object
        The label; its ``str``.

    Returns
    -------
    label : str
        ``str(text)`` with every ``$`` escaped.
    """
    return str(text).replace("$", r"\$")
