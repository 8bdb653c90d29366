"""generate_segments: every conjunction of up to ``max_depth`` feature conditions with enough rows (Guy et al.
2025; MCGrad paper, Tax et al. 2025, section 2 and Appendix A)."""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._constraints import Interval, validate_params
from mcal._features.segment_codes import Feature, feature_table, fit_feature, resolve_categorical
from mcal._validation import warn
from mcal.segments._segments import Segments
from mcal.segments._store import (
    CodedPart,
    combo_key,
)

#: The rule of ``max_values_per_feature`` (or of each value of a mapping).
_LEVELS = Interval(numbers.Integral, 2, None)


#: Levels of a feature that an int or mapping ``max_values_per_feature`` does not set.
DEFAULT_MAX_VALUES = 3


@validate_params({
    "max_depth": [None, Interval(numbers.Integral, 0, None, rule="an integer >= 0 or None")],
    "min_samples_per_segment": Interval(numbers.Integral, 1, None, rule="an integer >= 1"),
    "max_n_segments": [None, Interval(numbers.Integral, 1, None, rule="an integer >= 1 or None")],
})  # fmt: skip
def generate_segments(
    X: Any,
    *,
    max_depth: int | None = 3,
    max_values_per_feature: int | Mapping[str, int] = DEFAULT_MAX_VALUES,
    min_samples_per_segment: int = 10,
    max_n_segments: int | None = 1000,
    categorical_features: Any = "from_dtype",
    random_state: int | np.random.Generator | None = 0,
) -> Segments:
    """Generate segments from a feature table: every conjunction of up to ``max_depth`` feature conditions.

    Parameters
    ----------
    X : DataFrame (pandas, polars or pyarrow) or array-like of shape (n_samples, n_features)
        The features to segment on (e.g. the protected features). Arrays get the names ``x0, x1, ...``.
    max_depth : int or None, default=3
        Largest number of conditions per segment; 0 gives the whole table only, None every feature.
    max_values_per_feature : int or mapping of str to int, default=3
        Levels per feature, at least 2: one number for every feature, or a number per feature name (features not
        named get 3). A categorical feature with more distinct values keeps its ``max_values_per_feature - 1``
        most frequent values and one "other" level; a numerical feature with more distinct values is cut into
        ``max_values_per_feature`` quantile bins (fewer when quantiles coincide); otherwise each distinct value
        is a level.
    min_samples_per_segment : int, default=10
        Segments with fewer rows are dropped (the whole-table segment is always kept).
    max_n_segments : int or None, default=1000
        Cap on the number of segments; None for no cap.
    categorical_features : "from_dtype", None, array-like of bool, int or str, default="from_dtype"
        Which features are categorical, as in scikit-learn's ``HistGradientBoostingClassifier``: from the dtype
        (category, string and bool columns, and object columns other than of numbers only), none, a mask of shape (n_features,), or column
        indices or names of shape (n_categorical,), read as :class:`~mcal.MCGrad` reads them: a name is the string
        label of a DataFrame column (an array's columns ``x0, x1, ...`` and columns with other labels, such as
        ``0``, are declared by position), and a single index, a 2-D array, a mix of indices and names or a
        repeated column are refused.
        Datetime and timedelta columns (of those dtypes, or object columns of ``datetime.date``,
        ``datetime.datetime``, ``pd.Timestamp`` or ``datetime.timedelta`` values) are refused unless declared here
        (then each distinct value is a category): convert them to numbers to cut them into quantile bins.
    random_state : int, Generator or None, default=0
        Seeds the choice of feature combinations when the cap applies (fixed by default so that a metric
        computed on these segments is reproducible).

    Returns
    -------
    segments : Segments
        Ordered by depth, then by feature combination (in column order), then by level code; the whole table
        ``"all"`` first.

    Raises
    ------
    ValueError
        If a ``max_values_per_feature`` mapping names a column that ``X`` lacks, a numerical feature has non-numeric
        or infinite values, ``X`` is empty, or two columns have names of the same text (descriptions and
        :meth:`Segments.apply` know features by name).
    TypeError
        If ``categorical_features`` is a single value or holds values that are not indices, bools or names, a
        numerical feature holds complex numbers, or a datetime or timedelta column is not declared in
        ``categorical_features`` (the message suggests a conversion to numbers).

    Notes
    -----
    Missing values (NaN, None, NA) form their own level, ``x is missing``, which does not count towards
    ``max_values_per_feature`` and is never merged into "other". Levels are chosen from row counts, never from
    sample weights. A categorical level is known by its text, so values with the same text (``1`` and ``"1"``)
    are one level. A feature with a single nonempty level (constant, or all missing) defines no new segment
    and is skipped with a :class:`~mcal.CalibrationWarning`.

    **The cap.** Depths are taken shallowest first, and a depth whose eligible segments all fit is kept whole.
    At the first depth that does not fit, the feature combinations of that depth are visited in a random order
    (seeded by ``random_state``) and all eligible segments of each are kept until the cap is reached; the
    last combination visited contributes a random subset. Deeper depths are dropped and ``capped`` is set.
    So every feature combination of the cut depth has the same chance of being examined, whatever the column
    order. The reference implementation (``mcgrad.metrics.MulticalibrationError``) instead keeps the first
    segments in listing order, which favours the first columns.

    Other differences from the reference (``mcgrad`` 0.1.5, ``_segmentation.py``): it counts a missing
    categorical value as one of the ``max_values_per_feature`` values and may merge it into "other"; it breaks
    frequency ties by order of appearance, here by the value's text; it drops the whole-table segment when
    ``n_samples < min_samples_per_segment``. Quantile bins are the same (linear interpolation, duplicate edges
    dropped, right-closed bins).

    References
    ----------
    .. [1] Guy, Haimovich, Linder, Okati, Perini, Tax, Tygert, "Measuring multi-calibration", arXiv 2506.11251, 2025.
    .. [2] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv 2509.19884, section 2 and Appendix A.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"job": ["a", "a", "b", "b", "c"], "age": [20, 30, 40, 50, 60]})
    >>> segs = generate_segments(X, max_depth=1, min_samples_per_segment=1)
    >>> segs.descriptions[:4], segs.sizes[:4].tolist()
    (['all', 'job=a', 'job=b', 'job=c'], [5, 2, 2, 1])
    """
    names, columns, kinds = feature_table(X)
    max_values = _max_values(max_values_per_feature, names)
    is_cat = resolve_categorical(categorical_features, X, kinds)
    n = columns[0].shape[0]
    features, codes = [], []
    for name, column, cat in zip(names, columns, is_cat, strict=False):
        feature, code = fit_feature(name, column, cat, max_values[name])
        if np.count_nonzero(np.bincount(code, minlength=feature.n_levels)) < 2:
            warn(f"X column {name!r} has a single level (constant or all missing) and defines no segment")
            continue
        features.append(feature)
        codes.append(code)
    part = _enumerate(
        features, codes, n, len(features) if max_depth is None else min(max_depth, len(features)),
        min_samples_per_segment, max_n_segments, np.random.default_rng(random_state),
    )  # fmt: skip
    return Segments([part[0]], n, capped=part[1])


def _max_values(max_values_per_feature: Any, names: list[str]) -> dict[str, int]:
    """The levels of each feature named in ``names``, from ``max_values_per_feature`` (one int, or a mapping of
    feature names to ints; 3 for a feature it does not name)."""
    if not isinstance(max_values_per_feature, Mapping):
        _LEVELS.check("max_values_per_feature", max_values_per_feature)
        return dict.fromkeys(names, max_values_per_feature)
    unknown = [key for key in max_values_per_feature if key not in names]
    if unknown:
        raise ValueError(f"max_values_per_feature must name features of X ({names[:10]}); got unknown {unknown[:5]}")
    for key, value in max_values_per_feature.items():
        _LEVELS.check(f"max_values_per_feature[{key!r}]", value)
    return {name: max_values_per_feature.get(name, DEFAULT_MAX_VALUES) for name in names}


def _enumerate(
    features: list[Feature], codes: list[NDArray], n: int, max_depth: int, min_samples: int,
    cap: int | None, rng: np.random.Generator,
) -> tuple[CodedPart, bool]:  # fmt: skip
    combos: list[tuple[int, ...]] = [()]
    seg_combo, seg_group, sizes = [np.zeros(1, np.intp)], [np.zeros(1, np.int64)], [np.array([n])]
    budget = math.inf if cap is None else cap - 1
    capped = False
    dims_all = [f.n_levels for f in features]
    for depth in range(1, max_depth + 1):
        depth_combos = list(itertools.combinations(range(len(features)), depth))
        taken: list[tuple[tuple[int, ...], NDArray[np.int64], NDArray[np.int64]]] = []
        n_taken = 0
        for j in rng.permutation(len(depth_combos)):
            combo = depth_combos[j]
            dims = tuple(dims_all[f] for f in combo)
            counts = np.bincount(combo_key(codes, combo, dims), minlength=math.prod(dims))
            groups = np.flatnonzero(counts >= min_samples)
            if groups.size:
                taken.append((combo, groups, counts[groups]))
                n_taken += groups.size
            if n_taken > budget:
                taken, capped = _cut(taken, int(budget), rng), True
                break
        for combo, groups, counts in sorted(taken, key=lambda t: t[0]):
            seg_combo.append(np.full(groups.size, len(combos), dtype=np.intp))
            combos.append(combo)
            seg_group.append(groups.astype(np.int64))
            sizes.append(counts)
        if capped:
            break
        budget -= n_taken
    part = CodedPart(tuple(features), tuple(codes), tuple(combos), np.concatenate(seg_combo),
                      np.concatenate(seg_group), np.concatenate(sizes).astype(np.int64))  # fmt: skip
    return part, capped


def _cut(taken: list, budget: int, rng: np.random.Generator) -> list:
    """Keep whole combinations in visiting order until ``budget``; the last one contributes a random subset."""
    out, left = [], budget
    for combo, groups, counts in taken:
        if left <= 0:
            break
        if groups.size > left:
            keep = np.sort(rng.choice(groups.size, size=left, replace=False))
            groups, counts = groups[keep], counts[keep]
        out.append((combo, groups, counts))
        left -= groups.size
    return out
