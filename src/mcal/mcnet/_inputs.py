"""MCNet's inputs, prepared from the scores and features: bin geometry, balance groups, auxiliary features and the
warm start (Platt scaling with one intercept per field)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from mcal._features.field_inputs import field_column
from mcal._features.fields import FieldVocabulary
from mcal._validation import logit
from mcal.parametric import fit_logistic_map

#: The outer bin edges, in logit units: every score, once clipped to [EPS, 1 - EPS], lies between them.
LOGIT_BOUND = float(logit(np.array([1.0]))[0])
#: Smallest half-width used to normalise a bin's score input (a bin of tied scores has width zero).
MIN_HALF_WIDTH = 0.05
#: Newton steps for the per-field intercepts of the warm start.
_NEWTON_STEPS = 25


def bin_geometry(edges: NDArray[np.float64], score_range: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Anchor (integration start), centre and half-width of each bin's data range, in logit units, and the
    ``edges``; ``score_range`` holds the smallest and largest calibration score."""
    low, high = score_range
    anchor = np.concatenate([[low], edges[1:-1]])
    top = np.minimum(edges[1:], high)
    return {
        "edges": edges,
        "anchor": anchor,
        "center": (anchor + top) / 2.0,
        "half_width": np.maximum((top - anchor) / 2.0, MIN_HALF_WIDTH),
    }


def balance_groups(X: Any, column: str | int, n: int) -> tuple[NDArray[np.intp], int]:
    """Codes 0..G-1 of the field-balance column of ``X``, and G."""
    col = field_column(X, column, n)
    vocab = FieldVocabulary.fit(col)
    return vocab.transform(col, f"X[{column!r}]"), len(vocab)


def standardisation(values: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Mean and scale of each column of ``values`` (its standard deviation, 1 for a constant column)."""
    std = values.std(axis=0)
    return values.mean(axis=0), np.where(std > 0, std, 1.0)


def warm_start(
    x: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], contexts: NDArray[np.intp], n_contexts: int
) -> tuple[float, NDArray[np.float64]]:
    """Platt scaling, then one intercept per context with the slope fixed; returns the slope and the
    ``n_contexts`` intercepts.

    The intercepts solve each field's score equation :math:`\\sum_{i \\in c} w_i(\\sigma(a s_i + b_c) - y_i)
    = 0` by Newton steps, with a ridge of one average row's weight towards the Platt intercept (finite for a
    field of one class).
    Context 0 (no context) keeps the Platt intercept.
    """
    theta = fit_logistic_map(
        np.column_stack([x, np.ones_like(x)]), y, w, lower=np.array([0.0, -np.inf]), x0=np.array([1.0, 0.0])
    )
    slope, intercept = float(theta[0]), float(theta[1])
    b = np.full(n_contexts, intercept)
    ridge = w.mean()  # the weight of one average row
    for _ in range(_NEWTON_STEPS if n_contexts > 1 else 0):
        p = expit(slope * x + b[contexts])
        grad = np.bincount(contexts, weights=w * (p - y), minlength=n_contexts) + ridge * (b - intercept)
        hess = np.bincount(contexts, weights=w * p * (1.0 - p), minlength=n_contexts) + ridge
        b = np.clip(b - grad / hess, -LOGIT_BOUND, LOGIT_BOUND)
        b[0] = intercept
    return slope, b
