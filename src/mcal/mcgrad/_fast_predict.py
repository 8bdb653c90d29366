"""The faster path for applying fitted MCGrad rounds to batches: lleaves (one row goes through LightGBM's C API,
:class:`mcal._lightgbm.SingleRowPredictor`).

Both give the values of ``Booster.predict(raw_score=True)`` (lleaves up to the order in which trees are summed);
:func:`mcal.mcgrad.engine.predict_logit` picks them when the estimator has them.
"""

from __future__ import annotations

import importlib.metadata
import os
import tempfile
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._lightgbm import has_linear_trees
from mcal._optional import import_optional

#: Rows per thread of a compiled batch predict (:class:`CompiledForests`).
_ROWS_PER_THREAD = 10_000


class CompiledForests:
    """The boosters of the fitted rounds compiled to native code by lleaves, for batch prediction.

    lleaves [1]_ (``lleaves.Model(model_file).compile(raw_score=True)``) turns a LightGBM model file into
    machine code through llvmlite, with the same trees (it sums them in another order, so values agree to
    about 1e-15 per round; speed: ``docs/defaults/mcgrad.rst``). Each
    booster's text goes through a temporary file that is deleted once compiled; lleaves' on-disk cache is
    never used (loading a cached object file runs its code, like unpickling).

    One-row calls are left to :class:`SingleRowPredictor`. Compiled forests belong to the process
    that built them: they are neither pickled nor saved.

    Parameters
    ----------
    models : list of lleaves.Model
        The compiled model of each round.
    n_jobs : int
        Most threads of one batch predict.

    References
    ----------
    .. [1] S. Boehm, lleaves: a LLVM-based compiler for LightGBM decision trees,
       https://github.com/siboehm/lleaves (version 1.3).
    """

    def __init__(self, models: list[Any], n_jobs: int) -> None:
        self._models = models
        self.n_jobs = n_jobs

    @classmethod
    def compile(cls, boosters: list[Any], n_jobs: int) -> CompiledForests:
        """Compile every booster with lleaves.

        Raises
        ------
        ImportError
            If lleaves is not installed, or cannot compile with the installed llvmlite (0.45 removed
            ``PassManagerBuilder``, which lleaves 1.3 uses: https://github.com/siboehm/lleaves/issues/95).
        ValueError
            If a booster has linear trees (LightGBM's ``linear_tree``), which lleaves does not evaluate, or
            model text that lleaves rejects (a hand-edited model file that LightGBM accepts).
        """
        lleaves = import_optional("lleaves")
        models = []
        with tempfile.TemporaryDirectory(prefix="mcal-lleaves-") as folder:
            for t, booster in enumerate(boosters):
                text = booster.model_to_string()
                if has_linear_trees(text):
                    raise ValueError(
                        f"boosters_[{t}] must have constant leaves to be compiled; got linear trees "
                        "(lightgbm_params linear_tree=True), which lleaves does not evaluate"
                    )
                path = os.path.join(folder, f"round_{t}.txt")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
                try:
                    model = lleaves.Model(model_file=path)
                    model.compile(raw_score=True)
                except (AssertionError, LookupError, RuntimeError, TypeError, ValueError) as exc:
                    # lleaves checks the text with assert (and llvmlite rejects the code of a split that does
                    # not fit its feature); model files that LightGBM accepts can still fail here.
                    raise ValueError(
                        f"boosters_[{t}] must be LightGBM model text that lleaves {_version('lleaves')} can compile; "
                        f"got text that lleaves rejected ({type(exc).__name__}: {str(exc)[:200] or 'no message'})"
                    ) from exc
                except AttributeError as exc:
                    if "PassManagerBuilder" not in str(exc):
                        raise
                    raise ImportError(
                        f"lleaves {_version('lleaves')} cannot compile with llvmlite {_version('llvmlite')}: "
                        "llvmlite 0.45 removed PassManagerBuilder, which lleaves up to 1.3 uses "
                        "(https://github.com/siboehm/lleaves/issues/95); install llvmlite<0.45, "
                        "e.g. with `pip install 'mcal[compiled]'`"
                    ) from exc
                models.append(model)
        return cls(models, n_jobs)

    def predict_raw(self, t: int, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Raw output of round ``t`` on a float64 ``X``, as ``Booster.predict(raw_score=True)`` (C order avoids a copy)."""
        # lleaves starts a thread pool per call with n_jobs > 1: not worth it below _ROWS_PER_THREAD rows a thread
        threads = max(1, min(self.n_jobs, X.shape[0] // _ROWS_PER_THREAD))
        return self._models[t].predict(X, n_jobs=threads)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"
