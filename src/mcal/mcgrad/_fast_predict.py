"""Faster paths for applying fitted MCGrad rounds: one row through LightGBM's C API, batches through lleaves.

Both give the values of ``Booster.predict(raw_score=True)`` (lleaves up to the order in which trees are summed);
:func:`mcal.mcgrad.engine.predict_logit` picks them when the estimator has them.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import tempfile
import threading
import weakref
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._lightgbm import has_linear_trees
from mcal._optional import import_optional

#: LightGBM major versions whose private C handles :class:`SingleRowPredictor` was tested with.
_FAST_PATH_LIGHTGBM = ("4",)
#: Rows per thread of a compiled batch predict (:class:`CompiledForests`).
_ROWS_PER_THREAD = 10_000


class SingleRowPredictor:
    """One-row prediction through LightGBM's C API fast path (``LGBM_BoosterPredictForMatSingleRowFast``).

    ``Booster.predict`` prepares a predictor from its parameters on every call; this prepares one
    configuration per booster once (why this path: ``benchmarks/results/mcgrad_defaults.md``). It reaches the C library through LightGBM's private ctypes handles (``lightgbm.basic._LIB``,
    ``_safe_call``, ``Booster._handle``), so :meth:`create` uses it only on the LightGBM major versions it was tested with
    (:data:`_FAST_PATH_LIGHTGBM`) and when the handles exist; otherwise it returns None and callers use
    ``Booster.predict`` (the tests check that both give the same values, and the fallback).
    """

    def __init__(self, lib: Any, safe_call: Any, boosters: list[Any], n_columns: int) -> None:
        self._lib, self._safe_call = lib, safe_call
        self._boosters = boosters  # the configurations point into them
        self._configs: list[ctypes.c_void_p] = []
        self._finalizer = weakref.finalize(self, _free_configs, lib, self._configs)
        raw_score, float64 = 1, 1  # C_API_PREDICT_RAW_SCORE, C_API_DTYPE_FLOAT64 in LightGBM's c_api.h
        for booster in boosters:
            config = ctypes.c_void_p()
            safe_call(
                lib.LGBM_BoosterPredictForMatSingleRowFastInit(
                    booster._handle,
                    ctypes.c_int(raw_score),
                    ctypes.c_int(0),
                    ctypes.c_int(-1),
                    ctypes.c_int(float64),
                    ctypes.c_int32(n_columns),
                    ctypes.c_char_p(b"num_threads=1"),
                    ctypes.byref(config),
                )
            )
            self._configs.append(config)
        self._out = np.empty(1, dtype=np.float64)
        self._out_ptr = self._out.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        self._out_len = ctypes.c_int64()
        self._lock = threading.Lock()  # the configurations and the output buffer are not thread-safe

    @classmethod
    def create(cls, boosters: list[Any], n_columns: int) -> SingleRowPredictor | None:
        """The predictor, or None if this LightGBM does not expose the handles it needs."""
        lgb = import_optional("lightgbm")
        if lgb.__version__.split(".")[0] not in _FAST_PATH_LIGHTGBM:
            return None
        lib, safe_call = getattr(lgb.basic, "_LIB", None), getattr(lgb.basic, "_safe_call", None)
        if lib is None or safe_call is None or not all(hasattr(b, "_handle") for b in boosters):
            return None
        return cls(lib, safe_call, boosters, n_columns)

    def predict_logit(self, factors: NDArray[np.float64], row: NDArray[np.float64], F: float) -> float:
        """Apply every round to one C-contiguous float64 row whose last entry is the score slot."""
        data = row.ctypes.data_as(ctypes.c_void_p)
        with self._lock:
            for config, theta in zip(self._configs, factors, strict=False):
                row[-1] = F
                self._safe_call(
                    self._lib.LGBM_BoosterPredictForMatSingleRowFast(
                        config, data, ctypes.byref(self._out_len), self._out_ptr
                    )
                )
                F = float(theta) * (F + self._out[0])
        return F


def _free_configs(lib: Any, configs: list[ctypes.c_void_p]) -> None:
    for config in configs:
        lib.LGBM_FastConfigFree(config)


class CompiledForests:
    """The boosters of the fitted rounds compiled to native code by lleaves, for batch prediction.

    lleaves [1]_ (``lleaves.Model(model_file).compile(raw_score=True)``) turns a LightGBM model file into
    machine code through llvmlite, with the same trees (it sums them in another order, so values agree to
    about 1e-15 per round; speed: ``benchmarks/results/mcgrad_defaults.md``). Each
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
