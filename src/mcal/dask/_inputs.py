"""Inputs of the Dask entry points: dask collections split into row-aligned partitions, checked on the workers.

Every entry point of :mod:`mcal.dask` takes its 1-D inputs (scores, labels, weights, a field) and its features as
dask Arrays, Series or DataFrames. They are turned into lists of ``Delayed`` partitions (one per block of rows),
which must line up: the same number of partitions, and the same number of rows in each. The workers validate
each partition with the same checks as the in-memory API (so the messages are the same), and send back small
sums; nothing row-sized travels to the client.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._features.encoder import FeatureEncoder
from mcal._optional import import_optional
from mcal._validation import (
    FIT_SWAP,
    METRIC_SWAP,
    check_sample_weight,
    check_y_prob,
    check_y_real,
    check_y_true,
    swap_hint,
)


def is_dask_collection(value: Any) -> bool:
    """Whether ``value`` is a dask collection (Array, DataFrame, Series, Delayed), without importing dask."""
    return hasattr(value, "__dask_graph__") and hasattr(value, "__dask_keys__")


def get_client(client: Any) -> Any:
    """The given ``distributed.Client``, or the default one when ``client`` is None.

    Raises
    ------
    TypeError
        If ``client`` is neither None nor a ``distributed.Client``.
    ValueError
        If ``client`` is None and no client is running.
    """
    distributed = import_optional("distributed")
    if client is None:
        try:
            return distributed.default_client()
        except ValueError as exc:
            raise ValueError(
                "client must be a distributed.Client, or one must be running (distributed.Client(...) becomes the "
                "default); got None and no running client"
            ) from exc
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a distributed.Client or None; got {type(client).__name__}")
    return client


def partitions(value: Any, name: str, *, matrix: bool = False) -> list[Any]:
    """The ``Delayed`` row blocks of a dask collection: 1-D values, or a 2-D feature table when ``matrix``.

    Raises
    ------
    TypeError
        If ``value`` is not a dask Array, DataFrame or Series.
    ValueError
        If its shape does not fit (a 1-D input with several columns, a 3-D array).
    """
    da = import_optional("dask.array")
    dd = import_optional("dask.dataframe")
    if isinstance(value, da.Array):
        if matrix:
            if value.ndim != 2:
                raise ValueError(f"{name} must be 2-D of shape (n_samples, n_features); got shape {value.shape}")
            return list(value.rechunk({1: -1}).to_delayed(optimize_graph=False)[:, 0])
        if value.ndim == 2 and value.shape[1] == 1:
            value = value[:, 0]
        if value.ndim != 1:
            raise ValueError(f"{name} must be 1-D of shape (n_samples,); got shape {value.shape}")
        return list(value.to_delayed(optimize_graph=False))
    if isinstance(value, dd.Series):
        return list((value.to_frame() if matrix else value).to_delayed(optimize_graph=False))
    if isinstance(value, dd.DataFrame):
        if not matrix:
            if len(value.columns) != 1:
                raise ValueError(f"{name} must be 1-D (n_samples,); got a DataFrame with {len(value.columns)} columns")
            value = value[value.columns[0]]
            return list(value.to_delayed(optimize_graph=False))
        check = import_optional("dask").delayed(_with_columns, pure=True)
        columns = list(value.columns)
        return [check(block, columns, name, i) for i, block in enumerate(value.to_delayed(optimize_graph=False))]
    raise TypeError(
        f"{name} must be a dask Array, DataFrame or Series; got {type(value).__name__} "
        "(in-memory data goes to mcal.MCGrad and mcal.metrics)"
    )


def _with_columns(block: Any, columns: list[Any], name: str, index: int) -> Any:
    """A partition of a dask DataFrame, checked (on a worker) to hold the columns of the collection's metadata,
    which a hand-built collection (``dd.from_delayed(..., verify_meta=False)``, ``dd.from_map``) need not."""
    got = list(block.columns)
    if got != columns:
        missing, extra = [c for c in columns if c not in got], [c for c in got if c not in columns]
        detail = f"missing {missing[:5]}, unexpected {extra[:5]}" if missing or extra else "in another order"
        raise ValueError(
            f"{name} must hold in every partition the columns of its metadata {columns[:10]}; "
            f"partition {index} has {got[:10]} ({detail})"
        )
    return block


def missing_column_error(exc: KeyError) -> ValueError:
    """The error for pandas' ``KeyError`` raised on a worker by selecting a column from a partition without it:
    a column of a dask input that its metadata lists, but a partition lacks."""
    return ValueError(
        "every partition of a dask input must hold the columns its metadata lists; got pandas' KeyError "
        f"{exc.args[0] if exc.args else ''!r} on a worker, selecting a missing column from a partition (a hand-built "
        "collection, e.g. dd.from_delayed(..., verify_meta=False), or files with different columns)"
    )


def aligned(named: dict[str, Any], *, matrix: tuple[str, ...] = ()) -> dict[str, list[Any]]:
    """Partitions of each named input (a list of None for a None input); all must have as many partitions.

    Raises
    ------
    ValueError
        If the inputs have different numbers of partitions.
    """
    blocks = {k: partitions(v, k, matrix=k in matrix) for k, v in named.items() if v is not None}
    counts = {k: len(v) for k, v in blocks.items()}
    if len(set(counts.values())) > 1:
        shown = ", ".join(f"{k} has {n}" for k, n in counts.items())
        raise ValueError(
            f"inputs must have the same number of partitions (row blocks); got {shown}; repartition or rechunk them alike"
        )
    n = next(iter(counts.values()))
    return {k: blocks.get(k, [None] * n) for k in named}


# -- checks on the workers -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class FoldSpec:
    """How rows are assigned to early-stopping folds: ``n_folds`` folds, or holdout when ``fraction`` is set."""

    n_folds: int
    fraction: float | None
    seed: int


@dataclass
class BlockSummary:
    """What the check of one partition sends back: row count, label counts and weighted sums."""

    n: int = 0
    n_zero: int = 0
    n_one: int = 0
    w_sum: float = 0.0
    w_pos: float = 0.0
    w_neg: float = 0.0  # summed apart from w_pos: w_sum - w_pos lost a small class to rounding under large weights
    w_low: float = np.inf  # smallest positive weight
    w_high: float = 0.0  # largest weight
    y_low: float = np.inf  # least and greatest label of positive weight (real outcomes need two distinct ones)
    y_high: float = -np.inf
    encoder: dict[str, Any] | None = None
    fold_counts: NDArray[np.int64] | None = None
    scores_binary: bool = True  # every score 0 or 1: with soft labels, the arguments look swapped


def _weights(w: Any, n: int) -> NDArray[np.float64]:
    """Weights of one partition: as :func:`check_sample_weight`, but a partition may hold only zero weights."""
    if w is None:
        return np.ones(n)
    arr = np.asarray(w, dtype=np.float64) if np.asarray(w).dtype.kind in "biuf" else None
    if arr is not None and arr.ndim == 1 and arr.size == n and np.all(arr == 0.0):
        return arr
    return check_sample_weight(w, n)


@contextlib.contextmanager
def in_partition(index: int) -> Iterator[None]:
    """Add the partition number to the message of a ``ValueError`` or ``TypeError`` raised inside."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"{exc} (in partition {index}; indices count from the partition's first row)") from None


def clean_block(
    index: int,
    p: Any,
    y: Any,
    w: Any,
    *,
    label: str,
    allow_soft: bool,
    X: Any = None,
    real: tuple | None = None,
    score: str = "y_prob",
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Validated float64 scores, labels and weights of one partition, checked as the in-memory API checks them.

    ``real`` is None for probabilities and labels in [0, 1]; for real-valued predictions and outcomes it is
    ``(least prediction, least outcome, whether predictions must exceed their least value)``, the bounds of
    :func:`~mcal._validation.check_y_real` (None for no bound). ``score`` names the predictions in messages.

    Raises
    ------
    ValueError
        As :func:`~mcal._validation.check_y_prob` (or :func:`~mcal._validation.check_y_real`) and friends, or if
        the inputs differ in length, with the partition number added to the message.
    """
    with in_partition(index):
        n = len(p)
        lengths = {score: n, label: len(y)} | ({} if w is None else {"sample_weight": len(w)})
        lengths |= {} if X is None else {"X": len(X)}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k} has {m}" for k, m in lengths.items())
            raise ValueError(f"inputs must have the same number of rows in each partition; got {shown}")
        if n == 0:
            return np.empty(0), np.empty(0), np.empty(0)
        if real is None:
            with swap_hint(y, p, METRIC_SWAP if label == "y_true" else FIT_SWAP):
                return check_y_prob(p), check_y_true(y, label, allow_soft=allow_soft), _weights(w, n)
        low_pred, low_y, strict = real
        pp = check_y_real(p, score, lower=low_pred, strict=strict)
        return pp, check_y_real(y, label, lower=low_y), _weights(w, n)


def check_block(
    index: int, p: Any, y: Any, w: Any, X: Any, *, label: str, allow_soft: bool,
    categorical_features: Any = None, folds: FoldSpec | None = None, real: tuple | None = None,
    score: str = "y_prob",
) -> BlockSummary:  # fmt: skip
    """Validate one partition of ``(y_prob, labels, weights, X)`` on a worker and summarise it (``real`` and
    ``score`` as in :func:`clean_block`).

    Raises
    ------
    ValueError
        As the in-memory checks, with the partition number added to the message.
    """
    pp, yy, ww = clean_block(index, p, y, w, label=label, allow_soft=allow_soft, X=X, real=real, score=score)
    if pp.size == 0:
        return BlockSummary()
    kept = yy[ww > 0]
    summary = BlockSummary(
        n=pp.size, n_zero=int(np.count_nonzero(yy == 0.0)), n_one=int(np.count_nonzero(yy == 1.0)),
        w_sum=float(ww.sum()), w_pos=float(np.dot(ww, yy)), w_neg=float(np.dot(ww, 1.0 - yy)), w_high=float(ww.max()),
        w_low=float(ww[ww > 0].min(initial=np.inf)), y_low=float(kept.min(initial=np.inf)),
        y_high=float(kept.max(initial=-np.inf)), scores_binary=real is None and bool(np.all((pp == 0.0) | (pp == 1.0))),
    )  # fmt: skip
    with in_partition(index):
        if X is not None:
            summary.encoder = FeatureEncoder(categorical_features).fit(X).to_dict()
    if folds is not None:
        summary.fold_counts = np.bincount(assign_folds(yy, folds, index), minlength=folds.n_folds)
    return summary


def totals(summaries: list[BlockSummary], label: str, *, real: bool = False, score: str = "y_prob") -> BlockSummary:
    """The summaries of all partitions added up (``score`` names the predictions in messages).

    Raises
    ------
    ValueError
        If there are no rows, the weights sum to zero, or only one class (for 0/1 labels) or one value (for
        real outcomes, ``real=True``) carries weight.
    """
    total = BlockSummary(
        n=sum(s.n for s in summaries), n_zero=sum(s.n_zero for s in summaries),
        n_one=sum(s.n_one for s in summaries), w_sum=sum(s.w_sum for s in summaries),
        w_pos=sum(s.w_pos for s in summaries), w_neg=sum(s.w_neg for s in summaries),
        y_low=min((s.y_low for s in summaries), default=np.inf),
        y_high=max((s.y_high for s in summaries), default=-np.inf),
    )  # fmt: skip
    if total.n == 0:
        raise ValueError(f"{score} must not be empty; got 0 samples in every partition")
    if not total.w_sum > 0:
        raise ValueError("sample_weight must have a positive sum; got all zeros")
    if real:
        if total.y_low == total.y_high:
            raise ValueError(
                f"{label} must hold at least two distinct values with positive weight; got only {total.y_low!r}"
            )
    elif total.w_pos <= 0 or total.w_neg <= 0:
        only = "1 (all positive)" if total.w_neg <= 0 else "0 (all negative)"
        raise ValueError(f"{label} must contain both classes (with positive weight); got only class {only}")
    return total


def assign_folds(y: NDArray[np.float64], spec: FoldSpec, index: int) -> NDArray[np.int8]:
    """Early-stopping fold of each row of partition ``index``; stratified by label when the labels are 0/1.

    Holdout (``spec.fraction`` set) gives fold 1 to a random ``fraction`` of each class (randomly rounded, so
    the expected share is exact) and fold 0 to the rest; k-fold deals the rows of each class in random order
    to folds ``0..k-1`` from a random start. The generator is seeded by ``(spec.seed, index)``.
    """
    rng = np.random.default_rng([spec.seed, index])
    binary = bool(np.all((y == 0.0) | (y == 1.0)))
    classes = (y == 1.0).astype(np.intp) if binary else np.zeros(y.size, dtype=np.intp)
    folds = np.zeros(y.size, dtype=np.int8)
    for c in np.unique(classes):
        rows = rng.permutation(np.flatnonzero(classes == c))
        if spec.fraction is not None:
            n_valid = int(np.floor(spec.fraction * rows.size + rng.random()))
            folds[rows[:n_valid]] = 1
        else:
            folds[rows] = (np.arange(rows.size) + rng.integers(spec.n_folds)) % spec.n_folds
    return folds


def merge_encoders(summaries: list[BlockSummary], categorical_features: Any) -> FeatureEncoder:
    """One encoder for all partitions: the columns they agree on, and the union of their category levels.

    The levels are the sorted union of the levels used in each partition, exactly what
    :class:`~mcal._features.encoder.FeatureEncoder` learns from the concatenated table, so no partition is encoded with
    its own categories (per-partition categories train LightGBM silently wrong).

    Raises
    ------
    ValueError
        If partitions disagree on the column names or on which columns are categorical.
    """
    fitted = [(i, s.encoder) for i, s in enumerate(summaries) if s.encoder is not None and s.n > 0]
    first_index, first = fitted[0]
    for index, enc in fitted[1:]:
        if enc["feature_names"] != first["feature_names"] or enc["n_features"] != first["n_features"]:
            raise ValueError(
                f"X partitions must have the same columns; partition {index} has {enc['feature_names']} and "
                f"partition {first_index} has {first['feature_names']}"
            )
        if enc["categorical"] != first["categorical"]:
            j = next(
                k for k, (a, b) in enumerate(zip(enc["categorical"], first["categorical"], strict=False)) if a != b
            )
            kind = {True: "categorical", False: "numerical"}
            raise ValueError(
                f"X partitions must agree on which columns are categorical; column {j} is "
                f"{kind[enc['categorical'][j]]} in partition {index} and {kind[first['categorical'][j]]} in "
                f"partition {first_index}; declare categorical_features={categorical_features!r} explicitly"
            )
    categories = [
        sorted(set().union(*(enc["categories"][j] for _, enc in fitted))) if is_cat else None
        for j, is_cat in enumerate(first["categorical"])
    ]
    return FeatureEncoder.from_dict({**first, "categories": categories})


# -- running on the cluster ----------------------------------------------------------------------------------
def compute(client: Any, collections: list[Any], timeout: float | None, what: str) -> list[Any]:
    """Compute dask collections on the cluster and return their values.

    Raises
    ------
    TimeoutError
        If the results do not arrive within ``timeout`` seconds (the computation is cancelled).
    """
    distributed = import_optional("distributed")
    futures = client.compute(list(collections))
    _wait(client, distributed, futures, timeout, what)
    return client.gather(futures)


def block_sums(client: Any, func: Any, arrays: list[Any], args: tuple, timeout: float | None, what: str) -> Any:
    """``func(*blocks, *args)`` on each row block of the aligned dask Arrays, summed over the blocks.

    One small task per block: several times faster than a dask.array reduction for the many short passes of
    the rescaling Newton steps.
    """
    dask = import_optional("dask")
    task = dask.delayed(func, pure=True)
    parts = [task(*blocks, *args) for blocks in zip(*(a.to_delayed().ravel() for a in arrays), strict=False)]
    return np.sum(compute(client, parts, timeout, what), axis=0)


def persist(client: Any, collection: Any, timeout: float | None, what: str) -> Any:
    """Persist a dask collection on the workers and wait until it is there (within ``timeout`` seconds)."""
    distributed = import_optional("distributed")
    out = client.persist(collection)
    _wait(client, distributed, distributed.futures_of(out), timeout, what)
    return out


def _wait(client: Any, distributed: Any, futures: list[Any], timeout: float | None, what: str) -> None:
    try:
        distributed.wait(futures, timeout=timeout)
    except TimeoutError as exc:
        client.cancel(futures)
        raise TimeoutError(f"{what} did not finish within timeout={timeout} s; it was cancelled") from exc


def stack(blocks: list[Any], sizes: list[int], width: int | None = None, dtype: Any = np.float64) -> Any:
    """One dask Array from ``Delayed`` blocks of known row counts; empty blocks are left out.

    Every array stacked from the same ``sizes`` has the same row chunks, which LightGBM's Dask interface needs.
    """
    da = import_optional("dask.array")
    arrays = [
        da.from_delayed(b, shape=(n,) if width is None else (n, width), dtype=dtype)
        for b, n in zip(blocks, sizes, strict=False)
        if n > 0
    ]
    if not arrays:
        return da.zeros((0,) if width is None else (0, width), dtype=dtype)
    return da.concatenate(arrays) if len(arrays) > 1 else arrays[0]
