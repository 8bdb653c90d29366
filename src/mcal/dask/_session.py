"""Connecting to a cluster and reading partitioned Parquet, for scripts and the command line."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from mcal._optional import import_optional
from mcal._shared.parquet import check_parquet_path
from mcal._validation import check_positive_int, check_real


@contextlib.contextmanager
def connect(scheduler: str | None = None, *, n_workers: int | None = None, timeout: float = 10.0) -> Iterator[Any]:
    """A ``distributed.Client`` to a running scheduler, or to a local cluster started and stopped here.

    Parameters
    ----------
    scheduler : str or None, default=None
        Address of a running Dask scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    n_workers : int >= 1 or None, default=None
        Start a local cluster of this many worker processes with one thread each instead (its HTTP server on
        a free port, its scheduler's routine warnings, such as those of each shuffle, silenced).
    timeout : float > 0, default=10.0
        Most seconds to wait for the scheduler at ``scheduler`` to answer, and then for it to have a worker
        (work sent to a scheduler without workers would wait for one forever).

    Yields
    ------
    client : distributed.Client
        Closed, with the local cluster, on exit.

    Raises
    ------
    ValueError
        Unless exactly one of ``scheduler`` and ``n_workers`` is given, if ``n_workers < 1``, if ``timeout`` is
        not positive and finite, or if ``scheduler`` is not an address.
    TypeError
        If ``scheduler`` is not a str, ``n_workers`` not an integer, or ``timeout`` not a real number (bools are
        neither).
    OSError
        If the scheduler cannot be reached, or has no worker, within ``timeout`` seconds (a ``TimeoutError``).

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
    check_real("timeout", timeout, "a positive number of seconds", lambda v: v > 0)
    if scheduler is not None:
        if not isinstance(scheduler, str):
            raise TypeError(
                f"scheduler must be an address such as 'tcp://host:8786'; got {scheduler!r} of type "
                f"{type(scheduler).__name__}"
            )
        with _client(distributed, scheduler, float(timeout)) as client:
            yield client
        return
    assert n_workers is not None  # exactly one of scheduler and n_workers, checked above
    check_positive_int("n_workers", n_workers)
    with distributed.LocalCluster(
        n_workers=int(n_workers), threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1",
        scheduler_kwargs={"dashboard": False}, silence_logs=logging.ERROR,
    ) as cluster, distributed.Client(cluster) as client:  # fmt: skip
        yield client


def _client(distributed: Any, scheduler: str, timeout: float) -> Any:
    """A client of the scheduler at ``scheduler``, or a clear error within ``timeout`` seconds."""
    try:
        client = distributed.Client(scheduler, timeout=timeout)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"scheduler must be an address such as 'tcp://host:8786'; got {scheduler!r} ({exc})") from exc
    except OSError as exc:  # TimeoutError included: distributed retries a refused connection until the timeout
        raise TimeoutError(
            f"cannot reach the Dask scheduler at {scheduler!r} within timeout={timeout:g} s ({exc}); check the "
            "address and that the scheduler runs"
        ) from exc
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError as exc:
        client.close()
        raise TimeoutError(
            f"the Dask scheduler at {scheduler!r} has no worker (waited timeout={timeout:g} s); start workers "
            "with `dask worker ADDRESS`"
        ) from exc
    return client


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
    frame : dask.dataframe.DataFrame of shape (n_rows, n_columns)
        Lazy; one partition per file or row group, as ``dask.dataframe.read_parquet`` decides.

    Raises
    ------
    FileNotFoundError
        If a local path does not exist or a glob matches nothing.
    ValueError
        If the dataset cannot be read as Parquet, lacks a requested column, or its local files do not all
        have the same column names.
    """
    dd = import_optional("dask.dataframe")
    text = os.fspath(path)
    if "://" not in text:
        check_parquet_path(text)
    try:
        frame = dd.read_parquet(text, columns=columns)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"cannot read {text} as Parquet: {exc}") from exc
    return frame
