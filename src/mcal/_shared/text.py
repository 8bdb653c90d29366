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
