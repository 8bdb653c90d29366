"""Group-based multicalibration baselines of the MCGrad paper: HKRR and DFMC."""

from mcal.groups._estimators import DFMC, HKRR
from mcal.groups._hkrr import HKRRResult, hkrr_multicalibrate, hkrr_replay

__all__ = ["DFMC", "HKRR", "HKRRResult", "hkrr_multicalibrate", "hkrr_replay"]
