"""The tables of the command line: reading and writing CSV and Parquet files atomically, checking output paths,
and the validated columns of DATA (labels, scores, weights, features), a bad cell named by its line."""

from __future__ import annotations

import contextlib
import csv
import glob
import gzip
import io
import os
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcal._persistence import atomic_write_bytes, check_output_path
from mcal.cli._options import CLIError, repeated

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import numpy as np
    import pandas as pd

_CSV = (".csv", ".csv.gz", ".tsv", ".txt")
_PARQUET = (".parquet", ".pq")
#: The field separator written for each CSV ending. Reading detects the separator (or takes --sep); ``.txt``,
#: which names no separator, is read but never written.
_WRITE_SEP = {".csv": ",", ".csv.gz": ",", ".tsv": "\t"}
_WRITABLE = (*_WRITE_SEP, *_PARQUET)
#: A CSV file of at least this many bytes shows a progress bar while it is read, on a terminal (unless --quiet).
SHOW_READ_BYTES = 32 * 2**20
#: The field separators that reading detects, from the header line (``csv.Sniffer``); others need --sep.
_DETECTED_SEPS = ",;\t|"


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(_PARQUET) or path.is_dir():
        return "parquet"
    if name.endswith(_CSV):
        return "csv"
    raise CLIError(f"cannot tell the format of {path}: the name must end in one of {_CSV + _PARQUET}")


def read_table(
    path: str | Path,
    *,
    sep: str | None = None,
    na_values: list[str] | None = None,
    text_columns: Sequence[str] = (),
    label_col: str | None = None,
    decimal: str | None = None,
    quiet: bool = False,
) -> pd.DataFrame:
    """Read a CSV (``.csv``, ``.csv.gz``, ``.tsv``, ``.txt``) or Parquet (``.parquet``, ``.pq``, or a folder) file.

    In a CSV file, empty cells are missing. With ``na_values=None``, pandas' missing-value markers (``NA``,
    ``null``, ``None``, ...) are missing too, but only where they can mean nothing else: in a column whose other
    cells are all numbers or all TRUE/FALSE (or that holds markers only), and in the text column ``label_col``
    when its other cells hold at most two labels (``yes``/``no``/``NA``: a binary label has no third class). A
    text column keeps them as text (the country code ``NA`` of Namibia stays ``"NA"``, and so does a label
    ``NA`` beside one other label).
    A list makes exactly its texts (and empty cells) missing, in every column.
    ``text_columns`` of a CSV file are read as text, whatever they hold (a field column of codes ``01``, ``02`` keeps
    them: read as numbers they became ``1``, ``2``, unseen by a model fitted where the column also held letters).
    ``decimal`` is the decimal mark of a CSV file's numbers (``","`` for ``0,5``; None: ``"."``). The table's
    ``attrs["mcal_source"]`` holds the path and the format, which error messages name a cell's line by.
    A CSV file of :data:`SHOW_READ_BYTES` or more shows a progress bar (MiB read) on a terminal unless ``quiet``.

    Raises
    ------
    CLIError
        If the file is missing, of an unknown format, unreadable or empty, or ``sep``, ``na_values`` or
        ``decimal`` is given for Parquet, or ``decimal`` is not one character other than the separator.
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise CLIError(f"DATA file {path} does not exist")
    kind = _kind(path)
    if kind == "parquet" and na_values is not None:
        raise CLIError(f"--na-values must be left out for Parquet, whose missing values are typed; got {path}")
    if kind == "parquet" and sep is not None:
        raise CLIError(f"--sep must be left out for Parquet, which has no field separator; got {path}")
    if decimal is not None and (kind == "parquet" or len(decimal) != 1 or decimal == (sep or _detect_sep(path))):
        rule = "be left out for Parquet, whose numbers are typed" if kind == "parquet" else (
            "be one character other than the field separator")  # fmt: skip
        raise CLIError(f"--decimal must {rule}; got {decimal!r} for {path}")
    try:
        df = pd.read_parquet(path) if kind == "parquet" else _read_csv(path, sep, na_values, text_columns, label_col,
                                                                      decimal, quiet)  # fmt: skip
    except (EOFError, zlib.error) as exc:  # a .gz file cut short
        raise CLIError(f"cannot read {path} as {kind}: the compressed file is truncated or corrupt ({exc})") from exc
    except (ValueError, OSError, pd.errors.ParserError, ImportError) as exc:
        raise CLIError(f"cannot read {path} as {kind}: {exc}") from exc
    twice = repeated([str(c) for c in (_csv_header(path, sep) if kind == "csv" else df.columns)])
    if twice:
        raise CLIError(f"DATA file {path} must name each column once; got {twice} more than once")
    if df.shape[0] == 0:
        raise CLIError(f"DATA file {path} has no rows")
    df.attrs["mcal_source"] = (str(path), kind)
    return df


def _read_csv(
    path: Path,
    sep: str | None,
    na_values: list[str] | None,
    text_columns: Sequence[str],
    label_col: str | None,
    decimal: str | None = None,
    quiet: bool = False,
) -> pd.DataFrame:
    """``pd.read_csv`` with empty cells (and ``na_values``) missing; without ``na_values``, each text column (other
    than ``text_columns``) that pandas' default markers turn into numbers, TRUE/FALSE or nothing (or the label
    column into at most two labels) is read again with them (see :func:`read_table`)."""
    import pandas as pd

    options: dict[str, str | None] = {"sep": _detect_sep(path) if sep is None else sep, "engine": "c",
                                      "decimal": decimal or "."}  # fmt: skip
    dtype = {name: str for name in text_columns}
    if path.stat().st_size >= SHOW_READ_BYTES and not quiet:
        options["compression"] = "gzip" if path.name.lower().endswith(".gz") else None
        with _counted(path, f"reading {path.name}") as source:
            df = pd.read_csv(source, keep_default_na=False, na_values=["", *(na_values or [])], dtype=dtype,
                             **options)  # fmt: skip
    else:
        df = pd.read_csv(path, keep_default_na=False, na_values=["", *(na_values or [])], dtype=dtype, **options)
    if na_values is not None:
        return df
    text = [j for j, (name, kind) in enumerate(df.dtypes.items())
            if name not in dtype and not pd.api.types.is_numeric_dtype(kind)]  # fmt: skip
    if not text:
        return df
    typed = pd.read_csv(path, usecols=text, **options)  # pandas' default markers; columns in file order
    for j, (_, values) in zip(text, typed.items(), strict=False):
        # no text left once the markers are missing (numbers, TRUE/FALSE, or markers only), or markers beyond two labels
        if pd.api.types.infer_dtype(values, skipna=True) in _TYPED_KINDS or (
            df.columns[j] == label_col and values.nunique() <= 2 < df.iloc[:, j].nunique()
        ):
            df.isetitem(j, values)
    return df


@contextlib.contextmanager
def _counted(path: Path, desc: str) -> Iterator[Any]:
    """``path`` opened for reading, with a progress bar of the MiB read on a terminal (:mod:`mcal._progress`)."""
    from mcal._progress import progress

    with open(path, "rb") as raw, progress(-(-path.stat().st_size // 2**20), desc, unit="MiB") as bar:
        done = 0

        class Counted(io.RawIOBase):  # pandas reads it as a binary file; each read advances the bar
            def readable(self) -> bool:
                return True

            def readinto(self, buffer: Any) -> int:
                nonlocal done
                n = raw.readinto(buffer)
                whole = -(-raw.tell() // 2**20) - done  # MiB begun, so that the end of the file ends the bar
                if whole > 0:
                    done += whole
                    bar.update(whole)
                return n

        yield io.BufferedReader(Counted())


def _csv_header(path: Path, sep: str | None) -> list[str]:
    """The column names of a CSV file as written (pandas renames a repeated ``p`` to ``p.1``)."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        return next(csv.reader(fh, delimiter=_detect_sep(path) if sep is None else sep), [])


def _detect_sep(path: Path) -> str:
    """The field separator of a CSV file: ``csv.Sniffer`` on its header line, among :data:`_DETECTED_SEPS`.

    pandas' own detection (``sep=None``) sniffs any character with its slow Python parser, and took the ``y`` of a
    one-column file's header ``y`` for its separator; a header without any of these separators is one column.
    """
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        header = fh.readline()
    try:
        return csv.Sniffer().sniff(header, delimiters=_DETECTED_SEPS).delimiter
    except csv.Error:  # none of them in the header: one column
        return ","


#: What a CSV column holds, once pandas' markers are missing, for the markers to count as missing there
#: (``pandas.api.types.infer_dtype`` names; "empty": the column held markers only).
_TYPED_KINDS = {"empty", "integer", "floating", "mixed-integer-float", "boolean"}


def parse_na_values(value: str | None) -> list[str] | None:
    """The texts of ``--na-values`` (``""`` gives an empty list: only empty cells are missing); None when not given."""
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def read_data(args, text_columns: Sequence[str] = ()) -> pd.DataFrame:
    """The DATA table of a command, read with its ``--sep``, ``--na-values`` and (if it has one) ``--label-col``
    (``text_columns``: see :func:`read_table`)."""
    return read_table(
        args.data,
        sep=args.sep,
        na_values=parse_na_values(args.na_values),
        text_columns=text_columns,
        label_col=getattr(args, "label_col", None),
        decimal=getattr(args, "decimal", None),
        quiet=bool(getattr(args, "quiet", False)),
    )


#: The endings of an HTML page (``mcal report``, ``mcal monitor``) and of a model file (``mcal fit``).
HTML_ENDINGS = (".html", ".htm")
MODEL_ENDINGS = (".json",)


def _writable_ending(path: Path, option: str, endings: Sequence[str] = _WRITABLE) -> str:
    """The ending of ``path`` among ``endings`` (the formats the option writes), in lower case.

    Raises
    ------
    CLIError
        If ``path`` ends in none of them.
    """
    name = path.name.lower()
    ending = next((e for e in endings if name.endswith(e)), None)
    if ending is None:
        raise CLIError(f"{option} must end in one of {', '.join(endings)} (the format written); got {str(path)!r}")
    return ending


def write_table(df: pd.DataFrame, path: str | Path, option: str = "-o/--output") -> None:
    """Write a CSV (comma-separated for ``.csv`` and ``.csv.gz``, tab-separated for ``.tsv``) or Parquet file,
    by extension, atomically: on failure no partial file is left. Missing values are written as empty cells."""
    path = Path(path)
    ending = _writable_ending(path, option)
    if ending in _PARQUET:
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        data = buf.getvalue()
    elif ending.endswith(".gz"):
        buf = io.BytesIO()
        df.to_csv(buf, sep=_WRITE_SEP[ending], index=False, compression={"method": "gzip", "mtime": 0})
        data = buf.getvalue()
    else:
        data = df.to_csv(sep=_WRITE_SEP[ending], index=False).encode("utf-8")
    atomic_write_bytes(path, data)


def check_output(
    path: str | None, option: str, inputs: Sequence[tuple[str, str]] = (), endings: Sequence[str] = ()
) -> None:
    """Fail before any work when an output file could not be written, or would overwrite an input.

    ``inputs`` are ``(name, path)`` pairs, e.g. ``("DATA", args.data)``; a path may be a folder (a Parquet
    dataset, inside which no output may go) or a glob. ``endings`` (e.g. :data:`HTML_ENDINGS`), when given, are
    the file name endings of the format the option writes. Nothing is written.

    Raises
    ------
    CLIError
        If the folder of ``path`` does not exist, ``path`` is a folder, it is one of the inputs (the same file,
        through any link) or inside an input folder, or it ends in none of ``endings``.
    """
    if path is None:
        return
    try:
        check_output_path(path, option)
    except OSError as exc:  # a missing folder, or a folder where the file should go
        raise CLIError(str(exc)) from exc
    out = Path(path)
    for name, given in inputs:
        for source in [Path(given)] if Path(given).exists() else map(Path, glob.glob(given)):
            if source.is_dir() and out.resolve().is_relative_to(source.resolve()):
                raise CLIError(f"{option} must be outside the folder {name}; got {str(path)!r}, inside {given!r}")
            if out.exists() and os.path.samefile(out, source):
                raise CLIError(
                    f"{option} must differ from {name}, which it would overwrite; got {str(path)!r}, "
                    f"the same file as {name} {given!r}"
                )
    if endings:
        _writable_ending(out, option, endings)


def check_table_output(path: str, option: str, inputs: Sequence[tuple[str, str]] = ()) -> None:
    """:func:`check_output` for a table, whose extension must also be one :func:`write_table` writes."""
    _writable_ending(Path(path), option)
    check_output(path, option, inputs)


def column(df: pd.DataFrame, name: str, option: str) -> pd.Series:
    """Return column ``name`` or raise a ``CLIError`` naming the option and the available columns."""
    if name not in df.columns:
        shown = ", ".join(map(str, list(df.columns)[:20]))
        raise CLIError(f"{option} {name!r} is not a column of DATA; columns are: {shown}")
    values = df[name]
    first = values.dropna().iloc[:1]
    # lists and structs of a Parquet file (numpy arrays, by type name: numpy is not imported here)
    nested = len(first) > 0 and (isinstance(first.iloc[0], (list, tuple, dict))
                                 or type(first.iloc[0]).__name__ == "ndarray")  # fmt: skip
    if values.dtype == object and nested:
        raise CLIError(f"{option} {name!r} must hold one value per row; got nested values (lists or structs, e.g. "
                       f"{str(first.iloc[0])[:60]}): flatten the column into plain ones")  # fmt: skip
    return values


#: What a label error of a binary command adds: where a continuous label goes.
_CONTINUOUS_HINT = (
    "; for a continuous label use --outcome regression (mcal evaluate, mcal report) or a regression "
    "method (mcal fit --method regression-mcgrad, regression-isotonic or regression-linear)"
)


def _pos_label(raw: np.ndarray, pos_label: str | None, label_col: str) -> Any:
    """``--pos-label`` as a value of the (non-missing) labels ``raw``: a number for a numeric column.

    Raises
    ------
    CLIError
        If it is not a label of a column of two labels, or not a number for a numeric column.
    """
    import numpy as np

    if pos_label is None:
        return None
    pos: Any = pos_label
    if np.issubdtype(raw.dtype, np.number):
        try:
            pos = type(raw.flat[0].item())(pos_label)
        except ValueError as exc:
            raise CLIError(f"--pos-label {pos_label!r} is not a value of the numeric column {label_col!r}") from exc
    labels = np.unique(raw)
    if labels.size == 2 and pos not in labels.tolist():  # other counts: check_y_true refuses the column itself
        raise CLIError(f"--pos-label must be one of the labels of label column {label_col!r} {labels.tolist()}; "
                       f"got {pos_label!r}")  # fmt: skip
    return pos


def labels_scores_weights(
    df: pd.DataFrame,
    *,
    label_col: str,
    score_col: str | None,
    weight_col: str | None,
    pos_label: str | None,
    allow_soft: bool = False,
    outcome: str = "classification",
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Validated labels (0/1, or in [0, 1] with ``allow_soft``), scores (or None) and weights (or None) from the
    named columns; with ``outcome="regression"``, finite real outcomes and predictions."""
    import numpy as np

    from mcal._validation import check_y_real, check_y_true

    name = f"label column {label_col!r}"
    if outcome == "regression":
        if pos_label is not None:
            raise CLIError(f"--pos-label applies to binary labels; got --pos-label {pos_label!r} with a continuous "
                           f"label column {label_col!r}")  # fmt: skip
        y = check_y_real(numeric_cells(df, label_col, "--label-col", name), name)
        p = None if score_col is None else score_values(df, score_col, outcome)
        return y, p, weight_values(df, weight_col)
    raw = column(df, label_col, "--label-col").to_numpy()
    _refuse(df, np.asarray(column(df, label_col, "--label-col").isna()), name, "must not contain missing values",
            lambda i: "a missing value")  # fmt: skip
    pos = _pos_label(raw, pos_label, label_col)
    if pos is None and np.issubdtype(raw.dtype, np.number):  # a bad cell named by its line, as scores are
        arr = raw.astype(np.float64)
        bad = ~((arr >= 0.0) & (arr <= 1.0)) if allow_soft else ~np.isin(arr, (0.0, 1.0))
        _refuse(df, bad, name, "must lie in [0, 1]" if allow_soft else "must be binary (0 or 1)",
                lambda i: f"{arr[i]:g}", lambda i: _CONTINUOUS_HINT)  # fmt: skip
    try:
        y = check_y_true(raw, name, pos_label=pos, allow_soft=allow_soft)
    except ValueError as exc:
        if "must be binary" not in str(exc) and "must lie in [0, 1]" not in str(exc):
            raise
        raise CLIError(f"{exc}{_CONTINUOUS_HINT}") from exc
    p = None if score_col is None else score_values(df, score_col, outcome)
    return y, p, weight_values(df, weight_col)


def score_values(df: pd.DataFrame, score_col: str, outcome: str = "classification") -> np.ndarray:
    """The validated score column: probabilities in [0, 1], or finite real predictions for ``"regression"``; a bad
    cell is named by its line in the file."""
    from mcal._validation import check_y_prob, check_y_real

    name = f"score column {score_col!r}"
    arr = numeric_cells(df, score_col, "--score-col", name)
    if outcome == "regression":
        return check_y_real(arr, name)
    _refuse(df, (arr < 0.0) | (arr > 1.0), name, "must lie in [0, 1]", lambda i: f"{arr[i]:g}")
    return check_y_prob(arr, name)


def weight_values(df: pd.DataFrame, weight_col: str | None) -> np.ndarray | None:
    """The validated weight column (None without one): finite and non-negative numbers, a bad cell named by its
    line in the file."""
    from mcal._validation import check_sample_weight

    if weight_col is None:
        return None
    name = f"weight column {weight_col!r}"
    arr = numeric_cells(df, weight_col, "--weight-col", name)
    _refuse(df, arr < 0.0, name, "must be non-negative", lambda i: f"{arr[i]:g}")
    return check_sample_weight(arr, len(df), name)


def cell_position(df: pd.DataFrame, row: int) -> str:
    """Where row ``row`` (0-based) of a table read by :func:`read_table` is: ``line 8 of scores.csv`` (the header
    is line 1), ``row 7 of scores.parquet``."""
    path, kind = df.attrs.get("mcal_source", (None, None))
    if path is None:
        return f"row {row + 1}"
    return f"line {row + 2} of {path}" if kind == "csv" else f"row {row + 1} of {path}"


def _refuse(df: pd.DataFrame, bad: np.ndarray, name: str, rule: str, shown, hint=None) -> None:
    """Raise a ``CLIError`` "<name> <rule>; got <shown(i)> on <line>" for the first ``bad`` row ``i``, if any,
    followed by ``hint(i)``."""
    import numpy as np

    if not bad.any():
        return
    first = int(np.argmax(bad))
    count = int(bad.sum())
    more = f" ({count:,} such cells in all)" if count > 1 else ""
    after = "" if hint is None else hint(first)
    raise CLIError(f"{name} {rule}; got {shown(first)} on {cell_position(df, first)}{more}{after}")


def numeric_cells(df: pd.DataFrame, column_name: str, option: str, name: str) -> np.ndarray:
    """Column ``column_name`` as float64, refusing (by its line in the file) the first cell that is not a number,
    then the first missing, NaN or infinite one; ``name`` names the column in the message."""
    import re

    import numpy as np
    import pandas as pd

    values = column(df, column_name, option)
    if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):
        numbers = pd.to_numeric(values, errors="coerce")
        text = values.astype("string")
        decimal_comma = re.compile(r"[-+]?\d*,\d+")
        _refuse(df, np.asarray(numbers.isna() & values.notna()), name, "must hold numbers",
                lambda i: repr(text.iloc[i]),
                lambda i: "; decimal commas? read the file with --decimal ," if decimal_comma.fullmatch(text.iloc[i])
                else "")  # fmt: skip
        values = numbers
    arr = values.to_numpy(dtype=np.float64, na_value=np.nan)
    _refuse(df, ~np.isfinite(arr), name, "must be finite (no missing value, NaN or infinity)",
            lambda i: "a missing value" if np.isnan(arr[i]) else f"{arr[i]:g}")  # fmt: skip
    return arr


def feature_frame(df: pd.DataFrame, features: list[str], field: str | None) -> pd.DataFrame | None:
    """The X passed to feature-aware methods: the named feature columns plus the field column."""
    names = list(features) + ([field] if field is not None and field not in features else [])
    if not names:
        return None
    for name in names:
        column(df, name, "--features" if name in features else "--field")
    return df[names]
