"""Package-level promises: light import, a documented public API, the registry and the shipped data."""

import inspect
import subprocess
import sys

import pytest

import mcal
from mcal._registry import METHODS, class_by_name, get_method
from mcal.datasets import load_bank_marketing


def test_import_loads_no_heavy_optional_dependency():
    code = (
        "import sys, mcal, mcal.metrics, mcal.cli, mcal.plotting;"
        "heavy = [m for m in ('torch', 'lightgbm', 'matplotlib', 'dask', 'distributed', 'lleaves', 'llvmlite')"
        " if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", mcal.__all__ + [f"metrics.{n}" for n in mcal.metrics.__all__])
def test_public_objects_have_numpydoc_docstrings(name):
    obj = mcal
    for part in name.split("."):
        obj = getattr(obj, part)
    if not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 40, name
    if inspect.isfunction(obj) and inspect.signature(obj).parameters:
        assert "Parameters" in doc and "Returns" in doc, name


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_registered_method_resolves_and_loads_by_class_name(name):
    cls = get_method(name)
    assert issubclass(cls, mcal.BaseCalibrator)
    assert class_by_name(cls.__name__) is cls


def test_unknown_method_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="platt"):
        get_method("nope")


def test_shipped_bank_marketing_matches_its_source_counts():
    df = load_bank_marketing()
    assert df.shape == (45211, 17)
    assert int(df["y"].sum()) == 5289
