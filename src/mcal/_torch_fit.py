"""Full-batch training of small PyTorch calibration models (torch is imported inside the functions).

Shared by the field-aware baselines: parameters live in a ``torch.nn.ParameterDict`` (the fitted ``module_``),
are trained in float64 with Adam on the whole calibration set (deterministic, so a row of weight k and k copies
of it give the same fit), and are stored as safetensors through :meth:`BaseCalibrator._get_tensors`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._optional import import_optional
from mcal._validation import check_positive_int


def check_training_params(learning_rate: Any, max_iter: Any) -> None:
    """Raise ``ValueError`` unless ``learning_rate`` is a positive number and ``max_iter`` a positive integer."""
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float, np.number)) or not (
        np.isfinite(learning_rate) and learning_rate > 0
    ):
        raise ValueError(f"learning_rate must be a positive finite number; got {learning_rate!r}")
    check_positive_int("max_iter", max_iter)


def make_parameters(init: dict[str, NDArray[np.float64]]) -> Any:
    """A ``torch.nn.ParameterDict`` of float64 parameters with the given initial values."""
    torch = import_optional("torch")
    return torch.nn.ParameterDict(
        {k: torch.nn.Parameter(torch.as_tensor(np.asarray(v, dtype=np.float64)).clone()) for k, v in init.items()}
    )


def weighted_bce(logits: Any, y: Any, w: Any) -> Any:
    """Weighted mean binary cross-entropy of ``sigmoid(logits)`` against labels ``y`` (torch tensors)."""
    torch = import_optional("torch")
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none")
    return (w * loss).sum() / w.sum()


def train_full_batch(module: Any, loss_fn: Callable[[], Any], *, learning_rate: float, max_iter: int) -> float:
    """Run ``max_iter`` Adam steps on ``loss_fn()`` over ``module``'s parameters; return the final loss.

    Raises
    ------
    RuntimeError
        If the loss becomes non-finite (a diverging fit), naming the step.
    """
    torch = import_optional("torch")
    optimizer = torch.optim.Adam(module.parameters(), lr=float(learning_rate))
    loss = None
    for step in range(int(max_iter)):
        optimizer.zero_grad()
        loss = loss_fn()
        if not torch.isfinite(loss):
            raise RuntimeError(f"training diverged at step {step}: the loss is {loss.item()}; lower learning_rate")
        loss.backward()
        optimizer.step()
    return float(loss_fn().detach()) if loss is not None else float("nan")


def tensors_of(module: Any) -> dict[str, NDArray[np.float64]]:
    """The module's parameters as float64 numpy arrays (for safetensors)."""
    return {k: v.detach().cpu().numpy().astype(np.float64) for k, v in module.state_dict().items()}


def restore_parameters(cls_name: str, tensors: dict[str, NDArray], shapes: dict[str, tuple[int, ...]]) -> Any:
    """Rebuild a ParameterDict from stored tensors, checking names, shapes and finiteness.

    Raises
    ------
    ValueError
        If a tensor is missing, extra, of the wrong shape or not finite.
    """
    if set(tensors) != set(shapes):
        raise ValueError(
            f"{cls_name} weights must be exactly {sorted(shapes)}; got {sorted(tensors)}"
        )
    for name, shape in shapes.items():
        arr = np.asarray(tensors[name])
        if arr.shape != tuple(shape):
            raise ValueError(f"{cls_name} weight {name!r} must have shape {tuple(shape)}; got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{cls_name} weight {name!r} must be finite")
    return make_parameters({k: tensors[k] for k in shapes})


def mlp(params: Any, prefix: str, x: Any) -> Any:
    """A one-hidden-layer ReLU perceptron ``W2 relu(W1 x + b1) + b2`` with scalar output, shape (n,)."""
    torch = import_optional("torch")
    hidden = torch.relu(x @ params[f"{prefix}_w1"].T + params[f"{prefix}_b1"])
    return hidden @ params[f"{prefix}_w2"] + params[f"{prefix}_b2"]


def mlp_init(prefix: str, n_in: int, n_hidden: int, rng: np.random.Generator) -> dict[str, NDArray[np.float64]]:
    """Initial weights of :func:`mlp`: uniform first layer (PyTorch's default scale), zero output layer.

    The zero output layer makes the network output 0 at the start, so calibrators start from the identity.
    """
    bound = 1.0 / np.sqrt(n_in)
    return {
        f"{prefix}_w1": rng.uniform(-bound, bound, (n_hidden, n_in)),
        f"{prefix}_b1": rng.uniform(-bound, bound, n_hidden),
        f"{prefix}_w2": np.zeros(n_hidden),
        f"{prefix}_b2": np.zeros(()),
    }


def mlp_shapes(prefix: str, n_in: int, n_hidden: int) -> dict[str, tuple[int, ...]]:
    """Shapes of the :func:`mlp` weights."""
    return {
        f"{prefix}_w1": (n_hidden, n_in),
        f"{prefix}_b1": (n_hidden,),
        f"{prefix}_w2": (n_hidden,),
        f"{prefix}_b2": (),
    }
