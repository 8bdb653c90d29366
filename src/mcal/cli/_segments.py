"""The segments of ``--segments``: its columns, how many values each contributes (``--segment-values N``,
``--segments country:30``), the columns declared categorical (``--categorical``), and the segments generated
from them, as ``mcal evaluate``, ``mcal report`` and ``mcal monitor`` share them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcal.cli._common import column
from mcal.cli._options import CLIError, split_names

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import pandas as pd

#: Levels of a --segments column unless --segment-values or NAME:N says otherwise (generate_segments' default).
DEFAULT_SEGMENT_VALUES = 3
#: The fewest levels of a --segments column (as --segment-values' ``type=`` has it).
_MIN_SEGMENT_VALUES = 2


def segment_columns(args) -> tuple[list[str], dict[str, int]]:
    """The column names of ``--segments`` and the levels of each (``--segment-values``, or ``NAME:N``).

    Raises
    ------
    CLIError
        On an empty or repeated name, an empty or too small ``N``, or ``--segment-values`` without ``--segments``.
    """
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
        if levels[name.strip()] < _MIN_SEGMENT_VALUES:
            raise CLIError(f"--segments {entry!r}: the number of values must be an integer >= {_MIN_SEGMENT_VALUES}; "
                           f"got {levels[name.strip()]}")  # fmt: skip
    if names:
        split_names(",".join(names), "--segments")  # a name given twice, once with :N
    return names, levels


def categorical_columns(X: pd.DataFrame, args: Any) -> Any:
    """The categorical columns of ``X``: those of ``--categorical`` on top of those categorical from their dtype
    (a list alone would make the rest numerical); ``"from_dtype"`` without ``--categorical``."""
    from mcal._features.table import CATEGORICAL, column_kind

    declared = split_names(args.categorical, "--categorical")
    return [c for c in X.columns if c in declared or column_kind(X[c]) == CATEGORICAL] if declared else "from_dtype"


def segment_features(df, args) -> pd.DataFrame | None:
    """The columns of ``--segments`` (None without it) of ``df``, dates and durations as text."""
    import pandas as pd

    from mcal._features.table import temporal_kind

    names = segment_columns(args)[0]
    declared = split_names(args.categorical, "--categorical")
    if not names:
        for option, value in (("--max-depth", args.max_depth), ("--categorical", args.categorical)):
            if value is not None:
                raise CLIError(f"{option} needs --segments (the feature columns to segment on)")
        return None
    unknown = [name for name in declared if name not in names]
    if unknown:
        raise CLIError(f"--categorical must name columns given with --segments ({args.segments!r}); got {unknown}")
    for name in names:  # NAME:N whose N is no number, e.g. country:-3, is read as a column name
        if name not in df.columns and ":" in name:
            raise CLIError(f"--segments {name!r}: the number of values after ':' must be an integer >= "
                           f"{_MIN_SEGMENT_VALUES} (nor is {name!r} a column of DATA); got {name.rpartition(':')[2]!r}")  # fmt: skip
    X = pd.DataFrame({name: column(df, name, "--segments") for name in names})
    for name in names:  # dates read from Parquet are categories, as the same column read from CSV (text) is
        if temporal_kind(X[name]):
            X[name] = X[name].astype("string")
    return X


def segments_of(df, args):
    """The segments of ``--segments`` (None without it), from the columns of ``df``, with the columns named by
    ``--categorical`` categorical and the others of the kind their dtype gives (dates and durations as text)."""
    from mcal.segments import generate_segments

    X = segment_features(df, args)
    if X is None:
        return None
    return generate_segments(X, max_depth=3 if args.max_depth is None else args.max_depth,
                             max_values_per_feature=segment_columns(args)[1],
                             categorical_features=categorical_columns(X, args))  # fmt: skip
