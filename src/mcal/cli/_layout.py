"""Tables of ``mcal evaluate`` laid out for the terminal: every score column of a metric or a segment on screen.

A comparison of score columns is the point of the output, so no table is wider than the terminal
(:func:`shutil.get_terminal_size`: ``COLUMNS``, else the terminal, else 80 characters): the metrics are rows with a
column per score column (wrapped in blocks of columns when too many), and the worst segments are one row each
when that fits, else a line per segment with a row per score column beneath it.
"""

from __future__ import annotations

import math
import shutil
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads no pandas
    import pandas as pd

#: Columns of a score column's row in the table of the worst segments.
_SCORE_FIELDS = ("mean", "error", "ECCE/σ", "p (Holm)")


def terminal_width() -> int:
    """Characters per line of the terminal (``COLUMNS`` first; 80 when the output is not a terminal)."""
    return shutil.get_terminal_size((80, 24)).columns


def wrap(text: str, width: int, indent: str = "") -> str:
    """``text`` wrapped to ``width``, its later lines indented by ``indent``; never broken inside a word."""
    return textwrap.fill(text, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def with_interval(value: str, low: float, high: float) -> str:
    """``"0.288 [0.282, 0.297]"``: a value followed by its interval (``[–]`` where it has none)."""
    return f"{value} [–]" if math.isnan(low) else f"{value} [{low:.3g}, {high:.3g}]"


def align(cells: list[str]) -> list[str]:
    """Cells of one column padded to one width, their values right-aligned and their intervals (``[...]``) after."""
    parts = [c.split(" [", 1) if " [" in c else [c, ""] for c in cells]
    size = max(len(v) for v, _ in parts)
    out = [v.rjust(size) + (f" [{i}" if i else "") for v, i in parts]
    return [c.ljust(max(len(c) for c in out)) for c in out]


def metrics_text(table: pd.DataFrame, shown: pd.DataFrame, width: int) -> str:
    """The metrics as text, a row per metric and a column per score column.

    ``table`` holds the numbers (a row per score column; an interval of ``m`` in ``m_low`` and ``m_high``),
    ``shown`` the same table with the p-values already as text. A value prints with 6 decimals and its interval
    after it; more score columns than ``width`` holds wrap into blocks of columns, and a name too wide for one
    puts each column's metrics beneath its name.
    """
    import pandas as pd

    metrics = [c for c in table.columns if not str(c).endswith(("_low", "_high"))]
    cells = {}
    for name in table.index:
        column = []
        for metric in metrics:
            value = shown.at[name, metric]
            text = value if isinstance(value, str) else f"{value:.6f}"
            if f"{metric}_low" in table.columns:
                text = with_interval(text, table.at[name, f"{metric}_low"], table.at[name, f"{metric}_high"])
            column.append(text)
        cells[name] = align(column)
    text = pd.DataFrame(cells, index=metrics).to_string(line_width=width)
    if max(len(line) for line in text.splitlines()) <= width:
        return text
    # a score column's name wider than the room: each column's metrics beneath its name
    return "\n\n".join(f"{name}:\n" + pd.Series(column, index=metrics).to_string() for name, column in cells.items())


def findings_text(table: pd.DataFrame, width: int) -> str:
    """The table of :func:`mcal.report.findings_table` as text no wider than ``width``.

    One row per segment when that fits; else a line per segment (rank, description, rows, observed rate,
    near-duplicates), wrapped, with a row per score column beneath it, so that every column of a segment is
    on screen together; a score column's name too long for its numbers beside it takes a line of its own.
    """
    import pandas as pd

    wide = table.to_string()
    if max(len(line) for line in wide.splitlines()) <= width:
        return wide
    scores = list(dict.fromkeys(c[0] for c in table.columns if c[0] != ""))
    shared = ("", "observed") in table.columns  # else each score column has its own (a class against the rest)
    fields = _SCORE_FIELDS if shared else ("observed", *_SCORE_FIELDS)
    names = max(len("score column"), *(len(s) for s in scores))
    for f in fields:  # one alignment down each field, across every segment and score column
        cells = align([str(v) for v in table[[(s, f) for s in scores]].to_numpy().ravel()])
        table = table.copy()
        table[[(s, f) for s in scores]] = pd.DataFrame(
            [cells[k : k + len(scores)] for k in range(0, len(cells), len(scores))], index=table.index
        ).to_numpy()
    sizes = {f: max(len(f), *(len(str(v)) for v in table[[(s, f) for s in scores]].to_numpy().ravel()))
             for f in fields}  # fmt: skip
    pad = " " * 4
    beside = len(pad) + names + sum(2 + sizes[f] for f in fields) <= width  # else each name on a line of its own

    def score_lines(name: str, cells: list[str]) -> list[str]:
        numbers = "".join("  " + c.rjust(sizes[f]) for c, f in zip(cells, fields, strict=True))
        return [pad + name.ljust(names) + numbers] if beside else [pad + name, pad + numbers]

    lines = score_lines("score column", list(fields))
    for rank, row in table.iterrows():
        similar = int(row.get(("", "similar"), 0))
        observed = f", observed {row[('', 'observed')]}" if shared else ""
        facts = f"{row[('', 'rows')]} rows{observed}" + (f", {similar} similar" if similar else "")
        lines.append(wrap(f"{rank:>2}  {row[('', 'segment')]}: {facts}", width, pad))
        for s in scores:
            lines += score_lines(s, [str(row[(s, f)]) for f in fields])
    return "\n".join(lines)
