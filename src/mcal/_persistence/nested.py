"""Model files of models that hold a list of fitted calibrators (one-vs-rest, a cross-fitted classifier): each
calibrator's entry, and its network weights under its index (``"3/layer.weight"`` for calibrator 3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from numpy.typing import NDArray

from mcal._persistence.codec import Storable, calibrator_from_dict


def nested_state(calibrators: Sequence[Storable]) -> list[dict[str, Any]]:
    """The model-file entries of ``calibrators``, in order (their weights go to :func:`nested_tensors`)."""
    return [cal.to_dict() for cal in calibrators]


def nested_tensors(calibrators: Sequence[Storable]) -> dict[str, NDArray]:
    """The network weights of ``calibrators``, each name prefixed with its calibrator's index and a slash."""
    return {f"{j}/{k}": v for j, cal in enumerate(calibrators) for k, v in cal._get_tensors().items()}


def restore_nested(data: Any, tensors: dict[str, NDArray], name: str, *, expected: str | None = None,
                   count: int | None = None) -> list[Any]:  # fmt: skip
    """Rebuild the calibrators of the state field ``name`` from their entries and the weights of each.

    Parameters
    ----------
    data : object
        The field's value: a list of :func:`nested_state` entries.
    tensors : dict of str to ndarray
        The model file's weights, as :func:`nested_tensors` names them.
    name : str
        The field, for the messages (``"state.calibrators"``).
    expected : str or None, default=None
        The class every entry must describe; None: the class of the first.
    count : int or None, default=None
        How many entries the field must list; None: at least one.

    Returns
    -------
    calibrators : list of mcal.BaseCalibrator

    Raises
    ------
    ValueError
        If the field is not a non-empty list (of ``count`` entries), an entry describes another class, or as
        :func:`~mcal._persistence.codec.calibrator_from_dict` for an entry.
    """
    if not isinstance(data, list) or not data or (count is not None and len(data) != count):
        size = "a non-empty list of" if count is None else f"a list of {count}"
        got = f"{len(data)} entries" if isinstance(data, list) else type(data).__name__
        raise ValueError(f"model data field {name} must be {size} calibrators; got {got}")
    if expected is None and isinstance(data[0], dict):
        expected = data[0].get("class")
    calibrators = []
    for j, entry in enumerate(data):
        if not isinstance(entry, dict) or entry.get("class") != expected:
            raise ValueError(f"model data field {name}[{j}] must describe a {expected}")
        own = {k.partition("/")[2]: v for k, v in tensors.items() if k.partition("/")[0] == str(j)}
        calibrators.append(calibrator_from_dict(entry, tensors=own))
    return calibrators
