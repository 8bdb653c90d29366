"""How many values each ``--segments`` column contributes (``--segment-values N``, ``--segments country:30``), and
the per-value table that ``mcal evaluate``, ``mcal report`` and ``mcal monitor`` add with ``--segments``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcal.cli._common import CLIError, check_count, split_names

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import pandas as pd

#: Levels of a --segments column unless --segment-values or NAME:N says otherwise (generate_segments' default).
DEFAULT_SEGMENT_VALUES = 3

#: Help of --segments, shared by the commands that take it.
SEGMENTS_SYNTAX = (
    "; NAME:N sets the values of one column (see --segment-values), e.g. country:30,education,age. A per-value "
    "table lists every value of each column with at least 10 rows"
)


def add_segment_values_argument(parser) -> None:
    """``--segment-values``, of every command with ``--segments``."""
    parser.add_argument(
        "--segment-values", type=int, metavar="N", help="values per --segments column (default 3, at least 2): a "
        "categorical column keeps its N-1 most frequent values as segments and groups the others as 'not in {...}'; "
        "a numerical one is cut into N quantile bins; NAME:N in --segments sets one column",
    )  # fmt: skip


def segment_columns(args) -> tuple[list[str], dict[str, int]]:
    """The column names of ``--segments`` and the levels of each (``--segment-values``, or ``NAME:N``).

    Raises
    ------
    CLIError
        On an empty or repeated name, an empty or too small ``N``, or ``--segment-values`` without ``--segments``.
    """
    check_count(args.segment_values, "--segment-values", 2)
    entries = split_names(args.segments, "--segments")
    if not entries and args.segment_values is not None:
        raise CLIError("--segment-values needs --segments (the feature columns to segment on)")
    default = DEFAULT_SEGMENT_VALUES if args.segment_values is None else args.segment_values
    names, levels = [], {}
    for entry in entries:
        name, sep, count = entry.rpartition(":")
        if not sep:
            name, count = entry, ""
        elif not count.strip():
            raise CLIError(f"--segments {entry!r}: NAME:N needs the number of values N after ':'; got nothing")
        if count and not count.strip().isdigit():  # a column whose name has a colon: NAME:N with N a number
            name, count = entry, ""
        names.append(name.strip())
        levels[name.strip()] = int(count) if count else default
        check_count(levels[name.strip()], f"--segments {entry!r}: the number of values", 2)
    if names:
        split_names(",".join(names), "--segments")  # a name given twice, once with :N
    return names, levels


def per_value_tables(y: Any, scores: dict[str, Any], X: pd.DataFrame, w: Any, args: Any) -> dict[str, Any]:
    """:func:`mcal.metrics.per_value_table` of each score column over the ``--segments`` columns ``X``."""
    from mcal.metrics import per_value_table

    categorical = _categorical(X, args)
    levels = segment_columns(args)[1]
    return {
        name: per_value_table(y, p, X=X, sample_weight=w, categorical_features=categorical,
                              max_values_per_feature=levels, outcome=getattr(args, "outcome", "classification"))
        for name, p in scores.items()
    }  # fmt: skip


def _categorical(X: pd.DataFrame, args: Any) -> Any:
    """The categorical columns of ``X``: those of ``--categorical`` on top of those categorical from their dtype."""
    from mcal._features.table import CATEGORICAL, column_kind

    declared = split_names(args.categorical, "--categorical")
    return [c for c in X.columns if c in declared or column_kind(X[c]) == CATEGORICAL] if declared else "from_dtype"


def per_value_frame(tables: dict[str, Any]) -> pd.DataFrame:
    """One row per value, with each score column's ECCE in sigmas and Holm-adjusted p-value side by side."""
    import pandas as pd

    first = next(iter(tables.values())).table
    frame = first[["feature", "description", "size"]].copy()
    for name, result in tables.items():
        by_value = result.table.set_index("description")
        frame[f"{name} sigma"] = frame["description"].map(by_value["ecce_sigma"])
        frame[f"{name} p_adj"] = frame["description"].map(by_value["pvalue_adjusted"])
    return pd.DataFrame(frame).reset_index(drop=True)


def left_out_note(result: Any) -> str:
    """The rule and what it left out, e.g. ``values with >= 10 rows; 3 of country left out``."""
    left = [f"{int(n)} of {feature}" for feature, n in result.n_left_out.items() if n]
    kept = f"every value with >= {result.min_samples_per_value} rows"
    return kept + (f" ({', '.join(left)} with fewer left out)" if left else "")


def print_per_value(tables: dict[str, Any], where: str = "") -> None:
    """The per-value table in the terminal, laid out as the worst segments are (no wider than the terminal): every
    listed value (``where``: e.g. ``"in the latest window, "``) and per score column its mean score, error, ECCE in
    sigmas and Holm-adjusted p-value."""
    import pandas as pd

    from mcal.cli._layout import findings_text, terminal_width, wrap
    from mcal.report import findings_table

    first = next(iter(tables.values()))
    width = terminal_width()
    print("\n" + wrap(f"per value ({where}{left_out_note(first)}; p-values Holm-adjusted over the values):", width))
    if first.table.empty:
        return
    order = first.table["description"]
    rows = pd.concat([t.table.set_index("description").loc[order].reset_index().assign(
        rank=range(1, len(order) + 1), score=name, n_similar=0) for name, t in tables.items()])  # fmt: skip
    print(findings_text(findings_table(rows, len(order)).drop(columns=[("", "similar")]), width))
