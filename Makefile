# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv and installs everything.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast lint docs bench bench-quick clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=25.1"
	# the CPU wheel of torch, exactly this version, before anything can ask for torch
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[all]" --group test --group lint --group docs
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mcal demo -o mcal-demo

test: $(STAMP)
	$(PY) -m pytest tests src/mcal --doctest-modules --ignore=src/mcal/__main__.py -q

# The tests not marked slow (Dask, distributed, compiled, browser and benchmark tests, and any test of more than a
# few seconds; tests/README.md): a third of make test's time or less, for the edit-test loop. CI runs make test.
test-fast: $(STAMP)
	$(PY) -m pytest tests src/mcal --doctest-modules --ignore=src/mcal/__main__.py -q -m "not slow"

# The code-shape tools: ruff (lint and format), mypy ([tool.mypy] in pyproject.toml) and the layers of
# [tool.importlinter] (no arrow points up)
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

# The documentation site, docs/_build/html: user guide, API reference from the docstrings (numpydoc validation on),
# and the example gallery of examples/, executed. Offline; warnings are errors. -E rereads every page, so that a
# second run reports the warnings of pages unchanged since the first (the examples rerun only when they change).
docs: $(STAMP)
	OMP_NUM_THREADS=1 MPLBACKEND=Agg $(PY) -m sphinx -E -W --keep-going -b html -d docs/_build/doctrees docs docs/_build/html

# Both papers' result tables (benchmarks/results/paper_*.md); needs ../shared/data or MCAL_DATA_DIR.
bench: $(STAMP)
	$(PY) benchmarks/run_all.py

bench-quick: $(STAMP)
	$(PY) benchmarks/run_all.py --quick

clean:
	rm -rf $(VENV) mcal-demo docs/_build docs/api docs/auto_examples
