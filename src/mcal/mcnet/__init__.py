"""MCNet: monotonic calibration networks with field context (Dai et al., WWW 2025).

Importing this package does not import torch; fitting and exact inference do.
"""

from mcal.mcnet._checks import torch_device
from mcal.mcnet._estimator import MCNet
from mcal.mcnet._quadrature import clenshaw_curtis
from mcal.mcnet._training import balance_penalty

__all__ = ["MCNet", "balance_penalty", "clenshaw_curtis", "torch_device"]
