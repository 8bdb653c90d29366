"""The documentation build is wired: docs/conf.py imports, every public name gets an API page, every public package
is listed, and the gallery has its examples. The full build (``make docs``) runs in CI, not here."""

import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import mcal

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def conf():
    pytest.importorskip("sphinx")
    spec = importlib.util.spec_from_file_location("mcal_docs_conf", DOCS / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_conf_uses_no_network_resource(conf):
    assert "sphinx.ext.intersphinx" not in conf.extensions
    # formulas by the MathJax that sphinx-mathjax-offline ships, copied next to the pages: no CDN
    assert "sphinx-mathjax-offline" in conf.extensions and "://" not in conf.mathjax_path
    offline = importlib.util.find_spec("sphinx-mathjax-offline")
    assert offline is not None, "sphinx-mathjax-offline (docs dependency group) is not installed"
    assert (Path(offline.origin).parent / "static" / conf.mathjax_path).is_file()
    assert conf.sphinx_gallery_conf["abort_on_example_error"] is True


def test_every_public_package_with_an_all_is_in_the_api_reference(conf):
    public = {"mcal"}
    for info in pkgutil.walk_packages(mcal.__path__, "mcal."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or parts[1] in ("cli", "data", "demo"):
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            public.add(info.name)
    assert public - set(conf.API_MODULES) == set()


def _entries(page: str) -> set[str]:
    """Names listed in the autosummary blocks of an API page, and names linked as exported elsewhere."""
    listed = set(re.findall(r"^   (\w+)$", page, flags=re.M))
    linked = set(re.findall(r"^- ``[\w.]+\.(\w+)``: :obj:", page, flags=re.M))
    return listed | linked


def test_every_name_of_every_all_has_a_page_or_a_link_to_one(conf, tmp_path):
    conf.write_api_pages(tmp_path)
    documented = {}
    for module_name in conf.API_MODULES:
        page = (tmp_path / f"{module_name}.rst").read_text(encoding="utf-8")
        module = importlib.import_module(module_name)
        names = {n for n in conf.public_names(module_name) if n != "__version__"}
        names -= {n for n in names if inspect.ismodule(getattr(module, n))}  # submodules have pages of their own
        assert names - _entries(page) == set(), module_name
        for name in re.findall(r"^   (\w+)$", page, flags=re.M):
            documented.setdefault(id(getattr(module, name)), []).append(f"{module_name}.{name}")
    # one page per object: an object exported by several modules is documented once, others link to it
    assert [names for names in documented.values() if len(names) > 1] == []


def test_aliases_link_to_the_class_under_its_own_name(conf, tmp_path):
    conf.write_api_pages(tmp_path)
    page = (tmp_path / "mcal.multiclass.rst").read_text(encoding="utf-8")
    assert "- ``mcal.multiclass.MCGrad``: :obj:`mcal.multiclass.MulticlassMCGrad`" in page
    assert "- ``mcal.mcgrad.MCGrad``: :obj:`mcal.MCGrad`" in (tmp_path / "mcal.mcgrad.rst").read_text(encoding="utf-8")


def test_gallery_has_the_examples_the_issue_asks_for():
    examples = sorted(p.name for p in (ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 8
    for topic in ("calibrated_classifier", "segments_mce", "mcgrad_vs_isotonic", "mcnet", "reliability", "cli",
                  "dask", "regression", "multiclass", "venn_abers", "monitor"):  # fmt: skip
        assert any(topic in name for name in examples), topic
    for path in (ROOT / "examples").glob("plot_*.py"):
        assert path.read_text(encoding="utf-8").startswith('"""\n'), path.name  # sphinx-gallery's title docstring


def test_user_guide_pages_are_all_in_its_table_of_contents():
    index = (DOCS / "user_guide" / "index.rst").read_text(encoding="utf-8")
    pages = {p.stem for p in (DOCS / "user_guide").glob("*.rst")} - {"index"}
    assert pages == set(re.findall(r"^   (\w+)$", index, flags=re.M))


def _type_lines(obj) -> list[str]:
    """The type of every Parameters, Returns and Attributes entry of an object's numpydoc docstring."""
    from numpydoc.docscrape import ClassDoc, FunctionDoc

    doc = ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj)
    sections = ("Parameters", "Other Parameters", "Returns", "Yields", "Attributes")
    return [entry.type for section in sections for entry in doc[section]]


def test_no_type_line_holds_a_bare_trailing_underscore_name(conf):
    """A word ending in ``_`` in a type line (``shape (n_rounds_,)``) is a reStructuredText link to a target that
    does not exist: the build fails with "Unknown target name". Quote it, or name the dimension without ``_``."""
    pytest.importorskip("numpydoc")
    bad = []
    for module_name in conf.API_MODULES:
        module = importlib.import_module(module_name)
        for name in conf.public_names(module_name):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            for line in _type_lines(obj):
                unquoted = re.sub(r"``.*?``", "", line)
                if re.search(r"\b\w+_(?=[\s,.;:)\]]|$)", unquoted):
                    bad.append(f"{module_name}.{name}: {line}")
    assert bad == []


def _documented_objects(conf):
    """``(name, object)`` for every module, class, function and public method or property that has an API page."""
    for module_name in conf.API_MODULES:
        module = importlib.import_module(module_name)
        yield module_name, module
        for name in conf.public_names(module_name):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            yield f"{module_name}.{name}", obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and (inspect.isfunction(member) or isinstance(member, property)):
                        yield f"{module_name}.{name}.{attr}", member


def test_public_docstrings_point_to_no_private_module_or_function(conf):
    """The API reference has no page for ``mcal._progress`` or ``mcal.mcnet._network.ordered_tables``: a public
    docstring that sends the reader there leads nowhere (Sphinx renders the reference as plain text, silently)."""
    bad = []
    for qualname, obj in _documented_objects(conf):
        for line in (inspect.getdoc(obj) or "").splitlines():
            if re.search(r"\bmcal(\.\w+)*\._\w+", line):
                bad.append(f"{qualname}: {line.strip()}")
    assert bad == []
