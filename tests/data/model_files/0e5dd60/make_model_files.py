"""Write the multiclass model files in this folder with mcal at commit 0e5dd60 (before MulticlassMCGrad's rounds
re-centred the logits and its state gained ``input_factor_``, in 60ff64c).

Run from a copy of that commit's sources, single-threaded so that the fits are reproducible::

    mkdir /tmp/old0e5d && git archive 0e5dd60 src | tar -x -C /tmp/old0e5d
    OMP_NUM_THREADS=1 PYTHONPATH=/tmp/old0e5d/src python tests/data/model_files/0e5dd60/make_model_files.py

It fits a small model of each multiclass calibrator on small deterministic data (3 classes, 300 rows), saves each
with ``mcal.save`` as ``NAME.json``, and writes ``inputs.npz`` (scores, labels, the feature matrix) and
``predictions.npz`` (each model's predictions on those inputs, keyed by NAME). tests/persistence/test_model_files.py
loads them with today's mcal.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.special import softmax

import mcal
from mcal.multiclass import DirichletCalibration, MulticlassMCGrad, MulticlassTemperatureScaling, OneVsRestCalibrator

HERE = Path(__file__).resolve().parent


def inputs() -> dict[str, np.ndarray]:
    """Over-confident scores of 3 classes, labels with a planted bias of class 1 where ``X[:, 0] == 1``."""
    rng = np.random.default_rng(20261203)
    n = 300
    X = np.column_stack([rng.integers(0, 3, n), rng.normal(size=n)]).astype(float)
    logits = rng.normal(size=(n, 3)) * 1.5
    true = logits.copy()
    true[X[:, 0] == 1, 1] += 1.0
    y = (softmax(true, axis=1).cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    return {"p": softmax(1.5 * logits, axis=1), "y": y, "X": X}


#: Few, small rounds, so that the model file stays small.
TINY_MCGRAD = dict(early_stopping=None, max_rounds=3, n_estimators=3, max_leaves=3, min_child_samples=10, n_jobs=1)
MODELS = {
    "temperature": (MulticlassTemperatureScaling(), False),
    "dirichlet": (DirichletCalibration(), False),
    "ovr_platt": (OneVsRestCalibrator(method="platt"), False),
    "mcgrad": (MulticlassMCGrad(**TINY_MCGRAD, random_state=0), True),
}


def main() -> None:
    data = inputs()
    np.savez(HERE / "inputs.npz", **data)
    predictions = {}
    for name, (model, uses_x) in MODELS.items():
        X = data["X"] if uses_x else None
        model.fit(data["p"], data["y"], X=X)
        mcal.save(model, HERE / f"{name}.json")
        predictions[name] = model.predict(data["p"], X=X)
    np.savez(HERE / "predictions.npz", **predictions)


if __name__ == "__main__":
    main()
