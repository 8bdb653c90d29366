"""MCNet: monotonic calibration networks with field context (Dai et al., WWW 2025).

Importing this package does not import torch; fitting and exact inference do.
"""

from mcal._shared.moved import moved_names
from mcal.mcnet._estimator import MCNet
from mcal.mcnet._quadrature import clenshaw_curtis

__all__ = ["MCNet", "clenshaw_curtis"]

#: The device check and the field-balance penalty that the field networks and the command line share moved into
#: mcal._torch in mcal 0.2; their former names here resolve until 0.3 with a warning.
__getattr__ = moved_names("mcal.mcnet", {name: f"mcal._torch.{name}" for name in ("balance_penalty", "torch_device")})
