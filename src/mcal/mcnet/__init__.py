"""MCNet: monotonic calibration networks with field context (Dai et al., WWW 2025).

Importing this package does not import torch; fitting and exact inference do, through
:func:`mcal._optional.import_optional`.
"""

from mcal.mcnet._estimator import MCNet
from mcal.mcnet._quadrature import clenshaw_curtis

__all__ = ["MCNet", "clenshaw_curtis"]
