"""Package-level promises: light import, a documented public API, the registry and the shipped data."""

import dataclasses
import inspect
import subprocess
import sys

import pytest

import mcal
import mcal.multiclass
from mcal._registry import METHODS, class_by_name, get_method
from mcal.datasets import load_bank_marketing


def test_import_loads_no_heavy_optional_dependency():
    code = (
        "import sys, mcal, mcal.metrics, mcal.cli, mcal.plotting, mcal.monitor, mcal.multiclass;"
        "heavy = [m for m in ('torch', 'lightgbm', 'matplotlib', 'dask', 'distributed', 'lleaves', 'llvmlite')"
        " if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    "name",
    mcal.__all__
    + [f"metrics.{n}" for n in mcal.metrics.__all__]
    + [f"multiclass.{n}" for n in mcal.multiclass.__all__],
)
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


def _public_callables():
    """Every public function and class, and the public methods mcal defines on the public classes."""
    import mcal.dask
    import mcal.datasets
    import mcal.monitor
    import mcal.plotting
    import mcal.report

    modules = [
        (mcal, mcal.__all__),
        (mcal.metrics, mcal.metrics.__all__),
        (mcal.segments, mcal.segments.__all__),
        (mcal.dask, mcal.dask.__all__),
        (mcal.dask.metrics, mcal.dask.metrics.__all__),
        (mcal.monitor, mcal.monitor.__all__),
    ]
    for mod in (mcal.report, mcal.plotting, mcal.datasets):
        modules.append(
            (
                mod,
                [
                    n
                    for n, o in vars(mod).items()
                    if not n.startswith("_") and inspect.isfunction(o) and o.__module__ == mod.__name__
                ],
            )
        )
    out = {}
    for mod, names in modules:
        for n in names:
            obj = getattr(mod, n)
            if inspect.isfunction(obj) or (inspect.isclass(obj) and not issubclass(obj, BaseException)):
                out[f"{mod.__name__}.{n}"] = obj
    for obj in [o for o in out.values() if inspect.isclass(o)]:
        for n, attr in vars(obj).items():
            func = attr.__func__ if isinstance(attr, (classmethod, staticmethod)) else attr
            if not n.startswith("_") and inspect.isfunction(func):
                out[f"{obj.__module__}.{func.__qualname__}"] = func
    return out


#: constructors that are not public: BaseEstimator's (*args, **kwargs), and Segments' internal parts
_INTERNAL_SIGNATURES = {"mcal.BaseCalibrator", "mcal.segments.Segments"}


def _validates(obj) -> bool:
    """Whether the body raises ValueError/TypeError or calls a ``check_*`` validator (one level, no recursion)."""
    import ast
    import textwrap

    if inspect.isclass(obj):
        hook = vars(obj).get("_validate_params_values")
        return hook is not None and _validates(hook)
    tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    for node in ast.walk(tree.body[0]):
        if (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name)
            and node.exc.func.id in ("ValueError", "TypeError")
        ):
            return True
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name.lstrip("_").startswith("check_"):
                return True
    return False


@pytest.mark.parametrize("name", sorted(_public_callables()))
def test_public_docstrings_document_every_argument_and_what_validation_raises(name):
    docscrape = pytest.importorskip("numpydoc.docscrape")
    obj = _public_callables()[name]
    doc = docscrape.NumpyDocString(inspect.getdoc(obj) or "")
    if name not in _INTERNAL_SIGNATURES:
        target = obj.__init__ if inspect.isclass(obj) else obj
        arguments = [p for p in inspect.signature(target).parameters if p not in ("self", "cls")]
        entries = doc["Parameters"] + doc["Other Parameters"]
        if dataclasses.is_dataclass(obj):  # result classes document their fields as Attributes
            entries = doc["Attributes"]
        documented = {n.strip().lstrip("*") for p in entries for n in p.name.split(",")}
        assert set(arguments) - documented == set(), f"{name}: undocumented arguments"
        assert documented - set(arguments) == set(), f"{name}: documented arguments that it does not take"
    if _validates(obj):
        assert doc["Raises"], f"{name} validates its arguments but has no Raises section"
