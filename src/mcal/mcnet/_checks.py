"""Checks of MCNet's hyperparameters and devices, and of a fitted state read from a model file."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from mcal._constraints import NON_NEGATIVE_INT, POSITIVE_INT, Interval, StrOptions
from mcal._features.field_slots import check_columns_param, check_field_param
from mcal._features.fields import check_field_values
from mcal._persistence.state import Array, Each, NoneOr, Number
from mcal._progress import check_progress_param
from mcal._torch import check_device
from mcal._validation import check_int, check_positive_ints


def _real(low: float, high: float | None = None, *, open_low: bool = False) -> Interval:
    """A finite number in ``[low, high)`` (``(low, high)`` when ``open_low``; no upper bound for None)."""
    rule = f"a finite number in {'(' if open_low else '['}{low}, {np.inf if high is None else high})"
    return Interval(numbers.Real, low, high, closed="neither" if open_low else "left", rule=rule)


def check_n_bins(name: str, value: Any) -> None:
    """Raise ``ValueError`` unless ``value`` is a positive integer or 'auto' (``TypeError`` for another type)."""
    rule = "a positive integer or 'auto'"
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"{name} must be {rule}; got {value!r}")
        return
    check_int(name, value, rule, lambda v: v >= 1)


def _check_column(name: str, column: Any) -> None:
    check_field_param(column, name)


#: The parameter constraints of MCNet.
MCNET_CONSTRAINTS: dict[str, Any] = {
    **{name: Interval(numbers.Integral, minimum, None) for name, minimum in (
        ("n_nodes", 2), ("embedding_dim", 1), ("auxiliary_hidden_size", 1),
        ("max_epochs", 1), ("max_steps", 1), ("min_steps", 0), ("patience", 1), ("n_processes", 1))},
    "n_bins": check_n_bins,
    "batch_size": [None, POSITIVE_INT],
    "hidden_sizes": check_positive_ints,
    "beta": _real(0.0),
    "alpha": _real(0.0),
    "smoothness": _real(0.0),
    "learning_rate": _real(0.0, open_low=True),
    "validation_fraction": _real(0.0, 1.0),
    "field": [None, _check_column],
    "balance_field": [None, _check_column],
    "auxiliary_features": check_columns_param,
    "memory_efficient": "boolean",
    "random_state": "random_state",
    "n_threads": [None, POSITIVE_INT],
    "progress": check_progress_param,
    "inference": StrOptions("exact", "compiled"),
    "bin_joins": StrOptions("continuous", "raised"),
    "integral": StrOptions("grid", "quadrature"),
    "device": check_device,
}  # fmt: skip


def check_param_relations(est: Any) -> None:
    """Raise ``ValueError`` for MCNet parameters that contradict each other: a field-balance penalty without a
    field, or training in processes with that penalty or on another device than the CPU."""
    if est.alpha > 0 and est.field is None and est.balance_field is None:
        raise ValueError(f"alpha > 0 needs a field to balance: set field or balance_field; got alpha={est.alpha!r}")
    if est.n_processes > 1 and (est.alpha > 0 or est.device != "cpu"):
        raise ValueError(
            f"n_processes > 1 trains on the CPU without the field-balance penalty; got n_processes={est.n_processes!r} "
            f"with alpha={est.alpha!r}, device={est.device!r}"
        )


_FLOATS = Array("f", "floats")

#: The rule of each fitted attribute of an MCNet model file (:mod:`mcal._persistence.state`); how the fields relate to
#: each other and to the parameters is :func:`check_fitted_structure`'s.
STATE_CONSTRAINTS: dict[str, Any] = {
    "bin_edges_": Array("f", "floats", order="strict"),
    "n_bins_": POSITIVE_INT,
    "bin_count_losses_": Each(Number(0), of=dict),
    "score_range_": Array("f", "floats", order="weak"),
    "field_values_": NoneOr(check_field_values),
    "auxiliary_mean_": NoneOr(_FLOATS),
    "auxiliary_scale_": NoneOr(Array("f", "floats", values=Number(0, strict=True))),
    **dict.fromkeys(("n_epochs_", "best_epoch_", "n_steps_", "best_step_"), NON_NEGATIVE_INT),
    "loss_curve_": _FLOATS,
    "validation_loss_curve_": _FLOATS,
}


def check_fitted_structure(est: Any, logit_bound: float, candidates: tuple[int, ...]) -> None:
    """Check how the fields of a fitted state, each meeting its rule in :data:`STATE_CONSTRAINTS`, relate to each
    other and to the parameters (``logit_bound``: the outer bin edge; ``candidates``: the bin counts of
    ``n_bins="auto"``); ``ValueError`` names the fields."""
    edges = est.bin_edges_
    if est.n_bins_ != edges.size - 1:
        raise ValueError("model data field state.n_bins_ must be the number of bins of state.bin_edges_")
    if edges[0] != -logit_bound or edges[-1] != logit_bound:
        raise ValueError(f"model data field state.bin_edges_ must start at {-logit_bound} and end at {logit_bound}")
    rng_ = est.score_range_
    if rng_.shape != (2,) or not (edges[0] <= rng_[0] <= rng_[1] <= edges[-1]):
        raise ValueError("model data field state.score_range_ must be 2 ordered logits within the outer edges")
    if rng_[0] > edges[1] or (edges.size > 2 and rng_[1] <= edges[-2]):
        raise ValueError("model data field state.score_range_ must reach into the first and the last bin")
    auto = est.n_bins == "auto"
    if (auto and list(est.bin_count_losses_) != [str(k) for k in candidates]) or (not auto and est.bin_count_losses_):
        raise ValueError(
            f"model data field state.bin_count_losses_ must map each bin count {list(candidates)} to its held-out "
            "loss with n_bins='auto', and be empty with an integer n_bins"
        )
    if est.n_bins_ > (max(candidates) if auto else est.n_bins):
        raise ValueError("model data field state.n_bins_ must be at most n_bins (the largest candidate with 'auto')")
    if (est.field is None) != (est.field_values_ is None) or est.field_values_ == []:
        raise ValueError("model data field state.field_values_ must be a non-empty list with a field, null without")
    n_aux = 0 if est.auxiliary_features is None else len(est.auxiliary_features)
    for name in ("auxiliary_mean_", "auxiliary_scale_"):
        arr = getattr(est, name)
        if (arr is None) != (n_aux == 0) or (arr is not None and arr.shape != (n_aux,)):
            raise ValueError(f"model data field state.{name} must have one entry per auxiliary feature ({n_aux})")


def check_weight_tensors(
    tensors: dict[str, np.ndarray], layout: dict[str, Any], *, n_bins: int, n_contexts: int
) -> None:
    """Check the weights file of a model file: exactly the network's tensors (``layout``: name to (shape, ...))
    in float32 and the compiled tables in float64, each of its shape and finite; ``ValueError`` names the tensor."""
    expected = {f"net.{k}": shape for k, (shape, _) in layout.items()}
    expected.update({"compiled.values": (n_contexts, n_bins, None), "compiled.slopes": (n_contexts, n_bins, None, 2)})
    if set(tensors) != set(expected):
        missing, extra = sorted(set(expected) - set(tensors)), sorted(set(tensors) - set(expected))
        raise ValueError(f"model weights must hold exactly the MCNet tensors; missing {missing}, unexpected {extra}")
    for name, shape in expected.items():
        arr = tensors[name]
        if arr.ndim != len(shape) or any(s is not None and a != s for a, s in zip(arr.shape, shape, strict=False)):
            raise ValueError(f"model weights tensor {name!r} must have shape {shape}; got {arr.shape}")
        dtype = np.float32 if name.startswith("net.") else np.float64
        if arr.dtype != dtype:
            raise ValueError(
                f"model weights tensor {name!r} must be {np.dtype(dtype)}, as mcal.save writes it; got {arr.dtype}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"model weights tensor {name!r} must hold finite values")


def check_compiled_tables(values: np.ndarray, slopes: np.ndarray) -> None:
    """Check the compiled tables' grid: one slope cell per pair of grid points, values increasing along the grid
    and slopes non-negative (the map is monotone); ``ValueError`` names the tensor."""
    if values.shape[-1] < 2 or slopes.shape[2] != values.shape[-1] - 1:
        raise ValueError("model weights 'compiled.slopes' must have one cell per pair of grid points")
    if np.any(np.diff(values, axis=-1) <= 0) or np.any(slopes < 0):
        raise ValueError("model weights 'compiled.values' must increase along the grid, with non-negative slopes")
