"""The one place where optional dependencies are imported, and the lazy attributes of mcal's packages.

Every module that needs lightgbm, lleaves, torch, matplotlib, safetensors, tqdm or dask calls
:func:`import_optional` inside the function that needs it, so that ``import mcal`` loads none of them.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from types import ModuleType
from typing import Any

# import name -> (pip extra of mcal that provides it, pip distribution name)
_EXTRAS: dict[str, tuple[str, str]] = {
    "lightgbm": ("mcgrad", "lightgbm"),
    "torch": ("mcnet", "torch"),
    "safetensors": ("mcnet", "safetensors"),
    "safetensors.numpy": ("mcnet", "safetensors"),
    "matplotlib": ("plot", "matplotlib"),
    "matplotlib.pyplot": ("plot", "matplotlib"),
    "matplotlib.figure": ("plot", "matplotlib"),
    "tqdm": ("progress", "tqdm"),
    "tqdm.auto": ("progress", "tqdm"),
    "dask": ("dask", "dask[distributed]"),
    "dask.array": ("dask", "dask[distributed]"),
    "dask.dataframe": ("dask", "dask[distributed]"),
    "distributed": ("dask", "dask[distributed]"),
    "lightgbm.dask": ("dask", "dask[distributed]"),
    "lleaves": ("compiled", "lleaves"),
}


def import_optional(name: str) -> ModuleType:
    """Import an optional dependency, or explain how to install it.

    Parameters
    ----------
    name : str
        Importable module name, e.g. ``"torch"`` or ``"matplotlib.pyplot"``.

    Returns
    -------
    module : ModuleType
        The imported module.

    Raises
    ------
    ImportError
        If the module is not installed; the message names the mcal extra that provides it.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        extra, dist = _EXTRAS.get(name, ("all", name.split(".")[0]))
        raise ImportError(
            f"{name!r} is required for this feature but is not installed; "
            f"install it with `pip install 'mcal[{extra}]'` (or `pip install {dist}`)"
        ) from exc


def is_available(name: str) -> bool:
    """Return whether an optional dependency can be imported, without importing it.

    Parameters
    ----------
    name : str
        Top-level module name.

    Returns
    -------
    available : bool
    """
    return importlib.util.find_spec(name) is not None


def lazy_attributes(package: str, attributes: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module-level ``__getattr__`` and ``__dir__`` that import each attribute on first use.

    As scikit-learn and scipy do: the package's ``__init__`` stays light, while ``package.NAME``, ``from package
    import NAME`` and ``dir(package)`` work as if it imported them.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    attributes : dict of str to str
        Attribute name -> the module that defines it (the attribute is that module itself when its name is the
        module's last part, e.g. ``"metrics": "mcal.metrics"``).

    Returns
    -------
    __getattr__, __dir__ : callable
    """
    module = importlib.import_module(package)

    def __getattr__(name: str) -> Any:
        if name not in attributes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        owner = importlib.import_module(attributes[name])
        value = owner if attributes[name] == f"{package}.{name}" else getattr(owner, name)
        setattr(module, name, value)  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *attributes})

    return __getattr__, __dir__
