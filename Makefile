# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv and installs everything.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench bench-quick clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=25.1"
	# the CPU wheel of torch, exactly this version, before anything can ask for torch
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[all]" --group test --group lint
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mcal demo --output-dir mcal-demo

test: $(STAMP)
	$(PY) -m pytest tests src/mcal --doctest-modules --ignore=src/mcal/__main__.py -q

# The code-shape tools: ruff (lint and format), mypy ([tool.mypy] in pyproject.toml) and the layers of
# [tool.importlinter] (no arrow points up)
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

# Both papers' result tables (benchmarks/results/paper_*.md); needs ../shared/data or MCAL_DATA_DIR.
bench: $(STAMP)
	$(PY) benchmarks/run_all.py

bench-quick: $(STAMP)
	$(PY) benchmarks/run_all.py --quick

clean:
	rm -rf $(VENV) mcal-demo
