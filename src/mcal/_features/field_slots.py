"""Field values to model slots, with one fallback slot for rare and unseen values (shared by field-aware baselines).

A field value seen at fit time on at least ``min_samples_per_field`` rows (of positive weight) gets its own
slot ``0..n_slots-1``; every other value, rare at fit time or unseen, uses the fallback slot ``n_slots``, whose
calibration function is fitted on all rows. The missing level (rows whose field is missing) is a value like any
other (:class:`~mcal._features.fields.FieldVocabulary`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._features.fields import UNSEEN, FieldVocabulary, extract_field
from mcal._validation import check_sequence


def check_field_param(field: Any, name: str = "field") -> None:
    """Raise ``TypeError`` unless ``field`` names a column (str) or indexes one (int; bools are not indices
    here), ``ValueError`` for an empty or blank name; ``name`` is the parameter named in the message."""
    if isinstance(field, bool) or not isinstance(field, (str, int, np.integer)):
        raise TypeError(
            f"{name} must be a column name (str) or index (int); got {field!r} of type {type(field).__name__}"
        )
    if isinstance(field, str) and not field.strip():
        raise ValueError(f"{name} must be a column name (non-empty str) or index (int); got {field!r}")


def check_columns_param(name: str, columns: Any) -> None:
    """Check a parameter listing columns of ``X`` (e.g. ``auxiliary_features``): None, or a non-empty list, tuple
    or 1-D array of column names or indices (:func:`check_field_param`).

    Raises
    ------
    TypeError
        If it is of another type (a single name included), or an entry is not a column name or index.
    ValueError
        If it is empty, or an entry is an empty name.
    """
    if columns is not None:
        rule = "None or a non-empty sequence (list or tuple) of column names or indices"
        check_sequence(name, columns, rule, lambda entry_name, column: check_field_param(column, entry_name))


def check_field_slots(name: str, slots: Any) -> None:
    """The fitted-state rule of the slot of each field value ``name`` (``model data field state.field_slots_``): a
    1-D integer array holding -1 (a value too rare for a slot of its own) or the slots ``0..k-1`` in order of first
    use.

    Raises
    ------
    ValueError
        Naming ``name``.
    """
    if not isinstance(slots, np.ndarray) or slots.ndim != 1 or slots.dtype.kind != "i":
        got = f"shape {slots.shape}, dtype {slots.dtype}" if isinstance(slots, np.ndarray) else type(slots).__name__
        raise ValueError(f"{name} must be a 1-D integer array; got {got}")
    used = slots[slots >= 0]
    if np.any(slots < -1) or not np.array_equal(used, np.arange(used.size)):
        raise ValueError(f"{name} must hold -1 or the slots 0..k-1 in order of first use")


class FieldSlots:
    """Mapping of field values to slots; the fitted state is ``values`` and ``slot_of_value``.

    Parameters
    ----------
    values : list of str, then None for the missing level if it was seen
        Every field value seen at fit time, sorted (the :class:`~mcal._features.fields.FieldVocabulary`).
    slot_of_value : ndarray of shape (len(values),), int64
        Slot of each value; -1 for values too rare to get their own slot.
    """

    def __init__(self, values: list[str | None], slot_of_value: NDArray[np.int64]) -> None:
        self.vocabulary = FieldVocabulary(values)
        self.slot_of_value = np.asarray(slot_of_value, dtype=np.int64)
        self.n_slots = int(self.slot_of_value.max(initial=-1)) + 1
        #: rows of positive weight per value at fit time, and the value code of every fit row (set by :meth:`fit` only)
        self.counts: NDArray[np.intp] | None = None
        self.codes: NDArray[np.intp] | None = None

    @classmethod
    def fit(
        cls, X: Any, field: str | int, sample_weight: NDArray[np.float64], min_samples: int, *, eligible: Any = None
    ) -> tuple[FieldSlots, NDArray[np.intp]]:
        """Build the slots from the fit data; returns them and the slot of every row.

        Parameters
        ----------
        X : DataFrame or array-like
            Holds the field column.
        field : str or int
            The field column's name or index.
        sample_weight : ndarray of shape (n_samples,)
            Rows of zero weight do not count towards a value's number of rows.
        min_samples : int
            Values with fewer rows of positive weight use the fallback slot.
        eligible : callable, default=None
            ``eligible(mask) -> bool`` further restricts which values get a slot (e.g. both classes present).

        Raises
        ------
        ValueError
            If the field column is absent.
        """
        column = extract_field(X, field, sample_weight.shape[0])
        vocabulary = FieldVocabulary.fit(column)
        codes = vocabulary.transform(column, f"X[{field!r}]")
        counts = np.bincount(codes[sample_weight > 0], minlength=len(vocabulary))
        keep = counts >= min_samples
        if eligible is not None:
            keep &= np.array([bool(k) and eligible(codes == c) for c, k in enumerate(keep)], dtype=bool)
        slot_of_value = np.where(keep, np.cumsum(keep) - 1, -1).astype(np.int64)
        slots = cls(vocabulary.to_list(), slot_of_value)
        slots.counts, slots.codes = counts, codes
        return slots, slots._slots_of_codes(codes)

    def transform(self, X: Any, field: str | int, n_samples: int) -> NDArray[np.intp]:
        """Slot of every row of ``X``; unseen values (one warning) and rare ones get the fallback slot."""
        column = extract_field(X, field, n_samples)
        return self._slots_of_codes(self.vocabulary.transform(column, f"X[{field!r}]"))

    def _slots_of_codes(self, codes: NDArray[np.intp]) -> NDArray[np.intp]:
        slot = np.where(codes == UNSEEN, -1, self.slot_of_value[np.maximum(codes, 0)])
        return np.where(slot < 0, self.n_slots, slot).astype(np.intp)

    @staticmethod
    def validate(values: list[str | None], slot_of_value: NDArray[np.int64]) -> None:
        """Check that restored state whose fields each met their rule (:func:`check_field_slots`, and
        ``check_field_values`` of :mod:`mcal._features.fields`) gives one slot to each field value.

        Raises
        ------
        ValueError
            Naming the fields.
        """
        if slot_of_value.shape != (len(values),):
            raise ValueError(
                "model data fields state.field_slots_ and state.field_values_ must hold one entry per field value; "
                f"got {slot_of_value.size} and {len(values)}"
            )
