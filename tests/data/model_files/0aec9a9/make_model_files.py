"""Write the model files in this folder with mcal at commit 0aec9a9 (before the package refactor of issue #18).

Run from a checkout of that commit, single-threaded so that the fits are reproducible::

    git worktree add /tmp/old0aec 0aec9a9 --detach
    OMP_NUM_THREADS=1 PYTHONPATH=/tmp/old0aec/src python tests/data/model_files/0aec9a9/make_model_files.py

It fits a small model of every registered method on small deterministic data, saves each with ``mcal.save`` as
``NAME.json`` (with ``NAME.safetensors`` for network models), and writes ``inputs.npz`` (the scores and the columns
of X) and ``predictions.npz`` (each model's predictions on those inputs, keyed by NAME). ``manifest.json`` says which
X each model reads: ``null`` (none), ``"frame"`` (a pandas DataFrame of the columns it lists; ``f`` categorical) or
``"group"`` (a boolean array with one column, ``f == "a"``). tests/persistence/test_model_files.py loads them with
today's mcal and compares the predictions.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

import mcal
from mcal._registry import get_method

HERE = Path(__file__).resolve().parent


def inputs() -> dict[str, np.ndarray]:
    """Scores, labels, a categorical column ``f`` and a numeric column ``x``; 600 rows."""
    rng = np.random.default_rng(20260101)
    p = rng.uniform(0.02, 0.98, 600)
    f = np.array(["a", "b", "c"])[rng.integers(0, 3, p.size)]
    x = rng.normal(size=p.size)
    shift = np.where(f == "a", 0.15, -0.05) + 0.05 * x
    y = (rng.uniform(size=p.size) < np.clip(p + shift, 0.0, 1.0)).astype(np.float64)
    return {"p": p, "y": y, "f": f, "x": x}


def make_X(kind: str | None, columns: list[str], data: dict[str, np.ndarray]):
    if kind is None:
        return None
    if kind == "group":
        return (data["f"] == "a")[:, None]
    frame = pd.DataFrame({c: data[c] for c in columns})
    if "f" in frame:
        frame["f"] = frame["f"].astype("category")
    return frame


NET = {"random_state": 0}
MCNET = {"field": "f", "n_bins": 5, "hidden_sizes": (8,), "embedding_dim": 2, "n_nodes": 10, "max_epochs": 2,
         "batch_size": 128, **NET}  # fmt: skip
#: NAME -> (method, parameters, X kind, X columns)
MODELS: dict[str, tuple[str, dict, str | None, list[str]]] = {
    "platt": ("platt", {}, None, []),
    "temperature": ("temperature", {}, None, []),
    "beta": ("beta", {}, None, []),
    "gaussian": ("gaussian", {}, None, []),
    "gamma": ("gamma", {}, None, []),
    "isotonic": ("isotonic", {}, None, []),
    "histogram": ("histogram", {"n_bins": 8}, None, []),
    "sir": ("sir", {"n_bins": 8}, None, []),
    "histogram_unfitted": ("histogram", {"n_bins": 5}, None, []),
    "mcgrad_no_x": ("mcgrad", {"n_jobs": 1, "early_stopping": None, "max_rounds": 2}, None, []),
    "mcgrad_x": ("mcgrad", {"n_jobs": 1, "early_stopping": None, "max_rounds": 3}, "frame", ["f", "x"]),
    "per_field_isotonic": ("per-field-isotonic", {"field": "f", "min_samples_per_field": 50}, "frame", ["f"]),
    "per_field_platt": (
        "per-field-isotonic",
        {"field": "f", "min_samples_per_field": 50, "calibrator": mcal.PlattScaling()},
        "frame",
        ["f"],
    ),
    "neucalib": ("neucalib", {"field": "f", "max_iter": 10, "min_samples_per_field": 50, **NET}, "frame", ["f"]),
    "neucalib_aux": (
        "neucalib",
        {"field": "f", "auxiliary_features": ("x",), "max_iter": 10, "min_samples_per_field": 50, **NET},
        "frame",
        ["f", "x"],
    ),
    "adacalib": ("adacalib", {"field": "f", "max_iter": 10, "min_samples_per_field": 50, **NET}, "frame", ["f"]),
    "mcnet": ("mcnet", MCNET, "frame", ["f"]),
    "mcnet_aux": ("mcnet", {**MCNET, "auxiliary_features": ("x",), "auxiliary_hidden_size": 4}, "frame", ["f", "x"]),
    "hkrr": ("hkrr", {"random_state": 0}, "group", []),
    "dfmc": ("dfmc", {"n_estimators": 3, "n_jobs": 1, "random_state": 0}, "group", []),
}


def main() -> None:
    import torch

    torch.set_num_threads(1)
    data = inputs()
    predictions, manifest = {}, {}
    for name, (method, params, kind, columns) in MODELS.items():
        model = get_method(method)(**params)
        X = make_X(kind, columns, data)
        if not name.endswith("_unfitted"):
            model.fit(data["p"], data["y"]) if X is None else model.fit(data["p"], data["y"], X=X)
            predictions[name] = model.predict(data["p"]) if X is None else model.predict(data["p"], X=X)
        mcal.save(model, HERE / f"{name}.json")
        manifest[name] = {"class": type(model).__name__, "X": kind, "columns": columns}
    np.savez_compressed(HERE / "inputs.npz", **data)
    np.savez_compressed(HERE / "predictions.npz", **predictions)
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
