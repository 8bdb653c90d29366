"""Importing the benchmark scripts (``benchmarks/<topic>/*.py``, never part of mcal) in the tests."""

import importlib
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
#: the folders of the benchmark scripts (benchmarks/<topic>/) and of their shared helpers (benchmarks/common/)
FOLDERS = sorted({str(path.parent) for path in BENCH.glob("*/*.py")})


def script(name: str):
    """A benchmark script or helper, imported from its folder of benchmarks/."""
    sys.path[:0] = FOLDERS
    try:
        return importlib.import_module(name)
    finally:
        for folder in FOLDERS:
            sys.path.remove(folder)


def run_all():
    """benchmarks/run_all.py, imported from its path (benchmarks/ itself is never put on sys.path)."""
    spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
