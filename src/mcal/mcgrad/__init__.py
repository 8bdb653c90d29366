"""MCGrad: multicalibration by recursive gradient boosting (Tax et al. 2025), on LightGBM.

:class:`~mcal.MCGrad` is the estimator; :mod:`mcal.mcgrad.engine` is its round loop, the seam that
:mod:`mcal.dask` reuses with distributed data.
"""

from mcal.mcgrad._cross_fit import CrossFit
from mcal.mcgrad._estimator import MCGrad
from mcal.mcgrad._tuning import TuningResult, default_search_space, tune_mcgrad

__all__ = ["CrossFit", "MCGrad", "TuningResult", "default_search_space", "tune_mcgrad"]
