"""Package-level promises: light import, a documented public API, the registry and the shipped data."""

import ast
import dataclasses
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import mcal
import mcal.multiclass
from mcal._registry import METHODS, class_by_name, get_method
from mcal.datasets import load_bank_marketing


def _loaded_by(code: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after running ``code`` (a SystemExit is caught)."""
    probe = f"import sys\ntry:\n    {code}\nexcept SystemExit:\n    pass\n"
    probe += f"print([m for m in {modules!r} if m in sys.modules], file=sys.stderr)"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return ast.literal_eval(run.stderr.strip().splitlines()[-1])


@pytest.mark.slow
def test_import_loads_no_heavy_optional_dependency():
    code = "import mcal, mcal.metrics, mcal.cli, mcal.plotting, mcal.monitor, mcal.multiclass"
    heavy = ("torch", "lightgbm", "matplotlib", "dask", "distributed", "lleaves", "llvmlite")
    assert _loaded_by(code, heavy) == []


@pytest.mark.parametrize(
    "code",
    [
        "import mcal",
        "from mcal.cli import main; main(['--help'])",
        "from mcal.cli import main; main(['--version'])",
        "from mcal.cli import main; main(['fit', '--help'])",
    ],
    ids=["import", "help", "version", "fit-help"],
)
def test_import_and_help_load_neither_pandas_nor_scikit_learn(code):
    # mcal --help and --version took 5 s when every command imported pandas, scipy and scikit-learn
    heavy = ("pandas", "sklearn", "scipy", "lightgbm", "torch", "numpy", "narwhals", "matplotlib", "dask")
    assert _loaded_by(code, heavy) == []


@pytest.mark.slow
def test_lazy_attributes_behave_as_imported_ones():
    code = (
        "import mcal\n"
        "assert set(mcal.__all__) <= set(dir(mcal)), set(mcal.__all__) - set(dir(mcal))\n"
        "from mcal import MCGrad, metrics, save\n"
        "from mcal.mcgrad import MCGrad as owner\n"
        "assert MCGrad is owner is mcal.MCGrad and metrics.mce is mcal.metrics.mce and save is mcal._persistence.save\n"
        "try:\n    mcal.nope\nexcept AttributeError as exc:\n    print(exc)\n"
        # every public subpackage after a bare `import mcal`, as its API page names it
        "import sys\n"
        "assert 'mcal.multiclass' not in sys.modules\n"
        "assert mcal.multiclass.MCGrad.__name__ == 'MulticlassMCGrad'\n"
        "for name in ('dask', 'datasets', 'field', 'groups', 'mcgrad', 'mcnet', 'monitor', 'plotting', 'report',\n"
        "             'venn_abers'):\n"
        "    assert getattr(mcal, name).__name__ == 'mcal.' + name and name in dir(mcal)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "module 'mcal' has no attribute 'nope'"


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
        (mcal.plotting, mcal.plotting.__all__),
    ]
    for mod in (mcal.report, mcal.datasets):
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


def _raises_its_own(obj) -> bool:
    """Whether the body raises ValueError/TypeError itself (one level, no recursion), or the class declares
    parameter rules. The errors of the shared validators (``check_*`` and ``validate_params``) are stated once, on
    the errors page of the user guide, not in each Raises section."""
    import ast
    import textwrap

    if inspect.isclass(obj):
        return bool(getattr(obj, "_parameter_constraints", None))
    tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    for node in ast.walk(tree.body[0]):
        if (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name)
            and node.exc.func.id in ("ValueError", "TypeError")
        ):
            return True
    return False


def _public_estimators():
    from sklearn.base import BaseEstimator

    import mcal.multiclass
    import mcal.regression

    objects = dict(_public_callables())
    for mod in (mcal.multiclass, mcal.regression):
        objects.update({f"{mod.__name__}.{n}": getattr(mod, n) for n in mod.__all__})
    bases = (mcal.BaseCalibrator, mcal.multiclass.MulticlassCalibrator)
    return {
        name: obj
        for name, obj in objects.items()
        if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and obj not in bases
    }


@pytest.mark.parametrize("name", sorted(_public_estimators()))
def test_every_public_estimator_declares_the_rule_of_each_parameter(name):
    # the base class (or, for CalibratedClassifier, fit) checks the table; an entry per parameter, and no other
    cls = _public_estimators()[name]
    assert set(cls._parameter_constraints) == set(cls._get_param_names()), name


@pytest.mark.parametrize("name", sorted(_public_callables()))
def test_public_docstrings_document_every_argument_and_what_they_raise_of_their_own(name):
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
    if _raises_its_own(obj):
        assert doc["Raises"], f"{name} raises errors of its own but has no Raises section"


def _private_imports_across_packages(root):
    """``(module, imported module, private parts)`` for every import in ``root`` (the mcal source folder) of a private module or a private
    name of another package: the package of ``mcal.B.x`` is ``B`` (a top-level module such as ``_validation`` is a
    package of its own), and the module or name is private when a part after ``B`` begins with an underscore."""
    import ast

    found = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module = parts[:-1] if is_package else parts
        own = module[1] if len(module) > 1 else ""  # the package of the module itself
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [(alias.name.split("."), []) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = module if is_package else module[:-1]
                target = base[: len(base) - node.level + 1] if node.level else []
                targets = [(target + (node.module or "").split(".") * bool(node.module), [a.name for a in node.names])]
            else:
                continue
            for target, names in targets:
                if target[0] != "mcal" or len(target) < 2 or target[1] == own:
                    continue
                private = [p for p in target[2:] if p.startswith("_")]
                private += [n for n in names if n.startswith("_") and not n.startswith("__")]
                if private:
                    found.append((".".join(module), ".".join(target), private))
    return found


@pytest.mark.slow
def test_no_private_import_across_packages():
    """A module of package A never imports a private module or name of package B (``mcal.B._x``, or ``_name``
    from B): what several packages share lives in a private package of its own below them (``mcal._shared``,
    ``mcal._features``, ...), whose modules they import by their public names. import-linter keeps the
    layers (``lint-imports``, configured in pyproject.toml); it sees modules, not names, hence this walk."""
    root = Path(mcal.__file__).parent
    assert _private_imports_across_packages(root) == []


def test_private_import_walk_finds_each_kind(tmp_path):
    root = tmp_path / "mcal"
    (root / "a").mkdir(parents=True)
    (root / "a" / "__init__.py").write_text("from mcal.b._x import f\nfrom . import _own\nfrom mcal.c import _g\n")
    (root / "a" / "m.py").write_text("import mcal.b._y\nfrom ..b import _h\nfrom .._v import ok\nfrom ._w import k\n")
    found = _private_imports_across_packages(root)
    assert found == [
        ("mcal.a", "mcal.b._x", ["_x"]),
        ("mcal.a", "mcal.c", ["_g"]),
        ("mcal.a.m", "mcal.b._y", ["_y"]),
        ("mcal.a.m", "mcal.b", ["_h"]),
    ]


#: The public names that moved into private homes in mcal 0.2, each kept until 0.3 behind a DeprecationWarning.
_MOVED = {
    "mcal.metrics.helpers": {
        "ECCE_SIGMA_CHANGED": "mcal._shared.brownian",
        "brownian_range_sf": "mcal._shared.brownian",
        "check_bins": "mcal._constraints",
        "check_categorical_use": "mcal._shared.segments",
        "check_open_unit": "mcal._constraints",
        "encode_field": "mcal._features.fields",
        "join_successive_differences": "mcal._shared.walks",
        "mce_result": "mcal._shared.mce",
        "resolve_segments": "mcal._shared.segments",
        "sigma_scale": "mcal._shared.brownian",
        "successive_difference_parts": "mcal._shared.walks",
        "walk_extremes": "mcal._shared.walks",
    },
    "mcal.monitor": {
        **dict.fromkeys(("LOG_LR_COLUMNS", "MONITOR_CONSTRAINTS", "monitor_result"), "mcal._monitoring.windows"),
        **dict.fromkeys(("summarize_window", "summary_columns"), "mcal._monitoring.windows"),
        # deprecated once the command line stopped reading them here
        **dict.fromkeys(("parse_times", "window_starts"), "mcal._monitoring.windows"),
    },
    "mcal.plotting": {"plain_text": "mcal._shared.text"},
    "mcal.report": {
        "PVALUE_FLOOR": "mcal._shared.brownian",
        "findings_note": "mcal._shared.text",
        "p_equals": "mcal._shared.text",
    },
    "mcal.dask": {"check_parquet_path": "mcal._shared.parquet"},
    "mcal.mcnet": {"balance_penalty": "mcal._torch", "torch_device": "mcal._torch"},
}


@pytest.mark.parametrize("module, name", [(m, n) for m, names in _MOVED.items() for n in names])
def test_a_moved_public_name_still_resolves_with_a_warning_that_names_its_new_home(module, name):
    import importlib

    home = _MOVED[module][name]
    old = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{module}\.{name} is deprecated .* now {home}\.{name} "):
        moved = getattr(old, name)
    assert moved is getattr(importlib.import_module(home), name)
    assert name not in getattr(old, "__all__", [])  # no longer documented, nor star-imported


def test_no_mcal_module_imports_a_moved_name_from_its_old_home():
    # the CLI prints every warning: mcal's own code reads each moved name from its new home, so none warns
    import ast

    root = Path(mcal.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in _MOVED:
                found += [(str(path.relative_to(root)), a.name) for a in node.names if a.name in _MOVED[node.module]]
    assert found == []


def test_a_module_with_moved_names_still_refuses_unknown_ones():
    import mcal.dask
    import mcal.mcnet
    import mcal.metrics.helpers
    import mcal.monitor
    import mcal.plotting
    import mcal.report

    for module in (mcal.metrics.helpers, mcal.monitor, mcal.plotting, mcal.report, mcal.dask, mcal.mcnet):
        with pytest.raises(AttributeError, match=f"module '{module.__name__}' has no attribute 'nope'"):
            module.nope  # noqa: B018


def test_import_layers_hold():
    """The layer contract of pyproject.toml ([tool.importlinter]): an arrow never points up."""
    pytest.importorskip("importlinter", reason="import-linter is in the test dependency group")
    code = (
        "import sys; from importlinter.cli import lint_imports;"
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert out.returncode == 0, out.stdout[-3000:]


def _deferred_imports_of(package: Path, prefix: str) -> list[str]:
    """``file:line`` of every import of a module named ``prefix...`` that a module of ``package`` makes below its
    top level (inside a function, a class or a condition)."""
    found = []
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])  # fmt: skip
            if id(node) not in top and any(name.startswith(prefix) for name in names):
                found.append(f"{path.name}:{node.lineno}")
    return found


def test_the_command_line_defers_no_import_of_its_own_modules(tmp_path):
    """The modules of mcal.cli import each other at their top, in the layers of pyproject.toml's contract; a
    function-level import is kept for heavy dependencies (``mcal --help`` stays fast), never to close a ring of
    modules (issue 31: six deferred imports closed one)."""
    assert _deferred_imports_of(Path(mcal.__file__).parent / "cli", "mcal.cli") == []
    (tmp_path / "a.py").write_text(
        "from mcal.cli import _b\n\n\ndef f():\n    from mcal.cli._c import g\n    import pandas\n"
    )
    assert _deferred_imports_of(tmp_path, "mcal.cli") == ["a.py:5"]


def test_the_version_is_the_one_the_docs_speak_of():
    # issue 32: the docs said "Changed in 0.2" while mcal --version printed 0.1.0
    import re
    from pathlib import Path

    import mcal

    root = Path(__file__).parents[2]
    declared = re.search(r'^version = "([^"]+)"', (root / "pyproject.toml").read_text(), re.M).group(1)
    assert mcal.__version__ == declared, "reinstall mcal (pip install -e .): its installed metadata is stale"
    release = tuple(int(part) for part in re.match(r"(\d+)\.(\d+)", declared).groups())
    texts = [p.read_text(encoding="utf-8") for p in [*root.glob("docs/**/*.rst"), *root.glob("src/mcal/**/*.py")]]
    pattern = r"(?i)(?:changed in|added in|since) (?:mcal )?(\d+)\.(\d+)\b"
    spoken = {(int(a), int(b)) for text in texts for a, b in re.findall(pattern, text)}
    assert spoken and max(spoken) <= release, (spoken, declared)
