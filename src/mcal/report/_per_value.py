"""The report's per-value section: every value of each segment column with enough rows, for every score column."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcal._shared.per_value import per_value_html


def check_per_value(per_value: Any, names: list[str] | None) -> None:
    """Refuse a ``per_value`` that is not a mapping of every score column (of ``names``; any names, at least one,
    when None) to a :class:`mcal.metrics.PerValueTable`."""
    from mcal.metrics import PerValueTable

    if (not isinstance(per_value, Mapping) or not per_value
            or not all(isinstance(t, PerValueTable) for t in per_value.values())):  # fmt: skip
        raise TypeError(f"per_value must be a mapping of score column names to PerValueTable; got {per_value!r:.100}")
    if names is not None and sorted(per_value) != sorted(names):
        raise ValueError(f"per_value must have one table per score column {names}; got {sorted(per_value)}")


def per_value_section(per_value: Mapping[str, Any]) -> str:
    """A table of every listed value: its rows, then each score column's ECCE in sigmas and Holm-adjusted p-value."""
    return per_value_html(per_value)
