"""Input validation shared by every public entry point.

Private numeric cores assume the clean float64 arrays these functions return. Messages read
``"<arg> must <rule>; got <observed>"``.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from types import FrameType
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

#: Probabilities are clipped to ``[EPS, 1 - EPS]`` before any logit is taken (``logit(EPS) ~ -16.1``).
EPS = 1e-7


class CalibrationWarning(UserWarning):
    """Warning issued by mcal for a documented, non-fatal condition (e.g. unseen categories at predict)."""


def _describe_bad(values: NDArray, mask: NDArray[np.bool_], limit: int = 3) -> str:
    idx = np.flatnonzero(mask)
    shown = ", ".join(f"{_plain(values[i])!r} at index {i}" for i in idx[:limit])
    more = f" and {idx.size - limit} more" if idx.size > limit else ""
    return f"{idx.size} value(s): {shown}{more}"


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds, whose repr reads ``nan`` or ``1.5``, not ``np.float64(nan)``."""
    return value.item() if isinstance(value, np.generic) else value


def _non_numeric(arr: NDArray) -> str:
    """``", e.g. '0,5' at index 3"``: the first cell of an object array that is not a number (for the messages of
    non-numeric input)."""
    if arr.dtype != object:
        return ""
    text = pd.to_numeric(pd.Series(arr), errors="coerce").isna().to_numpy() & ~pd.isna(arr)
    if not text.any():
        return ""
    first = int(np.argmax(text))
    return f", e.g. {_plain(arr[first])!r} at index {first}"


#: The score arguments of calibrators, which must be 1-D (features go in X=); labels of shape (n, 1) are flattened.
_SCORE_NAMES = ("y_prob", "y_pred")


def as_1d(values: ArrayLike, name: str) -> NDArray:
    if isinstance(values, (pd.DataFrame,)):
        if values.shape[1] != 1:
            raise ValueError(
                f"{name} must be 1-D (n_samples,); got a DataFrame with {values.shape[1]} columns"
                + ("; pass features as X=" if name in _SCORE_NAMES else "")
            )
        values = values.iloc[:, 0]
    if isinstance(values, pd.Series):
        values = values.to_numpy()
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"{name} must be array-like of shape (n_samples,); got {type(values).__name__}")
    arr = np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape and arr.size > 0 and name not in _SCORE_NAMES:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        hint = f"; pass features with the keyword X= and keep {name} 1-D" if name in _SCORE_NAMES else ""
        raise ValueError(f"{name} must be 1-D of shape (n_samples,); got shape {arr.shape}{hint}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty; got 0 samples")
    if arr.dtype.kind == "c":  # numpy would drop the imaginary parts with only a ComplexWarning
        raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    return arr


def as_float64(arr: NDArray) -> NDArray[np.float64]:
    """``arr`` as a read-only float64 array, without a copy when it is float64 already.

    Read-only because it may be the caller's own data: code that would write into it raises instead.
    """
    out = arr.astype(np.float64, copy=False)
    if out is arr:
        out = out.view()
    out.flags.writeable = False
    return out


def unit_weights(n_samples: int) -> NDArray[np.float64]:
    """Weights of 1 for ``n_samples`` rows: a read-only array that holds one number (stride 0), not ``n_samples``."""
    return np.broadcast_to(np.float64(1.0), (n_samples,))


def check_y_prob(y_prob: ArrayLike, name: str = "y_prob") -> NDArray[np.float64]:
    """Validate predicted probabilities.

    Parameters
    ----------
    y_prob : array-like of shape (n_samples,)
        Probabilities of the positive class, in [0, 1].
    name : str, default="y_prob"
        Argument name used in error messages.

    Returns
    -------
    y_prob : ndarray of shape (n_samples,), float64, read-only (the caller's array when it is float64)

    Raises
    ------
    ValueError
        If empty, not 1-D, not numeric, NaN, infinite, or outside [0, 1].
    TypeError
        If not array-like.
    """
    arr = as_1d(y_prob, name)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be numeric probabilities; got dtype {arr.dtype}{_non_numeric(arr)}")
    arr = as_float64(arr)
    if arr.min() >= 0.0 and arr.max() <= 1.0:  # False for NaN too: two reductions decide the common case
        return arr
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} must be finite (no NaN or infinity); got {_describe_bad(arr, bad)}")
    bad = (arr < 0.0) | (arr > 1.0)
    raise ValueError(f"{name} must lie in [0, 1]; got {_describe_bad(arr, bad)}")


def check_y_true(
    y_true: ArrayLike, name: str = "y_true", *, pos_label: object = None, allow_soft: bool = False
) -> NDArray[np.float64]:
    """Validate binary labels and return them as float64 0/1.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels: 0/1, bool, or any values with ``pos_label`` naming the positive class.
    name : str, default="y_true"
        Argument name used in error messages.
    pos_label : object, default=None
        The positive class. Required when the labels are not 0/1 or bool (e.g. strings).
    allow_soft : bool, default=False
        Accept soft labels in [0, 1] (only for methods that fit a log loss, e.g. MCGrad).

    Returns
    -------
    y_true : ndarray of shape (n_samples,), float64 in {0, 1} (or [0, 1] when ``allow_soft``), read-only (the
        caller's array when it is float64)

    Raises
    ------
    ValueError
        If empty, missing values, labels that are not binary, or a ``pos_label`` that is not one of two labels.
    """
    arr = as_1d(y_true, name)
    missing = pd.isna(arr) if arr.dtype == object or pos_label is not None else None
    if missing is not None and missing.any():  # numbers have the finiteness check below
        first = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"{name} must not contain missing values; got {int(missing.sum())} missing value(s), "
            f"the first at index {first}"
        )
    if pos_label is not None:
        values = np.unique(arr.astype(str) if arr.dtype == object else arr)
        if len(values) > 2:
            raise ValueError(f"{name} must have at most two distinct labels; got {len(values)}: {values[:5].tolist()}")
        positive = arr == pos_label
        if len(values) == 2 and not positive.any():
            raise ValueError(f"pos_label must be one of the labels of {name} {values.tolist()}; got {pos_label!r}")
        return as_float64(positive)
    if arr.dtype == bool:
        return as_float64(arr)
    if not np.issubdtype(arr.dtype, np.number):
        try:
            shown = np.unique(arr.astype(str))[:5].tolist()
        except (TypeError, ValueError):
            shown = "unorderable values"
        raise ValueError(
            f"{name} must be 0/1 or bool; got non-numeric labels {shown}; "
            "map them to 0/1 (or pass pos_label where the function takes one, --pos-label on the command line)"
        )
    arr = as_float64(arr)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} must be finite (no NaN or infinity); got {_describe_bad(arr, bad)}")
    if allow_soft:
        bad = (arr < 0) | (arr > 1)
        if bad.any():
            raise ValueError(f"{name} must lie in [0, 1]; got {_describe_bad(arr, bad)}")
    else:
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            raise ValueError(f"{name} must be binary (0 or 1); got {_describe_bad(arr, bad)}")
    return arr


#: The hint added to an error about the labels of ``fit(y_prob, y)`` when the two look swapped (:func:`swap_hint`).
FIT_SWAP = "did you pass y_prob and y in the wrong order? fit takes (y_prob, y)"
#: The same for a metric ``f(y_true, y_prob)``.
METRIC_SWAP = "did you pass y_true and y_prob in the wrong order? metrics take (y_true, y_prob)"


def looks_swapped(labels: ArrayLike, scores: ArrayLike) -> bool:
    """Whether ``labels`` and ``scores`` look passed in each other's place: ``scores`` hold labels (only 0 and 1,
    or for k classes, 1-D class labels) while ``labels`` hold probabilities (numbers in [0, 1], not all 0 or 1) or,
    for k classes, a 2-D score matrix. Never raises: inputs that are not arrays do not look swapped."""
    try:
        lab, sco = np.asarray(labels), np.asarray(scores)
    except (TypeError, ValueError):  # ragged lists and the like
        return False
    if sco.ndim != 1 or sco.size == 0 or lab.dtype.kind not in "biuf":
        return False
    if lab.ndim == 2:  # a score matrix as labels, and 1-D class labels (integers or names) as scores
        return sco.dtype.kind in "biuOUS" or (sco.dtype.kind == "f" and bool(np.all(np.mod(sco, 1) == 0)))
    if lab.ndim != 1 or sco.dtype.kind not in "biuf" or sco[0] not in (0, 1):  # the first score decides at once
        return False
    lab = lab.astype(np.float64)
    binary = (lab == 0) | (lab == 1)
    return bool(np.all((sco == 0) | (sco == 1)) and np.all((lab >= 0) & (lab <= 1)) and not binary.all())


@contextlib.contextmanager
def swap_hint(labels: ArrayLike, scores: ArrayLike, hint: str) -> Iterator[None]:
    """Add ``hint`` (:data:`FIT_SWAP`, :data:`METRIC_SWAP`) to a ``ValueError`` raised inside the block when
    ``labels`` and ``scores`` look passed in each other's place (:func:`looks_swapped`)."""
    try:
        yield
    except ValueError as exc:
        if looks_swapped(labels, scores):
            raise ValueError(f"{exc}; {hint}") from exc
        raise


def check_y_real(
    values: ArrayLike, name: str, *, lower: float | None = None, strict: bool = False
) -> NDArray[np.float64]:
    """Validate real-valued predictions or outcomes (regression) and return them as float64.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        Numbers (bool counts as 0/1).
    name : str
        Argument name used in error messages (``"y_pred"``, ``"y"``, ``"y_true"``).
    lower : float or None, default=None
        Least allowed value (e.g. 0 for counts), None for none.
    strict : bool, default=False
        The values must exceed ``lower`` (e.g. positive means of a Poisson model).

    Returns
    -------
    values : ndarray of shape (n_samples,), float64, read-only (the caller's array when it is float64)

    Raises
    ------
    ValueError
        If empty, not 1-D, not numeric, NaN, infinite, or below ``lower``.
    TypeError
        If not array-like or complex.
    """
    arr = as_1d(values, name)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}{_non_numeric(arr)}")
    arr = as_float64(arr)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} must be finite (no NaN or infinity); got {_describe_bad(arr, bad)}")
    if lower is not None:
        bad = arr <= lower if strict else arr < lower
        if bad.any():
            rule = f"be {'greater than' if strict else 'at least'} {lower:g}"
            raise ValueError(f"{name} must {rule}; got {_describe_bad(arr, bad)}")
    return arr


def check_sample_weight(
    sample_weight: ArrayLike | None, n_samples: int, name: str = "sample_weight"
) -> NDArray[np.float64]:
    """Validate sample weights; ``None`` means unit weights.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        Non-negative finite weights, not all zero.
    n_samples : int
        Expected length.
    name : str, default="sample_weight"
        Argument name used in error messages (the command line names its weight column).

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,), float64, read-only (the caller's array when it is float64;
        :func:`unit_weights` for None)

    Raises
    ------
    ValueError
        If the length differs, or any weight is NaN, infinite or negative, or all are zero.
    """
    if sample_weight is None:
        return unit_weights(n_samples)
    if isinstance(sample_weight, numbers.Number):
        raise TypeError(f"{name} must be array-like of shape (n_samples,); got scalar {sample_weight!r}")
    arr = as_1d(sample_weight, name)
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}{_non_numeric(arr)}")
    arr = as_float64(arr)
    if arr.shape[0] != n_samples:
        raise ValueError(f"{name} must have length {n_samples} (n_samples); got {arr.shape[0]}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} must be finite; got {_describe_bad(arr, bad)}")
    bad = arr < 0
    if bad.any():
        raise ValueError(f"{name} must be non-negative; got {_describe_bad(arr, bad)}")
    if not arr.any():
        raise ValueError(f"{name} must have a positive sum; got all zeros")
    return arr


def check_int(name: str, value: object, rule: str, accept: Callable[[int], bool]) -> None:
    """Raise ("<name> must be <rule>; got <value>") ``TypeError`` unless ``value`` is an integer (numpy integers
    included; bools are not integers here), ``ValueError`` unless ``accept(value)`` holds."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be {rule}; got {value!r} of type {type(value).__name__}")
    if not accept(int(value)):
        raise ValueError(f"{name} must be {rule}; got {value!r}")


def check_positive_int(name: str, value: object, *, minimum: int = 1) -> None:
    """:func:`check_int` of an integer at least ``minimum`` (a positive integer by default)."""
    rule = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    check_int(name, value, rule, lambda v: v >= minimum)


def check_choice(name: str, value: object, choices: tuple[str | None, ...]) -> None:
    """Raise ``TypeError`` unless ``value`` is a str (or None, where ``choices`` holds None), ``ValueError``
    unless it is one of ``choices``; the message lists them ("'a', 'b' or None")."""
    if (isinstance(value, str) or value is None) and value in choices:
        return
    shown = [repr(c) for c in choices]
    rule = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
    if not (isinstance(value, str) or (value is None and None in choices)):
        raise TypeError(f"{name} must be {rule}; got {value!r} of type {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name} must be {rule}; got {value!r}")


def check_sequence(name: str, value: object, rule: str, check_entry: Callable[[str, object], None]) -> None:
    """Check a parameter that lists things: a non-empty list, tuple or 1-D array whose entries each pass
    ``check_entry(f"{name}[{i}]", entry)``; ``rule`` says what it must be, for the messages.

    Raises
    ------
    TypeError
        If ``value`` is not a list, tuple or 1-D array (a string or a single number included), or as
        ``check_entry`` for an entry.
    ValueError
        If it is empty, or as ``check_entry`` for an entry.
    """
    if not (isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)):
        raise TypeError(f"{name} must be {rule}; got {value!r} of type {type(value).__name__}")
    if len(value) == 0:
        raise ValueError(f"{name} must be {rule}; got {value!r}")
    for i, entry in enumerate(value):
        check_entry(f"{name}[{i}]", entry)


def check_positive_ints(name: str, value: object) -> None:
    """:func:`check_sequence` of positive integers (:func:`check_positive_int`), such as layer widths."""
    check_sequence(name, value, "a non-empty sequence (list or tuple) of positive integers", check_positive_int)


def check_bool(name: str, value: object) -> None:
    """Raise ``TypeError`` unless ``value`` is a bool (``numpy.bool_`` included; 0 and 1 are not bools here)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r} of type {type(value).__name__}")


def check_random_state_param(random_state: object) -> None:
    """Raise unless ``random_state`` is None or a non-negative integer: the model file records it as a parameter,
    so a ``numpy.random.Generator`` (which JSON cannot hold) is refused, as by every calibrator.

    Raises
    ------
    TypeError
        If it is of another type (bools, floats and Generators included).
    ValueError
        If it is a negative integer.
    """
    if random_state is None:
        return
    rule = "None or a non-negative integer"
    if isinstance(random_state, np.random.Generator):
        raise TypeError(
            f"random_state must be {rule} (a model file records the seed); got a Generator: pass a seed "
            "such as int(rng.integers(2**32))"
        )
    check_int("random_state", random_state, rule, lambda v: v >= 0)


def check_X_type(X: object) -> None:
    """Raise ``TypeError`` for an ``X`` that is not a table: a string, a dict (whose ``len`` counts its keys), a
    sparse matrix, or an iterator (which has no length and is used up by reading it)."""
    if isinstance(X, (str, bytes, Mapping, Iterator)) or scipy.sparse.issparse(X):
        hint = (
            "; pandas.DataFrame(X) makes a frame of a dict of columns"
            if isinstance(X, Mapping)
            else "; pass X.toarray() or a DataFrame"
            if scipy.sparse.issparse(X)
            else "; pass list(X) or numpy.asarray(X)"
            if isinstance(X, Iterator)
            else ""
        )
        raise TypeError(f"X must be a DataFrame or a 2-D array-like; got {type(X).__name__}{hint}")


def check_real(name: str, value: object, rule: str, accept: Callable[[float], bool]) -> float:
    """Raise ("<name> must be <rule>; got <value>") ``TypeError`` unless ``value`` is a real number (bools are not
    numbers here), ``ValueError`` unless it is finite and ``accept(value)`` holds; return it as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {rule}; got {value!r} of type {type(value).__name__}")
    number = float(value)
    if not (math.isfinite(number) and accept(number)):
        raise ValueError(f"{name} must be {rule}; got {value!r}")
    return number


def check_consistent(**arrays: Any) -> None:
    """Raise ``ValueError`` naming each argument's length if the given arrays differ in length."""
    lengths = {k: (v.shape[0] if hasattr(v, "shape") else len(v)) for k, v in arrays.items() if v is not None}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"inputs must have the same number of samples; got {shown}")


#: The kinds of outcome a metric takes: binary labels with probabilities, or real outcomes with predictions.
OUTCOMES = ("classification", "regression")


def check_metric_inputs(
    y_true: ArrayLike, y_prob: ArrayLike, sample_weight: ArrayLike | None, outcome: str = "classification"
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Validate the ``(y_true, y_prob, sample_weight)`` triple of a metric.

    ``outcome="regression"`` takes any finite real outcomes and predictions (:func:`check_y_real`); the public
    functions check ``outcome`` itself (``validate_params``).

    Returns
    -------
    y_true, y_prob, sample_weight : ndarray of shape (n_samples,), float64

    Raises
    ------
    ValueError
        As :func:`check_y_true`, :func:`check_y_prob`, :func:`check_sample_weight`, or on mismatched lengths; an
        error about labels that look swapped with the scores adds :data:`METRIC_SWAP`.
    """
    regression = outcome == "regression"
    with swap_hint(y_true, y_prob, METRIC_SWAP):
        y = check_y_real(y_true, "y_true") if regression else check_y_true(y_true)
        p = check_y_real(y_prob, "y_prob") if regression else check_y_prob(y_prob)
    check_consistent(y_true=y, y_prob=p)
    w = check_sample_weight(sample_weight, p.shape[0])
    return y, p, w


def check_both_classes(y: NDArray[np.float64], sample_weight: NDArray[np.float64], name: str = "y") -> None:
    """Raise ``ValueError`` unless both classes carry positive weight (soft labels count as both)."""
    # einsum rather than np.dot: a multi-threaded BLAS dot on a busy machine can take milliseconds here
    pos = float(np.einsum("i,i->", sample_weight, y))
    neg = float(np.einsum("i,i->", sample_weight, 1.0 - y))
    if pos <= 0 or neg <= 0:
        only = "1 (all positive)" if neg <= 0 else "0 (all negative)"
        raise ValueError(f"{name} must contain both classes (with positive weight); got only class {only}")


def logit(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Logit of probabilities clipped to ``[EPS, 1 - EPS]``; finite for scores of exactly 0 or 1."""
    from scipy.special import logit as _logit

    return _logit(np.clip(p, EPS, 1.0 - EPS))


def output_dtype(y_prob: ArrayLike) -> np.dtype:
    """The float dtype to return for the caller's ``y_prob``: float32 stays float32, everything else float64."""
    dtype = getattr(y_prob, "dtype", None)
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def as_output(values: ArrayLike, like: ArrayLike) -> NDArray[np.floating]:
    """``values`` as a predict's output for the caller's input ``like``: float32 if ``like`` is float32, else float64,
    and writeable: a copy where ``values`` is a read-only view (of the caller's array, as an identity map returns)."""
    out = np.asarray(values, dtype=np.float64).astype(output_dtype(like), copy=False)
    return out if out.flags.writeable else out.copy()


def warn(message: str) -> None:
    """Issue a :class:`CalibrationWarning` pointing at the first caller outside the mcal package (a fixed stack
    level pointed into mcal whenever a decorator or helper stood between the public function and this call)."""
    level = 2
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, CalibrationWarning, stacklevel=level)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


#: Rows of multiclass probabilities must sum to 1 within this absolute tolerance (float32 rounding of k terms).
ROW_SUM_TOL = 1e-4


def check_class_scores(y_prob: ArrayLike, name: str = "y_prob", *, logits: bool = False) -> NDArray[np.float64]:
    """Validate a multiclass score matrix: probabilities (rows on the simplex) or logits.

    Parameters
    ----------
    y_prob : array-like of shape (n_samples, n_classes)
        One column per class, ``n_classes >= 2``: probabilities in [0, 1] whose rows sum to 1 (within
        :data:`ROW_SUM_TOL`), or, with ``logits``, any finite numbers.
    name : str, default="y_prob"
        Argument name used in error messages.
    logits : bool, default=False
        Whether the columns are logits rather than probabilities.

    Returns
    -------
    y_prob : ndarray of shape (n_samples, n_classes), float64
        Probability rows are divided by their sum, so they sum to 1 to rounding.

    Raises
    ------
    ValueError
        If not 2-D, fewer than 2 columns, empty, not numeric, NaN or infinite, or (probabilities) outside [0, 1] or
        with a row that does not sum to 1.
    TypeError
        If not array-like, or complex.
    """
    if y_prob is None or isinstance(y_prob, (str, bytes, numbers.Number)):
        raise TypeError(f"{name} must be array-like of shape (n_samples, n_classes); got {type(y_prob).__name__}")
    arr = np.asarray(y_prob)
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_samples, n_classes); got shape {arr.shape}")
    if arr.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 columns (one per class); got {arr.shape[1]}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must not be empty; got 0 rows")
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}{_non_numeric(arr)}")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        raise ValueError(
            f"{name} must be finite (no NaN or infinity); got {int(bad.sum())} such value(s), first in row {row}"
        )
    if logits:
        return arr
    bad = (arr < 0.0) | (arr > 1.0)
    if bad.any():
        row, col = (int(i[0]) for i in np.nonzero(bad))
        raise ValueError(f"{name} must lie in [0, 1]; got {float(arr[row, col])!r} at row {row}, column {col}")
    sums = arr.sum(axis=1)
    off = np.abs(sums - 1.0) > ROW_SUM_TOL
    if off.any():
        row = int(np.flatnonzero(off)[0])
        raise ValueError(
            f"{name} rows must sum to 1 (within {ROW_SUM_TOL:g}); got {int(off.sum())} row(s) that do not, the first "
            f"row {row} sums to {float(sums[row]):.6g} (pass logits with the estimator's input='logit' if these are scores)"
        )
    return arr / sums[:, None]


def check_class_labels(
    y: ArrayLike, n_classes: int, name: str = "y", classes: ArrayLike | None = None
) -> tuple[NDArray[np.intp], NDArray]:
    """Validate multiclass labels against ``n_classes`` score columns; return their column codes and the classes.

    Integer labels (or integer-valued floats) in ``0 .. n_classes - 1`` name the column directly. Other labels
    (strings, or integers outside that range) are class names: their sorted distinct values name the columns in
    order, so there must be exactly ``n_classes`` of them. With ``classes`` given (the fitted ``classes_``), every
    label must be one of them.

    Returns
    -------
    codes : ndarray of shape (n_samples,), intp in ``[0, n_classes)``
    classes : ndarray of shape (n_classes,)

    Raises
    ------
    ValueError
        If empty, not 1-D, missing values, a label that is not a class, or class names whose number differs from
        ``n_classes``.
    """
    arr = as_1d(y, name)
    missing = pd.isna(arr)
    if np.any(missing):
        raise ValueError(f"{name} must not contain missing values; got {int(np.sum(missing))}")
    if classes is not None:
        classes = np.asarray(classes)
        codes = np.searchsorted(classes, arr) if arr.dtype.kind == classes.dtype.kind else None
        if (
            codes is None
            or np.any(codes >= classes.size)
            or np.any(classes[np.minimum(codes, classes.size - 1)] != arr)
        ):
            unseen = np.setdiff1d(arr.astype(classes.dtype) if codes is not None else arr.astype(str), classes)
            raise ValueError(f"{name} must hold only the classes {classes.tolist()}; got {unseen[:5].tolist()}")
        return codes.astype(np.intp), classes
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.number):
        as_float = arr.astype(np.float64)
        integral = np.all(np.isfinite(as_float)) and np.all(as_float == np.round(as_float))
        if integral and as_float.min() >= 0 and as_float.max() < n_classes:
            return as_float.astype(np.intp), np.arange(n_classes)
        if not np.all(np.isfinite(as_float)):
            raise ValueError(f"{name} must be finite; got {_describe_bad(as_float, ~np.isfinite(as_float))}")
    try:
        classes, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"{name} must hold sortable class labels; got mixed types ({exc})") from exc
    if classes.size != n_classes:
        raise ValueError(
            f"{name} must hold integer labels 0..{n_classes - 1} or exactly {n_classes} class names (one per column "
            f"of the scores, in sorted order); got {classes.size} distinct labels {classes[:6].tolist()}"
        )
    return codes.astype(np.intp), classes
