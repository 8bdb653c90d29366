"""mcal on a Dask cluster: MCGrad, prediction and the metrics for data that does not fit one machine.

Needs the ``dask`` extra (``pip install 'mcal[dask]'``: dask, distributed and lightgbm). This package is the only
part of mcal that imports dask, and only inside its functions: ``import mcal`` (and ``import mcal.dask``) never
loads it.

- :class:`DaskMCGrad`: MCGrad fitted on dask collections; the fitted model is an ordinary :class:`mcal.MCGrad`.
- :class:`DaskRegressionMCGrad`: RegressionMCGrad (real-valued outcomes) the same way; an ordinary
  :class:`mcal.RegressionMCGrad` once fitted.
- :func:`monitor`: :func:`mcal.monitor.monitor` (calibration per time window, drift alarm) on dask collections.
- :func:`predict`: any fitted mcal calibrator applied lazily to dask collections.
- :mod:`mcal.dask.metrics`: the functions of :mod:`mcal.metrics`, with the same names and values, on dask
  collections (``outcome="regression"``, ``mse`` and ``mae`` for real outcomes).
- :func:`connect` and :func:`read_parquet`: a client (to a scheduler, or a local cluster) and partitioned Parquet
  input, as the command line's ``--scheduler`` / ``--dask-workers`` use them.
"""

from mcal._shared.moved import moved_names
from mcal.dask import metrics
from mcal.dask._engine import WorkerLostError
from mcal.dask._mcgrad import DaskMCGrad
from mcal.dask._monitor import monitor
from mcal.dask._predict import predict
from mcal.dask._regression import DaskRegressionMCGrad
from mcal.dask._session import connect, read_parquet

__all__ = [
    "DaskMCGrad",
    "DaskRegressionMCGrad",
    "WorkerLostError",
    "connect",
    "metrics",
    "monitor",
    "predict",
    "read_parquet",
]

#: check_parquet_path moved into mcal._shared.parquet in mcal 0.2; its former name here resolves until 0.3 with a warning.
__getattr__ = moved_names("mcal.dask", {"check_parquet_path": "mcal._shared.parquet.check_parquet_path"})
