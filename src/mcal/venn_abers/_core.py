"""The Venn-Abers fit of Vovk, Petej and Fedorova (2015): every isotonic fit with one test point, in one pass.

For the calibration scores grouped by value (``k`` distinct scores), the isotonic regression of the labels with one
more point of weight 1 and label 0 (or 1) tied with the j-th score is read off the cumulative sum diagram (CSD) of
the data: its value at the test point is the slope of the greatest convex minorant (GCM) over the test point's
segment. Algorithms 1 and 2 of the paper compute that slope for every j with one stack, in O(k) after the sort;
the label-0 fits are the label-1 fits of the mirrored data (scores reversed, labels complemented).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def csd_points(
    y_prob: NDArray[np.float64], y: NDArray[np.float64], sample_weight: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Distinct scores with the weight and the weighted positives of each, in increasing score order.

    Parameters
    ----------
    y_prob, y, sample_weight : ndarray of shape (n_samples,)
        Clean scores, binary labels and positive weights.

    Returns
    -------
    scores, weight, positives : ndarray of shape (n_distinct,)
    """
    scores, inverse = np.unique(y_prob, return_inverse=True)
    weight = np.bincount(inverse, weights=sample_weight, minlength=scores.size)
    positives = np.bincount(inverse, weights=sample_weight * y, minlength=scores.size)
    return scores, weight.astype(np.float64, copy=False), positives.astype(np.float64, copy=False)


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """z of (a - o) x (b - o): positive when o -> a -> b turns left (counter-clockwise)."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _slope(a: tuple[float, float], b: tuple[float, float]) -> float:
    return (b[1] - a[1]) / (b[0] - a[0])


def _upper_fits(weight: NDArray[np.float64], positives: NDArray[np.float64]) -> NDArray[np.float64]:
    """Isotonic fit at the test point with label 1 and weight 1 tied with each distinct score (Algorithms 1, 2).

    Returns ``f`` of shape (k + 1,): ``f[j]`` with the test point tied with score j, ``f[k] = 1`` (test point
    above every score). A test point strictly between scores j - 1 and j takes ``f[j]``: its fit is the same.
    """
    k = weight.size
    xs = np.concatenate(([-1.0, 0.0], np.cumsum(weight))).tolist()
    ys = np.concatenate(([-1.0, 0.0], np.cumsum(positives))).tolist()
    points = list(zip(xs, ys, strict=False))  # points[m + 1] is the CSD corner P_m of the paper, P_{-1} = (-1, -1)
    hull: list[tuple[float, float]] = []  # Algorithm 1: the GCM's corners, left to right (Graham scan)
    for point in points:
        while len(hull) > 1 and _cross(hull[-2], hull[-1], point) <= 0:
            hull.pop()
        hull.append(point)
    stack = hull[::-1]  # Algorithm 2: the leftmost corner on top
    fits = np.empty(k + 1)
    for i in range(1, k + 1):
        fits[i - 1] = _slope(stack[-1], stack[-2])
        # the label-1 point moves from score i - 1 to score i: the corner P_{i-1} moves to P_{i-2} + P_i - P_{i-1}
        prev, cur, nxt = points[i - 1], points[i], points[i + 1]
        moved = (prev[0] + nxt[0] - cur[0], prev[1] + nxt[1] - cur[1])
        points[i] = moved
        if _cross(stack[-1], stack[-2], moved) >= 0:  # not below the current first segment: the GCM keeps it
            continue
        stack.pop()
        while len(stack) > 1 and _cross(moved, stack[-1], stack[-2]) <= 0:
            stack.pop()
        stack.append(moved)
    fits[k] = 1.0
    return fits


def venn_abers_fits(
    weight: NDArray[np.float64], positives: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The isotonic fits F0 and F1 of the Venn-Abers predictor at every position of a test point.

    Parameters
    ----------
    weight, positives : ndarray of shape (k,)
        Weight and weighted positives of each distinct calibration score, in increasing score order
        (:func:`csd_points`); the test point has weight 1.

    Returns
    -------
    f0 : ndarray of shape (k + 1,)
        ``f0[0] = 0`` (a test score below every calibration score) and ``f0[j + 1]`` the isotonic fit at a test
        point of label 0 tied with score j; a score strictly between scores j and j + 1 takes ``f0[j + 1]``.
    f1 : ndarray of shape (k + 1,)
        ``f1[j]`` the fit at a test point of label 1 tied with score j, ``f1[k] = 1``; a score strictly between
        scores j - 1 and j takes ``f1[j]``.

    Notes
    -----
    Vovk, Petej and Fedorova (2015), section 2, Algorithms 1 to 4; O(k) after the sort. ``f0`` is computed as
    ``1 - f1`` of the mirrored diagram (scores in decreasing order, labels complemented), which is Algorithms 3
    and 4 by symmetry.
    """
    f1 = _upper_fits(weight, positives)
    f0 = 1.0 - _upper_fits(weight[::-1], (weight - positives)[::-1])[::-1]
    return np.clip(f0, 0.0, 1.0), np.clip(f1, 0.0, 1.0)


def venn_abers_bounds(
    scores: NDArray[np.float64], f0: NDArray[np.float64], f1: NDArray[np.float64], y_prob: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper Venn-Abers probabilities ``(p0, p1)`` of test scores (the paper's Algorithms 5 and 6).

    Parameters
    ----------
    scores : ndarray of shape (k,)
        Distinct calibration scores, increasing.
    f0, f1 : ndarray of shape (k + 1,)
        As returned by :func:`venn_abers_fits`.
    y_prob : ndarray of shape (n_samples,)
        Test scores.

    Returns
    -------
    p0, p1 : ndarray of shape (n_samples,)
    """
    return f0[np.searchsorted(scores, y_prob, side="right")], f1[np.searchsorted(scores, y_prob, side="left")]


def merge_bounds(p0: NDArray[np.float64], p1: NDArray[np.float64]) -> NDArray[np.float64]:
    """The merged probability ``p1 / (1 - p0 + p1)``, minimax for log loss (Vovk et al. 2015, section 4).

    ``1 - p0 + p1 >= 1`` since ``p0 <= p1``, so the ratio is always defined.

    Parameters
    ----------
    p0, p1 : ndarray of shape (n_samples,)
        Lower and upper Venn-Abers probabilities, ``p0 <= p1``, in [0, 1].

    Returns
    -------
    p : ndarray of shape (n_samples,)
        The merged probabilities, in [p0, p1].
    """
    return p1 / (1.0 - p0 + p1)
