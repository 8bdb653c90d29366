"""One-row prediction through LightGBM's C API fast path, the one place in mcal that touches LightGBM's private
ctypes handles (``lightgbm.basic._LIB``, ``_safe_call``, ``Booster._handle``)."""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._optional import import_optional

#: LightGBM major versions whose private C handles :class:`SingleRowPredictor` was tested with.
_FAST_PATH_LIGHTGBM = ("4",)


class SingleRowPredictor:
    """One-row prediction through LightGBM's C API fast path (``LGBM_BoosterPredictForMatSingleRowFast``).

    ``Booster.predict`` prepares a predictor from its parameters on every call; this prepares one
    configuration per booster once (why this path: ``docs/defaults/mcgrad.rst``). It reaches the C library through LightGBM's private ctypes handles (``lightgbm.basic._LIB``,
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
