"""Generate tests/data/mce_reference.json: multicalibration errors computed by the reference package.

Run once, from the repository root, in an environment with ``mcgrad`` installed:

    PYTHONPATH=src python tests/data/make_mce_reference.py

The data are seeded and stored in the fixture itself, so the test does not depend on this script or on numpy's
random streams. The reference is ``mcgrad.metrics.MulticalibrationError`` (Guy et al. 2025) with
``precision_dtype="float64"`` and no cap on the number of segments. Each reference segment is matched to a
segment of ``mcal.segments.generate_segments`` by its set of rows, and stored under mcal's description; a
reference segment without a match aborts the script.
"""

from __future__ import annotations

import datetime
import json
import platform
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from mcgrad.metrics import MulticalibrationError

from mcal.segments import generate_segments

SEED = 20250604
N_SAMPLES = 1500
CATEGORICAL = ["job", "contact"]
NUMERICAL = ["age", "visits"]
CASES = [
    {"name": "depth3_unweighted", "weighted": False, "max_depth": 3, "min_samples_per_segment": 10},
    {"name": "depth2_weighted", "weighted": True, "max_depth": 2, "min_samples_per_segment": 25},
    {"name": "global_only", "weighted": True, "max_depth": 0, "min_samples_per_segment": 10},
]


def make_data(rng: np.random.Generator) -> pd.DataFrame:
    """Four features (a categorical with a collapsed tail, a binary, a binned numeric with missing values,
    a numeric with three distinct values), distinct scores, and labels miscalibrated where job == "admin"."""
    n = N_SAMPLES
    job = rng.choice(["admin", "technician", "services", "retired", "student"], n, p=[0.35, 0.25, 0.2, 0.12, 0.08])
    age = np.round(rng.normal(45, 12, n), 1)
    age[rng.random(n) < 0.06] = np.nan
    score = rng.uniform(0.02, 0.98, n)
    true = np.clip(score + 0.08 * (job == "admin") - 0.03, 0, 1)
    return pd.DataFrame(
        {
            "job": job,
            "contact": rng.choice(["cellular", "telephone"], n, p=[0.6, 0.4]),
            "age": age,
            "visits": rng.integers(0, 3, n).astype(float),
            "y_prob": score,
            "y_true": (rng.random(n) < true).astype(int),
            "weight": rng.choice([0.5, 1.0, 2.0, 3.0], n),
        }
    )


def _row_key(rows: np.ndarray) -> bytes:
    return np.sort(rows).astype(np.int64).tobytes()


def reference_case(df: pd.DataFrame, case: dict) -> dict:
    depth = case["max_depth"]
    ref = MulticalibrationError(
        df,
        label_column="y_true",
        score_column="y_prob",
        weight_column="weight" if case["weighted"] else None,
        categorical_segment_columns=CATEGORICAL if depth else None,
        numerical_segment_columns=NUMERICAL if depth else None,
        max_depth=depth,
        min_samples_per_segment=case["min_samples_per_segment"],
        max_n_segments=None,
        precision_dtype="float64",
    )
    ecce, ecce_sigma, pvalue = ref.segments_ecce, ref.segments_ecce_sigma, ref.segments_ecce_pvalue
    sigma = ref._segments_ecce_std  # the per-segment scale has no public accessor
    ours = generate_segments(
        df[CATEGORICAL + NUMERICAL], max_depth=depth,
        min_samples_per_segment=case["min_samples_per_segment"], max_n_segments=None,
    )  # fmt: skip
    by_rows = {_row_key(ours.indices(k)): d for k, d in enumerate(ours.descriptions)}
    original = ref.df["index"].to_numpy()  # the reference sorts the frame by score; this maps back
    masks = ref._segments[0].reshape(-1, len(df))[: ref.total_number_segments]
    per_segment = {}
    for k, mask in enumerate(masks):
        description = by_rows[_row_key(original[mask])]  # KeyError: a segment mcal does not generate
        per_segment[description] = [float(ecce[k]), float(sigma[k]), float(ecce_sigma[k]), float(pvalue[k])]
    if len(per_segment) != ours.n_segments:
        raise RuntimeError(f"{case['name']}: mcgrad has {len(per_segment)} segments, mcal {ours.n_segments}")
    return {
        **case,
        "mce_sigma": float(ref.mce_sigma),
        "mce_absolute": float(ref.mce),
        "mce_relative_percent": float(ref.mce_relative),
        "pvalue": float(ref.mce_pvalue),
        "mde": float(ref.mde),
        "global_ecce": float(ref.global_ecce),
        "global_ecce_sigma": float(ref.global_ecce_sigma),
        "segments": per_segment,
    }


def main() -> None:
    df = make_data(np.random.default_rng(SEED))
    fixture = {
        "provenance": {
            "reference": f"mcgrad {version('mcgrad')} mcgrad.metrics.MulticalibrationError, precision_dtype=float64",
            "script": "tests/data/make_mce_reference.py",
            "seed": SEED,
            "generated": datetime.date.today().isoformat(),
            "versions": {k: version(k) for k in ("numpy", "pandas")} | {"python": platform.python_version()},
            "segment_values": "[ecce (absolute), sigma, ecce / sigma, p-value] keyed by mcal's description",
        },
        "data": {c: [None if pd.isna(v) else v for v in df[c].tolist()] for c in df.columns},
        "cases": [reference_case(df, case) for case in CASES],
    }
    path = Path(__file__).with_name("mce_reference.json")
    path.write_text(json.dumps(fixture, indent=1) + "\n")


if __name__ == "__main__":
    main()
