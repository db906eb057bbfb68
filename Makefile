# Every target sets up what it needs in .venv, so each works alone on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml setup.py sklearn_ga/_kernel.pyx | cksum | cut -d' ' -f1)

.PHONY: install demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-install (rebuilding the kernel) whenever the build inputs change.
$(STAMP): $(BIN)/python
	rm -f $(VENV)/.installed-*
	$(BIN)/python -m pip install --quiet -e ".[test,demo]"
	touch $@

install: $(STAMP)

# The benchmarks' extra needs (River) are installed only by `make bench`.
$(VENV)/.bench-installed: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,demo,bench]"
	touch $@

demo: install
	$(BIN)/python examples/sparse_target_demo.py

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -p no:cacheprovider tests
	$(BIN)/python -m pytest -q -p no:cacheprovider --doctest-modules sklearn_ga

# Ratios against scikit-learn's SGD, BLAS and River (issue 4); BENCH_SCALE=0.2 for a
# quick run. The table in benchmarks/README.md is a copy of this output.
bench: $(VENV)/.bench-installed
	$(BIN)/python benchmarks/run_all.py

lint: install
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info sklearn_ga/*.so sklearn_ga/_kernel.c
