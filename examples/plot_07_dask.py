"""
MCGrad and the metrics on a Dask cluster
========================================

:mod:`mcal.dask` fits MCGrad with ``lightgbm.dask`` and computes the metrics with dask reductions, so that the
calibration data need not fit one machine. Here the cluster is a small local one inside this process
(``processes=False``, two workers of one thread) and the data are 20,000 synthetic rows in 4 partitions; on a real
cluster, pass ``Client("tcp://scheduler:8786")`` and read partitioned Parquet with :func:`mcal.dask.read_parquet`.
"""

import logging

import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster
from scipy.special import expit

from mcal.dask import DaskMCGrad, metrics

rng = np.random.default_rng(0)
n = 20_000
frame = pd.DataFrame({"country": rng.choice(["FR", "DE", "US", "JP"], n), "age": rng.integers(18, 80, n)})
frame["country"] = frame["country"].astype("category")
z = rng.normal(-1.0, 1.0, n)
bias = frame["country"].map({"FR": 0.6, "DE": -0.4, "US": 0.0, "JP": 0.3}).to_numpy(float)
frame["y"] = (rng.random(n) < expit(z + bias)).astype(int)  # the score misses a per-country shift
frame["p"] = expit(z)
df = dd.from_pandas(frame, npartitions=4)

logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)  # it logs every shuffle as a warning
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
client = Client(cluster)

model = DaskMCGrad(client=client, random_state=0).fit(df["p"], df["y"], X=df[["country", "age"]])
p_cal = model.predict(df["p"], X=df[["country", "age"]])  # lazy, partition by partition

# %%
# The metrics of :mod:`mcal.dask.metrics` take dask collections and equal those of :mod:`mcal.metrics`.
for name, p in [("base", df["p"]), ("MCGrad", p_cal)]:
    result = metrics.mce(df["y"], p, X=df[["country", "age"]])
    print(f"{name:7s} log loss {metrics.log_loss(df['y'], p):.4f}   MCE {result.mce_sigma:.2f} sigma")

# %%
# ``to_local`` returns an ordinary :class:`mcal.MCGrad`, which predicts without Dask; its model file is the same.
local = model.to_local()
print(type(local).__name__, local.n_rounds_, "rounds")
print(np.allclose(local.predict(frame["p"], X=frame[["country", "age"]]), p_cal.compute()))

client.close()
cluster.close()
