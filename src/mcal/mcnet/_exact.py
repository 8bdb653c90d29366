"""Exact MCNet inference (``inference="exact"``): the network's forward pass in float64 with T-node quadrature,
without gradient, numpy in and out."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal.mcnet._network import auxiliary
from mcal.mcnet._training import Spec, calibrated_logits, model_tables


def float64_weights(torch: Any, module: Any, device: Any) -> dict[str, Any]:
    """The fitted weights ``module`` (a ``torch.nn.ParameterDict``) as float64 tensors on ``device``."""
    return {k: v.detach().to(device=device, dtype=torch.float64) for k, v in module.items()}


def network_logits(
    torch: Any,
    module: Any,
    spec: Spec,
    geometry: dict[str, NDArray[np.float64]],
    x: NDArray[np.float64],
    bins: NDArray[np.intp],
    contexts: NDArray[np.intp],
    aux: NDArray[np.float64] | None,
    device: Any,
) -> NDArray[np.float64]:
    """Calibrated logits of score logits ``x`` (eq. 7-8, plus the auxiliary network), computed on ``device``."""
    P = float64_weights(torch, module, device)
    geometry = {k: torch.as_tensor(v, dtype=torch.float64, device=device) for k, v in geometry.items()}
    xt = torch.as_tensor(x, dtype=torch.float64, device=device)
    at = None if aux is None else torch.as_tensor(aux, dtype=torch.float64, device=device)
    with torch.no_grad():
        tables, _ = model_tables(torch, P, spec, geometry)
        return calibrated_logits(torch, P, spec, geometry, tables, xt, bins, contexts, at).cpu().numpy()


def auxiliary_logits(torch: Any, module: Any, aux: NDArray[np.float64]) -> NDArray[np.float64]:
    """The auxiliary network's logits (Appendix A.3) of standardised features ``aux``, on the CPU."""
    P = float64_weights(torch, module, torch.device("cpu"))
    with torch.no_grad():
        return auxiliary(torch, P, torch.as_tensor(aux, dtype=torch.float64)).numpy()
