"""Shared helpers of the command line: reading and writing tables, column checks, atomic output."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mcal._persistence import atomic_write_bytes, check_output_path
from mcal._validation import check_sample_weight, check_y_prob, check_y_true

_CSV = (".csv", ".csv.gz", ".tsv", ".txt")
_PARQUET = (".parquet", ".pq")


class CLIError(Exception):
    """A user error reported by the command line as ``mcal: error: <message>`` with exit status 1."""


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(_PARQUET) or path.is_dir():
        return "parquet"
    if name.endswith(_CSV):
        return "csv"
    raise CLIError(f"cannot tell the format of {path}: the name must end in one of {_CSV + _PARQUET}")


def read_table(path: str | Path, *, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV (``.csv``, ``.csv.gz``, ``.tsv``) or Parquet (``.parquet``, ``.pq``, or a folder) file.

    Raises
    ------
    CLIError
        If the file is missing, of an unknown format, unreadable or empty.
    """
    path = Path(path)
    if not path.exists():
        raise CLIError(f"DATA file {path} does not exist")
    kind = _kind(path)
    try:
        if kind == "parquet":
            df = pd.read_parquet(path)
        else:
            df = pd.read_csv(path, sep=sep if sep is not None else None, engine="python" if sep is None else "c")
    except (ValueError, OSError, pd.errors.ParserError, ImportError) as exc:
        raise CLIError(f"cannot read {path} as {kind}: {exc}") from exc
    if df.shape[0] == 0:
        raise CLIError(f"DATA file {path} has no rows")
    return df


def write_table(df: pd.DataFrame, path: str | Path) -> None:
    """Write a CSV or Parquet file (by extension) atomically: on failure no partial file is left."""
    path = Path(path)
    kind = _kind(path)
    if kind == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        data = buf.getvalue()
    else:
        compression = "gzip" if path.name.lower().endswith(".gz") else None
        if compression:
            buf = io.BytesIO()
            df.to_csv(buf, index=False, compression={"method": "gzip", "mtime": 0})
            data = buf.getvalue()
        else:
            data = df.to_csv(index=False).encode("utf-8")
    atomic_write_bytes(path, data)


def write_json(obj: Any, path: str | Path) -> None:
    """Write JSON atomically."""
    atomic_write_bytes(Path(path), json.dumps(obj, indent=2, allow_nan=False, default=_json_default).encode())


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot write {type(obj).__name__} as JSON")


def check_output(path: str | None, option: str) -> None:
    """Fail before any work when the folder of an output file does not exist (so nothing is written)."""
    if path is not None:
        try:
            check_output_path(path, option)
        except OSError as exc:  # a missing folder, or a folder where the file should go
            raise CLIError(str(exc)) from exc


def check_unique_scores(names: list[str]) -> None:
    """Reject a score column named twice by ``--score-col`` (it would be reported once, silently)."""
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise CLIError(f"--score-col must name each column once; got {duplicated} more than once")


def column(df: pd.DataFrame, name: str, option: str) -> pd.Series:
    """Return column ``name`` or raise a ``CLIError`` naming the option and the available columns."""
    if name not in df.columns:
        shown = ", ".join(map(str, list(df.columns)[:20]))
        raise CLIError(f"{option} {name!r} is not a column of DATA; columns are: {shown}")
    return df[name]


def split_names(value: str | None) -> list[str]:
    """Split a comma-separated list of column names; empty entries are an error."""
    if value is None:
        return []
    names = [v.strip() for v in value.split(",")]
    if any(not n for n in names):
        raise CLIError(f"column list {value!r} has an empty name")
    return names


def labels_scores_weights(
    df: pd.DataFrame, *, label_col: str, score_col: str | None, weight_col: str | None, pos_label: str | None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Validated labels (0/1), scores (or None) and weights (or None) from the named columns."""
    raw = column(df, label_col, "--label-col").to_numpy()
    if pos_label is not None and np.issubdtype(raw.dtype, np.number):
        try:
            pos: Any = type(raw.flat[0].item())(pos_label)
        except ValueError as exc:
            raise CLIError(f"--pos-label {pos_label!r} is not a value of the numeric column {label_col!r}") from exc
    else:
        pos = pos_label
    y = check_y_true(raw, f"label column {label_col!r}", pos_label=pos)
    p = None if score_col is None else check_y_prob(column(df, score_col, "--score-col").to_numpy(), f"score column {score_col!r}")
    w = None
    if weight_col is not None:
        w = check_sample_weight(column(df, weight_col, "--weight-col").to_numpy(), len(df), f"weight column {weight_col!r}")
    return y, p, w


class Command:
    """One sub-command: its name, help text, argument set-up and action."""

    def __init__(self, name: str, help: str, description: str, configure, run) -> None:  # noqa: A002
        self.name, self.help, self.description = name, help, description
        self.configure, self.run = configure, run

    def add_to(self, sub) -> None:
        """Register this command on an ``argparse`` sub-parsers object."""
        import argparse

        parser = sub.add_parser(
            self.name, help=self.help, description=self.description, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        self.configure(parser)
        parser.set_defaults(run=self.run)


def add_data_arguments(parser, *, score_required: bool, multiple_scores: bool = False) -> None:
    """Add DATA, --score-col, --label-col, --weight-col, --pos-label and --sep."""
    parser.add_argument("data", metavar="DATA", help="CSV (.csv, .csv.gz, .tsv) or Parquet (.parquet, folder) file")
    if multiple_scores:
        parser.add_argument(
            "--score-col", action="append", required=score_required, metavar="COL",
            help="column of probabilities in [0, 1]; repeat the option to compare several columns",
        )
    else:
        parser.add_argument("--score-col", required=score_required, metavar="COL", help="column of probabilities in [0, 1]")
    parser.add_argument("--label-col", required=True, metavar="COL", help="column of binary labels (0/1, bool, or see --pos-label)")
    parser.add_argument("--weight-col", metavar="COL", help="column of non-negative sample weights (optional)")
    parser.add_argument("--pos-label", metavar="VALUE", help="label value of the positive class, e.g. yes (needed for text labels)")
    parser.add_argument("--sep", metavar="SEP", help="CSV field separator (default: detected)")
