"""What an MCNet model file and pickle hold beside the parameters: the network's weights and the compiled tables as
arrays, and the reading of files written by earlier versions of mcal."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._persistence import refuse_legacy_state
from mcal.mcnet._network import to_parameters

#: Prefix of the network's tensors in the weights file (the compiled tables are "compiled.values", "...slopes").
_NET = "net."


def weight_arrays(P: Any) -> dict[str, NDArray[np.float32]]:
    """The tensors of the ``torch.nn.ParameterDict`` ``P`` as numpy arrays, by name."""
    return {k: v.detach().cpu().numpy() for k, v in P.items()}


def stored_parameters(torch: Any, arrays: dict[str, NDArray]) -> Any:
    """The weights as a fitted MCNet keeps them (``module_``): float32 parameters on the CPU."""
    return to_parameters(torch, arrays, device="cpu", dtype=torch.float32)


def model_tensors(P: Any, values: NDArray[np.float64], slopes: NDArray[np.float64]) -> dict[str, NDArray]:
    """The weights file's tensors: the network's weights ``P`` and the compiled tables ``values``, ``slopes``."""
    tensors: dict[str, NDArray] = {_NET + k: v for k, v in weight_arrays(P).items()}
    tensors["compiled.values"] = values
    tensors["compiled.slopes"] = slopes
    return tensors


def read_tensors(torch: Any, tensors: dict[str, NDArray]) -> tuple[Any, NDArray[np.float64], NDArray[np.float64]]:
    """The network's weights (as :func:`stored_parameters`) and the compiled values and slopes of a weights file's
    tensors, checked beforehand (:func:`mcal.mcnet._checks.check_weight_tensors`)."""
    weights = {k.removeprefix(_NET): v for k, v in tensors.items() if k.startswith(_NET)}
    return (
        stored_parameters(torch, weights),
        np.asarray(tensors["compiled.values"], dtype=np.float64),
        np.asarray(tensors["compiled.slopes"], dtype=np.float64),
    )


def upgrade_model_data(data: Any) -> Any:
    """The model data of an MCNet file as this mcal reads it: a file of the step-trained MCNet written before
    ``integral`` existed gets ``integral="quadrature"`` (its network was trained, and its tables built, with the
    per-row quadrature: it predicts exactly as before), and one written before ``bin_joins`` existed also
    ``bin_joins="raised"`` (its bins were raised); one written before ``n_bins="auto"`` existed gets the fitted
    ``n_bins_`` of its bin edges and no held-out losses; other data is returned as is.

    Raises
    ------
    ValueError
        For a file of the epoch-trained MCNet (schema version 2, before the step budget), whose network this mcal
        evaluates differently.
    """
    refuse_legacy_state(data, has="n_epochs_", lacks="n_steps_", message=(
        "model data must be an MCNet trained by steps (its state records 'n_steps_'); got a "
        "schema_version 2 file of the epoch-trained MCNet (mcal before the step-budget change), whose "
        "network this mcal evaluates differently (monotone across bins by construction): fit the "
        "model again and save it"
    ))  # fmt: skip
    state = data.get("state") if isinstance(data, dict) else None
    params = data.get("params") if isinstance(data, dict) else None
    if not (isinstance(params, dict) and isinstance(state, dict) and "n_steps_" in state):
        return data
    older = {"integral": "quadrature", "bin_joins": "raised"}
    missing = {k: v for k, v in older.items() if k not in params} if "integral" not in params else {}
    shape = state["bin_edges_"].get("shape") if isinstance(state.get("bin_edges_"), dict) else None
    if "n_bins_" not in state and isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int):
        # a file of an integer n_bins, before n_bins="auto" existed: its bins are those of its edges
        state = {**state, "n_bins_": shape[0] - 1, "bin_count_losses_": {}}
    # files written before smoothness existed were trained without the penalty
    return {**data, "params": {"smoothness": 0.0, **params, **missing}, "state": state}
