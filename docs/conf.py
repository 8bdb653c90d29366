"""Sphinx configuration of the mcal documentation: ``make docs`` builds ``docs/_build/html`` offline.

The API reference is generated from each public module's ``__all__`` (:func:`write_api_pages`), so a name added to
``__all__`` gets a page at the next build; every object has one page, under the first module of
:data:`API_MODULES` that exports it under its own name, and the other modules that export it link to that page. Nothing is fetched from the network: no
intersphinx, and formulas are rendered by the copy of MathJax that ``sphinx-mathjax-offline`` ships (copied into
``_static/mathjax``, no CDN).
"""

from __future__ import annotations

import inspect
import os
import sys
from importlib import import_module
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
os.environ.setdefault("OMP_NUM_THREADS", "1")

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent / "src"))
# the examples' subprocesses (python -m mcal) import the same sources
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(DOCS.parent / "src"), os.environ.get("PYTHONPATH")]))

import mcal  # noqa: E402

project = "mcal"
author = "mcal developers"
copyright = "mcal developers, Apache-2.0"
release = version = mcal.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 in the package: copied into _static/mathjax when the build ends
]

#: Public modules of the API reference, in the order of its pages, with a one-line description.
API_MODULES = {
    "mcal": "The estimators, model files and the package's constants.",
    "mcal.metrics": "Calibration and multicalibration metrics, curves and intervals.",
    "mcal.segments": "Segments of the data: masks, labels and generated conjunctions of features.",
    "mcal.plotting": "Reliability diagrams, cumulative plots, segment errors and learning curves (matplotlib).",
    "mcal.report": "The HTML report and the formatting of p-values.",
    "mcal.mcgrad": "MCGrad and its hyperparameter search.",
    "mcal.mcgrad.engine": "MCGrad's round loop and losses: the seam that mcal.dask and mcal.regression reuse.",
    "mcal.mcnet": "MCNet: monotonic calibration networks with field context.",
    "mcal.field": "Field-aware calibrators: NeuCalib, AdaCalib and per-field calibration.",
    "mcal.groups": "Multicalibration over given groups: HKRR and DFMC.",
    "mcal.regression": "Calibration of predictions of a continuous outcome.",
    "mcal.multiclass": "Calibrators for k classes.",
    "mcal.selection": "Choosing a method: the candidates cross-fitted on shared folds and compared.",
    "mcal.venn_abers": "Venn-Abers predictors: intervals of calibrated probabilities.",
    "mcal.monitor": "Calibration over time windows with a drift alarm.",
    "mcal.dask": "MCGrad, the metrics and the monitor on a Dask cluster.",
    "mcal.dask.metrics": "The metrics of mcal.metrics on dask collections.",
    "mcal.datasets": "The data shipped with mcal.",
}


def public_names(module_name: str) -> list[str]:
    """The public names of a module: its ``__all__``, or, without one, the functions and classes it defines."""
    module = import_module(module_name)
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module_name
    ]


def _documented_at(modules: dict[str, list[str]]) -> dict[int, str]:
    """Where each class and function gets its page: the first module that exports it under its own name (an alias
    such as ``mcal.multiclass.MCGrad`` would render as "alias of"), else the first that exports it."""
    where: dict[int, str] = {}
    for own_name_only in (True, False):
        for module_name, names in modules.items():
            module = import_module(module_name)
            for name in names:
                obj = getattr(module, name)
                routine = inspect.isclass(obj) or inspect.isfunction(obj)
                if routine and (not own_name_only or name == obj.__name__):
                    where.setdefault(id(obj), f"{module_name}.{name}")
    return where


def _page(module_name: str, description: str, names: list[str], where: dict[int, str]) -> str:
    """The reStructuredText of one module's API page."""
    module = import_module(module_name)
    own, elsewhere, submodules = [], [], []
    for name in names:
        obj = getattr(module, name)
        target = where.get(id(obj), f"{module_name}.{name}")
        if inspect.ismodule(obj):
            submodules.append(obj.__name__)
        elif name == "__version__":
            continue
        elif target != f"{module_name}.{name}":
            elsewhere.append((name, target))
        else:
            own.append(name)
    title = f"``{module_name}``"
    lines = [title, "=" * len(title), "", f".. automodule:: {module_name}", "   :no-members:", ""]
    lines += [description, "", f".. currentmodule:: {module_name}", ""]
    if own:
        lines += [".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        lines += [f"   {name}" for name in own] + [""]
    if elsewhere:
        lines += ["Also exported here, documented under another name or module:", ""]
        lines += [f"- ``{module_name}.{name}``: :obj:`{target}`" for name, target in elsewhere] + [""]
    if submodules:
        lines += ["Submodules: " + ", ".join(f":doc:`{m} <{m}>`" for m in submodules), ""]
    return "\n".join(lines)


def write_api_pages(out_dir: Path) -> list[Path]:
    """Write ``index.rst`` and one page per module of :data:`API_MODULES` into ``out_dir``; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    modules = {m: public_names(m) for m in API_MODULES}
    where = _documented_at(modules)
    paths = []
    for module_name, description in API_MODULES.items():
        path = out_dir / f"{module_name}.rst"
        text = _page(module_name, description, modules[module_name], where)
        if not path.exists() or path.read_text(encoding="utf-8") != text:  # unchanged pages keep their mtime
            path.write_text(text, encoding="utf-8")
        paths.append(path)
    index = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    index += [f"   {m}" for m in API_MODULES] + [""]
    (out_dir / "index.rst").write_text("\n".join(index), encoding="utf-8")
    return paths


#: Every cross-reference must resolve (with -W, a broken one fails the build). Other projects' objects have no
#: target offline (no intersphinx), so references to them are left as text.
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"(sklearn|scipy|numpy|pandas|torch|lightgbm|dask|distributed|narwhals)\..*")]

autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc Parameters section states types, shapes and units

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
#: Docstring errors that fail the build (numpydoc's codes): parameters missing or unknown, sections
#: unknown or out of order, summaries, Returns/Yields missing, objects without a docstring. Style checks (See Also,
#: Examples and extended summary on every object, type on every line of Returns) and the order of keyword-only
#: parameters are not enforced.
numpydoc_validation_checks = {
    "GL03",
    "GL06",
    "GL07",
    "GL08",
    "PR01",
    "PR02",
    "PR06",
    "PR07",
    "PR10",
    "RT01",
    "SS01",
    "SS02",
    "SS03",
    "YD01",
}
#: Dataclass results document their fields under Attributes (tests/core/test_package.py checks them against the fields),
#: so numpydoc's "parameters not documented" does not apply to their generated ``__init__``.
numpydoc_validation_exclude = {
    # the engine seam that mcal.dask and mcal.regression reuse (and users may implement): each has a summary line,
    # not a user-facing docstring
    r"^mcal\.mcgrad\.engine\.",
    r"\.(BootstrapResult|ClasswiseMCE|CumulativeCurve|FieldPcoc|MCEResult|ReliabilityCurve|ReliabilityIntervals"
    r"|MonitorResult|TuningResult|HKRRResult|Segments|PerValueTable|CalibratorSelection|CrossFit)$",
    r"\.staged_predict$",  # returns an iterator (it has a Yields section) without being a generator function
}

sphinx_gallery_conf = {
    "examples_dirs": str(DOCS.parent / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "reset_modules": ("matplotlib",),
    "abort_on_example_error": True,
    "backreferences_dir": None,
    "default_thumb_file": None,
    "min_reported_time": 0,
    "write_computation_times": False,  # its page loads DataTables from a CDN
}

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "sg_execution_times.rst",
    "auto_examples/sg_execution_times.rst",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
]
root_doc = "index"

html_theme = "pydata_sphinx_theme"
html_title = f"mcal {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "icon_links": [],
}
html_static_path: list[str] = []
html_show_sourcelink = False
html_copy_source = False
#: The MathJax that ``sphinx-mathjax-offline`` copies next to the pages (a relative path: nothing from a CDN).
mathjax_path = "mathjax/tex-chtml.js"


def _skip_member(app, what, name, obj, skip, options):
    """Leave out what mcal's classes inherit from scikit-learn and Python (``get_params``, metadata routing, ...)."""
    if name.startswith("set_") and name.endswith("_request"):  # made per class by scikit-learn's metadata routing
        return True
    owner = getattr(obj, "__module__", None) or ""
    if owner.split(".")[0] in ("sklearn", "builtins", "abc") or name == "get_metadata_routing":
        return True
    return None


def setup(app):
    """Write the API pages, and register the member filter."""
    app.connect("autodoc-skip-member", _skip_member)
    # before Sphinx lists the source files, so that autosummary finds the pages and generates their stubs
    app.connect("config-inited", lambda app, config: write_api_pages(DOCS / "api"))
