"""The per-value table that ``mcal evaluate``, ``mcal report`` and ``mcal monitor`` add with ``--segments``: every
value of each ``--segments`` column with enough rows, and its calibration per score column."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcal.cli._layout import findings_text, terminal_width, wrap
from mcal.cli._segments import categorical_columns, segment_columns

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import pandas as pd


def per_value_tables(y: Any, scores: dict[str, Any], X: pd.DataFrame, w: Any, args: Any) -> dict[str, Any]:
    """:func:`mcal.metrics.per_value_table` of each score column over the ``--segments`` columns ``X``."""
    from mcal.metrics import per_value_table

    categorical = categorical_columns(X, args)
    levels = segment_columns(args)[1]
    return {
        name: per_value_table(y, p, X=X, sample_weight=w, categorical_features=categorical,
                              max_values_per_feature=levels, outcome=getattr(args, "outcome", "classification"))
        for name, p in scores.items()
    }  # fmt: skip


def class_per_value_tables(
    y: Any, probs: dict[str, Any], classes: list[str], X: pd.DataFrame, w: Any, args: Any
) -> dict[str, Any]:
    """The one-vs-rest per-value tables of k classes: for each probability matrix of ``probs`` and each class ``j``
    (named ``classes[j]``), :func:`mcal.metrics.per_value_table` of ``y == j`` against column ``j``; keyed by the
    class, or ``"<matrix>: <class>"`` with several matrices."""
    tables: dict[str, Any] = {}
    for name, P in probs.items():
        for j, label in enumerate(classes):
            key = label if len(probs) == 1 else f"{name}: {label}"
            tables |= per_value_tables((y == j).astype(float), {key: P[:, j]}, X, w, args)
    return tables


def per_value_json(tables: dict[str, Any]) -> dict[str, Any]:
    """The per-value tables as JSON: the rule, the values left out per feature, and each table's rows (non-finite
    numbers as null)."""
    import math

    def safe(value: Any) -> Any:
        value = value.item() if hasattr(value, "item") else value
        return None if isinstance(value, float) and not math.isfinite(value) else value

    first = next(iter(tables.values()))
    return {"min_samples_per_value": first.min_samples_per_value, "p_adjustment": "holm",
            "n_left_out": {k: int(v) for k, v in first.n_left_out.items()},
            "rows": {name: [{k: safe(v) for k, v in row.items()} for row in t.table.to_dict("records")]
                     for name, t in tables.items()}}  # fmt: skip


def left_out_note(result: Any) -> str:
    """The rule and what it left out, e.g. ``values with >= 10 rows; 3 of country left out``."""
    left = [f"{int(n)} of {feature}" for feature, n in result.n_left_out.items() if n]
    kept = f"every value with >= {result.min_samples_per_value} rows"
    return kept + (f" ({', '.join(left)} with fewer left out)" if left else "")


def print_per_value(tables: dict[str, Any], where: str = "") -> None:
    """The per-value table in the terminal, laid out as the worst segments are (no wider than the terminal): every
    listed value (``where``: e.g. ``"in the latest window, "``) and per score column its mean score, error, ECCE in
    sigmas and Holm-adjusted p-value; "none listed" when no value is."""
    import pandas as pd

    from mcal.report import findings_table

    first = next(iter(tables.values()))
    width = terminal_width()
    print("\n" + wrap(f"per value ({where}{left_out_note(first)}; p-values Holm-adjusted over the values):", width))
    if first.table.empty:
        print("    none listed")
        return
    order = first.table["description"]
    rows = pd.concat([t.table.set_index("description").loc[order].reset_index().assign(
        rank=range(1, len(order) + 1), score=name, n_similar=0) for name, t in tables.items()])  # fmt: skip
    print(findings_text(findings_table(rows, len(order)).drop(columns=[("", "similar")]), width))
