"""Where MCGrad's fit spends its time outside LightGBM's training (issue #20: the share inside training).

The data of ``dask_scale.py`` (2 string categoricals, 8 numerical features, a base score and labels), then
``MCGrad(random_state=0, n_jobs=1)`` at its defaults (holdout early stopping, then the refit) fitted on it, after a
small fit that imports what the fit uses. Timers wrap the functions below and charge each call its own time, less
that of the wrapped calls inside it: LightGBM's tree building (``Booster.update``), the rest of ``lightgbm.train``
(booster set-up, the validation sets, whose scores LightGBM keeps tree by tree), LightGBM's binning
(``Dataset.construct``: the features once, each round's score columns), the rest of a round
(``LocalEngine.fit_round``: the round's subsets of the binned features joined with its score column, the scores
read back, the reload of the booster from its text), the rest of binning the features once
(``LocalEngine.bin_features``: LightGBM's row sampling from blocks), encoding features
(``FeatureEncoder.transform``), rows predicted again (``LocalEngine.predict_raw``: logits too far out to read back;
an external eval_set), the rescaling factors (``rescale_factor``); "other" is the rest of the fit (checks, the
split, the validation losses). ``in_lgb_train`` is the share of the fit inside ``lightgbm.train``, the measure of
``mcgrad_vs_reference.py``; ``in_lgb_train_or_binning`` adds LightGBM's binning, which the reference runs inside
``lightgbm.train`` each round.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/mcgrad/mcgrad_profile.py [--rows 100000] [--quick] [--render]

Writes ``benchmarks/results/mcgrad_profile.md`` and ``.csv`` (``--out-dir`` elsewhere; ``--quick``: 5,000 rows, to a
temporary folder); ``--render`` rewrites the ``.md`` from the ``.csv``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dask"))
import _common as C
from dask_scale import FEATURES, synthetic


class Timers:
    """Own time of each wrapped function: its calls' wall time less that of wrapped calls inside them."""

    def __init__(self) -> None:
        self.own: dict[str, float] = defaultdict(float)
        self._inner: list[float] = []

    def wrap(self, owner, name: str, label: str) -> None:
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            self._inner.append(0.0)
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                self.own[label] += elapsed - self._inner.pop()
                if self._inner:
                    self._inner[-1] += elapsed

        setattr(owner, name, timed)


TREES = "LightGBM trees (Booster.update)"
TRAIN_REST = "rest of lightgbm.train (booster set-up, validation sets)"
BINNING = "LightGBM binning (Dataset.construct)"


def instrument(timers: Timers) -> None:
    import lightgbm

    import mcal.mcgrad.engine as engine
    from mcal._features.encoder import FeatureEncoder

    timers.wrap(lightgbm.basic.Booster, "update", TREES)
    timers.wrap(lightgbm, "train", TRAIN_REST)
    timers.wrap(lightgbm.Dataset, "construct", BINNING)
    timers.wrap(engine.LocalEngine, "fit_round", "rest of a round (subsets, joins, scores read back, reload)")
    timers.wrap(engine.LocalEngine, "bin_features", "rest of binning the features once")
    timers.wrap(FeatureEncoder, "transform", "encode features")
    timers.wrap(engine.LocalEngine, "predict_raw", "predict rows again (far logits; an external eval_set)")
    timers.wrap(engine, "rescale_factor", "rescaling factors")


def measure(rows: int) -> pd.DataFrame:
    import mcal

    frame, small = synthetic(rows, seed=1), synthetic(2_000, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcal.CalibrationWarning)
        mcal.MCGrad(max_rounds=1, random_state=0, n_jobs=1).fit(small["p"], small["y"], X=small[FEATURES])
        timers = Timers()
        instrument(timers)
        start = time.perf_counter()
        model = mcal.MCGrad(random_state=0, n_jobs=1).fit(frame["p"], frame["y"], X=frame[FEATURES])
        fit_s = time.perf_counter() - start
    own = dict(timers.own)
    own["other (checks, split, validation losses)"] = fit_s - sum(own.values())
    in_train = own[TREES] + own[TRAIN_REST]
    table = pd.DataFrame({"part": list(own), "seconds": list(own.values())})
    table["share"] = table["seconds"] / fit_s
    table["rows"], table["rounds"], table["fit_s"] = rows, model.n_rounds_, fit_s
    table["in_lgb_train"], table["in_lgb_train_or_binning"] = in_train / fit_s, (in_train + own[BINNING]) / fit_s
    return table


#: The results file's text after its header: what is measured, then the table.
sections = C.docstring_sections(__doc__, digits=3)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    C.add_output_options(parser)
    args = parser.parse_args(argv)
    if args.render:
        C.render_results("mcgrad_profile", sections, args.out_dir or C.RESULTS)
        return 0
    rows = 5_000 if args.quick else args.rows
    load = os.getloadavg()[0]
    table = measure(rows)
    head = C.run_header("MCGrad's fit time outside LightGBM's training", [0], {
        "mode": "quick" if args.quick else "full", "rows": f"{rows:,}", "threads": f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; n_jobs=1",
        "load average": f"{load:.1f} at start, {os.getloadavg()[0]:.1f} at end (a shared machine: timings are noisy)",
    })  # fmt: skip
    name = "mcgrad_profile_quick" if args.quick else "mcgrad_profile"
    C.write_results(name, head, sections(table), table, C.out_dir_of(args, name))
    print(C.md_table(table, digits=3))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
