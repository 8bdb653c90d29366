"""Public names that moved into :mod:`mcal._shared`, kept for one release behind a ``DeprecationWarning``."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


def moved_names(module: str, moved: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that gives each name of ``moved`` (name -> its new dotted path) from its new
    home with a ``DeprecationWarning`` that names it; other names raise ``AttributeError`` as a module does."""

    def __getattr__(name: str) -> Any:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attr = moved[name].rpartition(".")
        warnings.warn(
            f"{module}.{name} is deprecated and will be removed in mcal 0.3: it is mcal's internal plumbing, now "
            f"{moved[name]} (private: it may change without notice)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(where), attr)

    return __getattr__
