"""Connecting to a cluster and reading partitioned Parquet, for scripts and the command line."""

from __future__ import annotations

import contextlib
import glob
import numbers
import os
from collections.abc import Iterator
from typing import Any

from mcal._optional import import_optional


@contextlib.contextmanager
def connect(scheduler: str | None = None, *, n_workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` to a running scheduler, or to a local cluster started and stopped here.

    Parameters
    ----------
    scheduler : str or None, default=None
        Address of a running Dask scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    n_workers : int >= 1 or None, default=None
        Start a local cluster of this many worker processes with one thread each (no dashboard) instead.

    Yields
    ------
    client : distributed.Client
        Closed, with the local cluster, on exit.

    Raises
    ------
    ValueError
        Unless exactly one of ``scheduler`` and ``n_workers`` is given, or if ``n_workers < 1``.
    OSError
        If the scheduler cannot be reached.

    Notes
    -----
    A local cluster starts its workers with the ``spawn`` method: a script that calls this at import time
    needs the ``if __name__ == "__main__":`` guard.
    """
    distributed = import_optional("distributed")
    if (scheduler is None) == (n_workers is None):
        raise ValueError(
            f"connect needs exactly one of scheduler (an address) and n_workers; got scheduler={scheduler!r}, "
            f"n_workers={n_workers!r}"
        )
    if scheduler is not None:
        with distributed.Client(scheduler) as client:
            yield client
        return
    if isinstance(n_workers, bool) or not isinstance(n_workers, numbers.Integral) or n_workers < 1:
        raise ValueError(f"n_workers must be an integer >= 1; got {n_workers!r}")
    with distributed.LocalCluster(
        n_workers=int(n_workers), threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster, distributed.Client(cluster) as client:  # fmt: skip
        yield client


def read_parquet(path: str | os.PathLike, *, columns: list[str] | None = None) -> Any:
    """A dask DataFrame over a partitioned Parquet dataset: a folder, one file, or a glob of files.

    Parameters
    ----------
    path : str or path-like
        A folder (read as one dataset), a ``.parquet`` file, a glob such as ``"data/part-*.parquet"``, or a
        URL that dask can read (``s3://...``; not checked here).
    columns : list of str, default=None
        Read only these columns.

    Returns
    -------
    frame : dask.dataframe.DataFrame
        Lazy; one partition per file or row group, as ``dask.dataframe.read_parquet`` decides.

    Raises
    ------
    FileNotFoundError
        If a local path does not exist or a glob matches nothing.
    ValueError
        If the dataset cannot be read as Parquet or lacks a requested column.
    """
    dd = import_optional("dask.dataframe")
    text = os.fspath(path)
    if "://" not in text:
        if glob.has_magic(text):
            if not glob.glob(text):
                raise FileNotFoundError(f"no file matches {text}")
        elif not os.path.exists(text):
            raise FileNotFoundError(f"{text} does not exist")
    try:
        frame = dd.read_parquet(text, columns=columns)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"cannot read {text} as Parquet: {exc}") from exc
    return frame
