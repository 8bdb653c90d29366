"""The segments and rows of a per-value table (:func:`mcal.metrics.per_value_table` and its Dask mirror): one
depth-1 segment per value of each feature, all features' segments in one set, and the listed rows cut from the
MCE table of that set."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from mcal._features.segment_codes import feature_table, resolve_categorical
from mcal._shared.mce import holm
from mcal._shared.text import pvalue_text
from mcal._validation import CalibrationWarning
from mcal.segments import Segments, concat, generate_segments

#: Columns of ``PerValueTable.table``.
COLUMNS = ["feature", "description", "size", "weight", "mean_prediction", "mean_outcome", "direction", "ecce",
           "sigma", "ecce_sigma", "pvalue", "pvalue_adjusted"]  # fmt: skip


def value_segments(
    X: Any, categorical_features: Any, max_values_per_feature: int | Mapping[str, int]
) -> tuple[Segments, list[tuple[str, int, int]]]:
    """The depth-1 segments of every value of each feature of ``X`` (in memory), joined into one set, and each
    feature's span ``(name, first, stop)`` of segment numbers in it (each feature's own whole-table segment at
    ``first - 1`` left out).

    A categorical feature keeps every value (as text, as segments know them); a numerical one is cut as
    :func:`mcal.segments.generate_segments` cuts it with ``max_values_per_feature``.

    Raises
    ------
    ValueError, TypeError
        As :func:`mcal.segments.generate_segments` for ``X``, ``categorical_features`` and
        ``max_values_per_feature``.
    """
    names, columns, kinds = feature_table(X)
    is_cat = resolve_categorical(categorical_features, X, kinds)
    with warnings.catch_warnings():  # the rules of max_values_per_feature, checked where they are declared
        warnings.simplefilter("ignore", CalibrationWarning)  # a single-level feature: warned about below
        generate_segments(X, max_depth=0, max_values_per_feature=max_values_per_feature)
    by_name = max_values_per_feature if isinstance(max_values_per_feature, Mapping) else None
    parts, spans, start = [], [], 0
    for name, column, cat in zip(names, columns, is_cat, strict=False):
        levels: Any = max_values_per_feature
        if cat:  # every value: as many levels as distinct values
            levels = max(pd.unique(np.asarray(column)[~pd.isna(column)].astype(str)).size, 2)
        elif by_name is not None:
            levels = {key: value for key, value in by_name.items() if key == name}
        part = generate_segments(pd.DataFrame({name: column}), max_depth=1, max_values_per_feature=levels,
                                 min_samples_per_segment=1, max_n_segments=None,
                                 categorical_features=[name] if cat else None)  # fmt: skip
        parts.append(part)
        spans.append((name, start + 1, start + len(part)))
        start += len(part)
    return concat(*parts), spans


def value_rows(
    table: pd.DataFrame, spans: list[tuple[str, int, int]], min_samples_per_value: int
) -> tuple[pd.DataFrame, pd.Series]:
    """The listed rows (``COLUMNS``) of the MCE ``table`` of :func:`value_segments`' set, and per feature the
    number of values left out for having fewer than ``min_samples_per_value`` rows or a total weight of 0; p-values Holm-adjusted over
    every listed value. Each feature's values keep the table's order (worst first)."""
    rows, left_out = [], {}
    for name, first, stop in spans:
        values = table[(table["segment"] >= first) & (table["segment"] < stop)]  # worst first, as in the table
        listed = (values["size"] >= min_samples_per_value) & (values["weight"] > 0)  # no weight: nothing to measure
        left_out[name] = int((~listed).sum())
        rows.append(values[listed].assign(feature=name))
    out = pd.concat(rows, ignore_index=True)
    out["pvalue_adjusted"] = holm(out["pvalue"].to_numpy())
    return out[COLUMNS], pd.Series(left_out, dtype=np.int64, name="n_left_out")


def per_value_html(per_value: Mapping[str, Any], where: str = "") -> str:
    """The HTML section ``values`` of per-value tables (``PerValueTable`` by score column, or by class): every
    listed value and its rows, then each table's ECCE in sigmas and Holm-adjusted p-value; ``where`` (e.g.
    ``"In the latest window, "``) starts the note. A sentence replaces the table when no value is listed."""
    first = next(iter(per_value.values()))
    head = "".join(f'<th colspan="2">{escape(str(name))}</th>' for name in per_value)
    sub = "<th>ECCE/σ</th><th>p (Holm)</th>" * len(per_value)
    by_column = {name: t.table.set_index("description") for name, t in per_value.items()}
    rows = "".join(
        f"<tr><td>{escape(str(value))}</td>{_cell(size, 6)}"
        + "".join(_cell(t.at[value, "ecce_sigma"], 3) + f"<td>{escape(pvalue_text(t.at[value, 'pvalue_adjusted']))}</td>"
                  for t in by_column.values())
        + "</tr>"
        for value, size in zip(first.table["description"], first.table["size"], strict=True)
    )  # fmt: skip
    left = [f"{int(n):,} of {escape(str(feature))}" for feature, n in first.n_left_out.items() if n]
    note = f" Values with fewer rows are not listed: {', '.join(left)}." if left else ""
    intro = f"{where}every value"
    table = (
        f'<table class="values"><thead><tr><th rowspan="2">value</th><th rowspan="2">rows</th>{head}</tr>'
        f"<tr>{sub}</tr></thead><tbody>{rows}</tbody></table>"
        if rows
        else "<p>No value listed.</p>"
    )
    return (
        f'<section id="values"><h2>Calibration per value</h2>{table}'
        f'<p class="note">{intro[0].upper() + intro[1:]} of each segment column with at least '
        f"{first.min_samples_per_value} rows, each column's values worst first: the ECCE of the value's rows in sigmas, and its p-value "
        f"Holm-adjusted over every listed value (mcal.metrics.per_value_table).{note}</p></section>"
    )


def _cell(value: float, digits: int) -> str:
    """A number's table cell: rounded to ``digits`` significant digits, the exact value in ``data-value``."""
    value = float(value)
    shown = "–" if math.isnan(value) else f"{value:.{digits}g}"
    return f'<td class="num" data-value="{value!r}">{shown}</td>'
