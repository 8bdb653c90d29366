"""The report's per-value section: every value of each segment column with enough rows, for every score column."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from mcal.report._findings import format_pvalue
from mcal.report._html import _num


def check_per_value(per_value: Any, names: list[str]) -> None:
    """Refuse a ``per_value`` that is not a mapping of every score column to a :class:`mcal.metrics.PerValueTable`."""
    from mcal.metrics import PerValueTable

    if not isinstance(per_value, Mapping) or not all(isinstance(t, PerValueTable) for t in per_value.values()):
        raise TypeError(f"per_value must be a mapping of score column names to PerValueTable; got {per_value!r:.100}")
    if sorted(per_value) != sorted(names):
        raise ValueError(f"per_value must have one table per score column {names}; got {sorted(per_value)}")


def per_value_section(per_value: Mapping[str, Any]) -> str:
    """A table of every listed value: its rows, then each score column's ECCE in sigmas and Holm-adjusted p-value."""
    first = next(iter(per_value.values()))
    head = "".join(f'<th colspan="2">{escape(name)}</th>' for name in per_value)
    sub = "<th>ECCE/σ</th><th>p (Holm)</th>" * len(per_value)
    by_column = {name: t.table.set_index("description") for name, t in per_value.items()}
    rows = "".join(
        f"<tr><td>{escape(str(value))}</td>{_num(size, 6)}"
        + "".join(
            _num(t.at[value, "ecce_sigma"], 3) + f"<td>{escape(format_pvalue(t.at[value, 'pvalue_adjusted']))}</td>"
            for t in by_column.values()
        )
        + "</tr>"
        for value, size in zip(first.table["description"], first.table["size"], strict=True)
    )
    left = [f"{int(n):,} of {escape(str(feature))}" for feature, n in first.n_left_out.items() if n]
    note = f" Values with fewer rows are not listed: {', '.join(left)}." if left else ""
    return (
        '<section id="values"><h2>Calibration per value</h2>'
        f'<table class="values"><thead><tr><th rowspan="2">value</th><th rowspan="2">rows</th>{head}</tr>'
        f"<tr>{sub}</tr></thead><tbody>{rows}</tbody></table>"
        f'<p class="note">Every value of each segment column with at least {first.min_samples_per_value} rows, '
        "each column's values worst first: the ECCE of the value's rows in sigmas, and its p-value Holm-adjusted "
        f"over every listed value (mcal.metrics.per_value_table).{note}</p></section>"
    )
