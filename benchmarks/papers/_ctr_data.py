"""Census-KDD in a click-log setting: year split, field groups, per-field negative sampling, base models.

Benchmark scripts only (``paper_mcnet_ctr.py``). The base models' scores are cached per arm and seed under
``benchmarks/.cache/paper_mcnet_ctr`` (gitignored); the cache key holds every setting that changes them.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import _datasets as D
import numpy as np
import pandas as pd

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "paper_mcnet_ctr"
#: The field: ``class_of_worker`` (9 values) collapsed to four groups, each with hundreds of positives per half
#: of the 1995 rows (the two self-employed codes, the three government codes, and everyone not in work).
FIELD = "worker_group"
WORKER_GROUPS = {
    "Private": "private",
    "Self-employed-not incorporated": "self_employed",
    "Self-employed-incorporated": "self_employed",
    "Local government": "government",
    "State government": "government",
    "Federal government": "government",
    "Not in universe": "not_working",
    "Without pay": "not_working",
    "Never worked": "not_working",
}
#: Share of the negatives kept in the base model's training rows, per field group (positives are all kept);
#: the base model is not corrected for it, as ads systems train on sampled logs.
KEEP_NEGATIVES = {"private": 0.6, "government": 0.8, "not_working": 1.0, "self_employed": 0.4}
#: LightGBM base model (arms A, C1, C2).
LGBM_PARAMS = {
    "n_estimators": 300,
    "learning_rate": 0.05,
    "num_leaves": 31,
    "min_child_samples": 50,
    "subsample": 0.8,
    "subsample_freq": 1,
    "colsample_bytree": 0.8,
    "verbose": -1,
}
#: PyTorch MLP base model (arm B): trained for ``epochs`` epochs, far past its validation minimum.
MLP = {"hidden": (256, 256), "lr": 2e-3, "batch_size": 256, "epochs": 40, "val_fraction": 0.1}
BASE_VERSION = "1"


@dataclass
class Split:
    """One arm and seed: the calibration and test rows with the base model's scores on them."""

    cal: D.Dataset
    test: D.Dataset
    p_cal: np.ndarray
    p_test: np.ndarray
    info: dict


def load(max_rows: int | None = None, random_state: int = 0) -> tuple[D.Dataset, np.ndarray]:
    """Census-KDD, both files stacked, with the field column added; and the survey year (94 or 95) of each row.

    ``max_rows`` draws a seeded sample (the quick mode).
    """
    ds = D.load("census_kdd")
    year = np.concatenate(
        [
            pd.read_csv(
                D.data_dir() / "census_income_kdd" / f"census_income_1994_1995_{part}.csv.gz", header=None, usecols=[40]
            )
            .iloc[:, 0]
            .to_numpy()
            for part in ("train", "test")
        ]
    )
    if year.shape[0] != ds.n:
        raise D.DataUnavailable(f"census year column has {year.shape[0]} rows, the data {ds.n}")
    ds.frame[FIELD] = ds.frame["class_of_worker"].astype(str).map(WORKER_GROUPS).astype("category")
    if ds.frame[FIELD].isna().any():
        raise ValueError(f"class_of_worker holds values outside {sorted(WORKER_GROUPS)}")
    ds.field = FIELD
    if max_rows is not None and ds.n > max_rows:
        rows = np.sort(np.random.default_rng(random_state).choice(ds.n, max_rows, replace=False))
        ds, year = ds.subset(rows), year[rows]
    return ds, year


def rows_for(arm: dict, year: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train, calibration and test rows: 1994 / two random halves of 1995 (period shift), or an i.i.d. split of
    all rows in the same proportions."""
    rng = np.random.default_rng(1000 + seed)
    if arm["split"] == "period":
        train, later = np.flatnonzero(year == 94), rng.permutation(np.flatnonzero(year == 95))
    else:
        perm = rng.permutation(year.shape[0])
        n_train = int((year == 94).sum())
        train, later = np.sort(perm[:n_train]), perm[n_train:]
    half = later.shape[0] // 2
    return train, np.sort(later[:half]), np.sort(later[half:])


def sampled(ds: D.Dataset, rows: np.ndarray, seed: int) -> np.ndarray:
    """``rows`` with the negatives of each field group kept at the rate of :data:`KEEP_NEGATIVES`."""
    keep = ds.frame[FIELD].iloc[rows].astype(str).map(KEEP_NEGATIVES).to_numpy(dtype=float)
    draw = np.random.default_rng(2000 + seed).random(rows.shape[0])
    return rows[(ds.y[rows] == 1) | (draw < keep)]


def _features(frame: pd.DataFrame, ds: D.Dataset) -> pd.DataFrame:
    return frame[list(ds.categorical) + list(ds.numerical)]


def fit_lightgbm(ds: D.Dataset, train: np.ndarray, targets: dict, seed: int, n_threads: int) -> tuple[dict, dict]:
    import lightgbm as lgb

    model = lgb.LGBMClassifier(**LGBM_PARAMS, random_state=seed, n_jobs=n_threads)
    model.fit(_features(ds.frame.iloc[train], ds), ds.y[train])
    scores = {k: model.predict_proba(_features(ds.frame.iloc[r], ds))[:, 1] for k, r in targets.items()}
    return scores, {"n_trees": LGBM_PARAMS["n_estimators"]}


def _log_loss_t(torch, logits, y) -> float:
    return float(torch.nn.functional.binary_cross_entropy_with_logits(logits, y).item())


def fit_mlp(ds: D.Dataset, train: np.ndarray, targets: dict, seed: int, n_threads: int) -> tuple[dict, dict]:
    """Two hidden ReLU layers on the one-hot categoricals and standardized numericals, Adam, no regularization,
    trained for ``MLP["epochs"]`` epochs; the held-out part of the training rows records where its log loss
    was lowest (the model is kept at the last epoch, past that minimum, so it is over-confident)."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(n_threads)
    X = ds.X.to_numpy(dtype=np.float32)
    rng = np.random.default_rng(3000 + seed)
    perm = rng.permutation(train)
    n_val = int(MLP["val_fraction"] * perm.shape[0])
    fit_rows, val_rows = perm[n_val:], perm[:n_val]
    layers, width = [], X.shape[1]
    for h in MLP["hidden"]:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    net = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))
    opt = torch.optim.Adam(net.parameters(), lr=MLP["lr"])
    xf, yf = torch.from_numpy(X[fit_rows]), torch.from_numpy(ds.y[fit_rows].astype(np.float32))
    xv, yv = torch.from_numpy(X[val_rows]), torch.from_numpy(ds.y[val_rows].astype(np.float32))
    history = []
    gen = torch.Generator().manual_seed(seed)
    for _ in range(MLP["epochs"]):
        net.train()
        for idx in torch.randperm(xf.shape[0], generator=gen).split(MLP["batch_size"]):
            opt.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(net(xf[idx]).squeeze(1), yf[idx])
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            history.append(_log_loss_t(torch, net(xv).squeeze(1), yv))
    with torch.no_grad():
        scores = {
            k: torch.sigmoid(net(torch.from_numpy(X[r])).squeeze(1)).numpy().astype(np.float64)
            for k, r in targets.items()
        }
    best = int(np.argmin(history))
    return scores, {
        "val_log_loss_min": history[best],
        "val_log_loss_min_epoch": best + 1,
        "val_log_loss_last": history[-1],
        "epochs": MLP["epochs"],
    }


BASES = {"lightgbm": fit_lightgbm, "mlp": fit_mlp}


def _cache_path(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return CACHE / f"{key['arm']}-seed{key['seed']}-{digest}.npz"


def split_for(
    ds: D.Dataset, year: np.ndarray, arm_name: str, arm: dict, seed: int, *, use_cache: bool, n_threads: int, log=print
) -> Split:
    """Calibration and test data of one arm and seed, with the base model's scores (cached on disk)."""
    train, cal, test = rows_for(arm, year, seed)
    if arm["sampling"]:
        train = sampled(ds, train, seed)
    key = {
        "arm": arm_name,
        "seed": seed,
        "n": ds.n,
        "arm_def": arm,
        "version": BASE_VERSION,
        "params": LGBM_PARAMS if arm["base"] == "lightgbm" else MLP,
        "keep": KEEP_NEGATIVES,
    }
    path = _cache_path(key)
    if use_cache and path.exists():
        with np.load(path, allow_pickle=False) as z:
            p_cal, p_test, info = z["cal"], z["test"], json.loads(str(z["info"]))
        info["cached"] = True
    else:
        start = time.perf_counter()
        scores, info = BASES[arm["base"]](ds, train, {"cal": cal, "test": test}, seed, n_threads)
        info |= {
            "fit_s": time.perf_counter() - start,
            "n_train": int(train.shape[0]),
            "train_prevalence": float(ds.y[train].mean()),
        }
        p_cal, p_test = scores["cal"], scores["test"]
        if use_cache:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, cal=p_cal, test=p_test, info=json.dumps(info))
            tmp.replace(path)
        info["cached"] = False
        log(f"  base model {arm_name} seed {seed}: {info['fit_s']:.0f} s")
    return Split(ds.subset(cal), ds.subset(test), p_cal, p_test, info)
