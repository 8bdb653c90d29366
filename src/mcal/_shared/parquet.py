"""The check of a local Parquet dataset that ``mcal.dask.read_parquet`` and the command line make before any cluster
is involved."""

from __future__ import annotations

import glob
import os


def check_parquet_path(path: str) -> None:
    """Check a local folder, file or glob of Parquet files before any cluster is involved.

    Reads only the files' footers: every file must have the columns of the first one, in the same order (dask
    takes the first file's columns for the whole dataset, and a file without one of them would fail later
    with a bare ``KeyError`` on a worker).

    Parameters
    ----------
    path : str
        A local folder of Parquet files, one Parquet file, or a glob of them.

    Raises
    ------
    FileNotFoundError
        If the path does not exist or the glob matches nothing.
    ValueError
        If a file is not Parquet, or two files have different column names.
    """
    import pyarrow.parquet as pq  # a core dependency; imported here to keep `import mcal.dask` light

    if glob.has_magic(path):
        files = sorted(glob.glob(path))
        if not files:
            raise FileNotFoundError(f"no file matches {path}")
    elif not os.path.exists(path):
        raise FileNotFoundError(f"{path} does not exist")
    else:
        files = [path]
    files = [f for p in files for f in (_dataset_files(p) if os.path.isdir(p) else [p])]
    first_names = None
    for name in files:
        try:
            names = pq.read_schema(name).names
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read {name} as Parquet: {exc}") from exc
        if first_names is None:
            first, first_names = name, names
        elif names != first_names:
            raise ValueError(
                f"Parquet files must all have the same columns; {name} has {names} and {first} has {first_names}"
            )


def _dataset_files(folder: str) -> list[str]:
    """The data files of a Parquet folder, as dask reads them: hidden (``.``) and ``_`` entries left out."""
    out = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        out += [os.path.join(root, n) for n in sorted(names) if not n.startswith(("_", "."))]
    return out
