"""Checks of MCNet's hyperparameters and of a fitted state read from a model file."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from mcal._validation import check_real


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (numpy integers included, bools excluded)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_int(name: str, value: Any, minimum: int) -> None:
    if not is_int(value) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")


def _check_real(name: str, value: Any, *, low: float, high: float = np.inf, open_low: bool = False) -> None:
    rule = f"a finite number in {'(' if open_low else '['}{low}, {high})"
    check_real(name, value, rule, lambda v: (v > low if open_low else v >= low) and v < high)


def _check_column(name: str, value: Any, *, allow_none: bool = True) -> None:
    if (value is None and allow_none) or (isinstance(value, str) and value != "") or is_int(value):
        return
    rule = "a column name (non-empty str) or index (int)" + (" or None" if allow_none else "")
    raise ValueError(f"{name} must be {rule}; got {value!r}")


def check_params(est: Any) -> None:
    """Validate MCNet's hyperparameters; raises ``ValueError`` naming the parameter, the rule and the value."""
    _check_int("n_bins", est.n_bins, 1)
    _check_int("n_nodes", est.n_nodes, 2)
    hs = est.hidden_sizes
    if isinstance(hs, (str, bytes)) or not hasattr(hs, "__len__") or len(hs) == 0 or not all(
        is_int(h) and h >= 1 for h in hs
    ):
        raise ValueError(f"hidden_sizes must be a non-empty sequence of positive integers; got {hs!r}")
    for name in ("embedding_dim", "auxiliary_hidden_size", "batch_size", "max_epochs", "patience"):
        _check_int(name, getattr(est, name), 1)
    _check_real("beta", est.beta, low=0.0)
    _check_real("alpha", est.alpha, low=0.0)
    _check_real("learning_rate", est.learning_rate, low=0.0, open_low=True)
    _check_real("validation_fraction", est.validation_fraction, low=0.0, high=1.0)
    _check_column("field", est.field)
    _check_column("balance_field", est.balance_field)
    aux = est.auxiliary_features
    if aux is not None:
        if isinstance(aux, (str, bytes)) or not hasattr(aux, "__len__") or len(aux) == 0:
            raise ValueError(f"auxiliary_features must be None or a non-empty sequence of columns; got {aux!r}")
        for col in aux:
            _check_column("auxiliary_features entries", col, allow_none=False)
    if est.alpha > 0 and est.field is None and est.balance_field is None:
        raise ValueError(f"alpha > 0 needs a field to balance: set field or balance_field; got alpha={est.alpha!r}")
    if not isinstance(est.memory_efficient, bool):
        raise ValueError(f"memory_efficient must be a bool; got {est.memory_efficient!r}")
    if est.random_state is not None and (not is_int(est.random_state) or est.random_state < 0):
        raise ValueError(f"random_state must be None or a non-negative integer; got {est.random_state!r}")
    if est.n_threads is not None:
        _check_int("n_threads", est.n_threads, 1)
    if est.progress is not None and not isinstance(est.progress, bool):
        raise ValueError(f"progress must be True, False or None; got {est.progress!r}")
    if est.inference not in ("exact", "compiled"):
        raise ValueError(f"inference must be 'exact' or 'compiled'; got {est.inference!r}")
    if not isinstance(est.device, str):
        raise ValueError(f"device must be a torch device name such as 'cpu' or 'cuda'; got {est.device!r}")
    _check_int("n_processes", est.n_processes, 1)
    if est.n_processes > 1 and (est.alpha > 0 or est.device != "cpu"):
        raise ValueError(
            f"n_processes > 1 trains on the CPU without the field-balance penalty; got n_processes={est.n_processes!r} "
            f"with alpha={est.alpha!r}, device={est.device!r}"
        )


def check_fitted_structure(est: Any, logit_bound: float) -> None:
    """Check the JSON part of a fitted state (``logit_bound``: the outer bin edge); ``ValueError`` names the field."""
    edges = est.bin_edges_
    if not isinstance(edges, np.ndarray) or edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError("model data field state.bin_edges_ must be a strictly increasing array of >= 2 edges")
    if edges[0] != -logit_bound or edges[-1] != logit_bound:
        raise ValueError(f"model data field state.bin_edges_ must start at {-logit_bound} and end at {logit_bound}")
    rng_ = est.score_range_
    if not isinstance(rng_, np.ndarray) or rng_.shape != (2,) or not (edges[0] <= rng_[0] <= rng_[1] <= edges[-1]):
        raise ValueError("model data field state.score_range_ must be 2 ordered logits within the outer edges")
    if rng_[0] > edges[1] or (edges.size > 2 and rng_[1] <= edges[-2]):
        raise ValueError("model data field state.score_range_ must reach into the first and the last bin")
    fv = est.field_values_
    if (est.field is None) != (fv is None) or (
        fv is not None and (not isinstance(fv, list) or not fv or not all(isinstance(v, str) for v in fv)
                            or len(set(fv)) != len(fv))
    ):
        raise ValueError("model data field state.field_values_ must be distinct strings with a field, null without")
    mean, scale = est.auxiliary_mean_, est.auxiliary_scale_
    n_aux = 0 if est.auxiliary_features is None else len(est.auxiliary_features)
    for name, arr in (("auxiliary_mean_", mean), ("auxiliary_scale_", scale)):
        malformed = arr is not None and (not isinstance(arr, np.ndarray) or arr.shape != (n_aux,))
        if (arr is None) != (n_aux == 0) or malformed:
            raise ValueError(f"model data field state.{name} must have one entry per auxiliary feature ({n_aux})")
    if scale is not None and np.any(scale <= 0):
        raise ValueError("model data field state.auxiliary_scale_ must be positive")
    for name in ("n_epochs_", "best_epoch_"):
        if not is_int(getattr(est, name)) or getattr(est, name) < 0:
            raise ValueError(f"model data field state.{name} must be a non-negative integer")
    for name in ("loss_curve_", "validation_loss_curve_"):
        if not isinstance(getattr(est, name), np.ndarray) or getattr(est, name).ndim != 1:
            raise ValueError(f"model data field state.{name} must be a 1-D array")
