# Every target sets up what it needs in .venv, so each works alone on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The build inputs: the kernel's .pyx, every part it includes from sklearn_ga/_src and
# the codes (but for the two files setup.py writes from them).
GENERATED := sklearn_ga/_src/ga_codes.h sklearn_ga/_src/codes.pxi
KERNEL_SOURCES := sklearn_ga/_kernel.pyx sklearn_ga/_codes.py \
	$(filter-out $(GENERATED),$(sort $(wildcard sklearn_ga/_src/*.h sklearn_ga/_src/*.pxi)))
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml setup.py $(KERNEL_SOURCES) | cksum | cut -d' ' -f1)

.PHONY: install demo test lint bench docs docs-check wheel clean

# pip says what fails, nothing else (its progress, and the notes of setuptools'
# editable install, would fill the screen of every build).
PIP := $(BIN)/python -m pip install --quiet --quiet

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

# Re-install (rebuilding the kernel) whenever the build inputs change.
$(STAMP): $(BIN)/python
	rm -f $(VENV)/.installed-*
	$(PIP) -e ".[test,demo]"
	touch $@

install: $(STAMP)

# The benchmarks' extra (River, which the tests install too).
$(VENV)/.bench-installed: $(STAMP)
	$(PIP) -e ".[test,demo,bench]"
	touch $@

demo: install
	$(BIN)/python examples/sparse_target_demo.py

# The tests that compare two paths, or the library with an oracle, run again with
# NumPy's transcendental functions rounded as CPUs with AVX-512 round them
# (tests/ulp_mode.py): a test that passes with one rounding only is a test of it.
ULP_TESTS := $(addprefix tests/test_,one_row.py sparse_dense.py csr_outputs.py \
	reference.py updates.py geodesic.py equivalence.py rates.py schedule.py \
	average.py cv.py cv_rows.py river.py river_rows.py river_rates.py online.py \
	path_measure.py losses.py divergences.py penalty.py kmww.py kmww_runs.py \
	theory.py auto_u.py memory.py dask.py paths.py)

# Each run prints its failures and errors, then one line of totals: the progress
# dots of ten thousand tests are dropped (pipefail keeps pytest's status).
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider --no-header -rfE \
	--disable-warnings
PROGRESS := grep -Ev '^[.sxXfFE]+ +\[ *[0-9]+%\]$$'

test: SHELL := /bin/bash
test: .SHELLFLAGS := -o pipefail -c
test: install
	$(BIN)/ruff check --quiet .
	$(PYTEST) tests | $(PROGRESS)
	SKLEARN_GA_ULP_MODE=1 $(PYTEST) $(ULP_TESTS) | $(PROGRESS)
	$(PYTEST) --doctest-modules sklearn_ga | $(PROGRESS)

# Ratios against scikit-learn's SGD, BLAS and River; BENCH_SCALE=0.2 for a quick run.
# The table in benchmarks/README.md is a copy of this output.
bench: $(VENV)/.bench-installed
	$(BIN)/python benchmarks/run_all.py

lint: install
	$(BIN)/ruff check .

# The docs extra of pyproject.toml, installed without rebuilding the package (an
# editable re-install would recompile the kernel).
DOCS_STAMP := $(VENV)/.docs-installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)

$(DOCS_STAMP): $(STAMP)
	rm -f $(VENV)/.docs-installed-*
	$(BIN)/python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', \
		'rb'))['project']['optional-dependencies']['docs'], sep='\n')" \
		> $(VENV)/docs-requirements.txt
	$(PIP) -r $(VENV)/docs-requirements.txt
	touch $@

# HTML in doc/_build/html; runs every examples/plot_*.py; any warning fails the build.
docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -b html -W --keep-going -q doc doc/_build/html

# Renders the built site in headless Chromium (installed from Debian if missing) and
# checks what a reader sees (doc/check_rendering.py): thumbnails, formulas, tables
# and code that fit, figures without empty axes, no object repr in a page. The
# checker's own tests, which need Chromium, run first.
docs-check: docs
	command -v chromium >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	$(BIN)/python -m pytest -q -p no:cacheprovider --no-header tests/test_check_rendering.py
	$(BIN)/python doc/check_rendering.py doc/_build/html

# The wheel a user installs, in dist/: the sdist is built, then the wheel from it
# (so that a file missing from the sdist fails here). The wheel holds the Python
# modules, the kernel built without debug information or symbols, and LICENSE; the
# kernel's sources are in the sdist only.
$(VENV)/.build-installed: $(BIN)/python
	$(PIP) build
	touch $@

wheel: $(VENV)/.build-installed
	rm -rf dist
	$(BIN)/python -m build --outdir dist . > $(VENV)/build.log 2>&1 || \
		(cat $(VENV)/build.log; exit 1)
	@ls -l dist

clean:
	rm -rf $(VENV) build dist *.egg-info sklearn_ga/*.so sklearn_ga/_kernel.c $(GENERATED)
	rm -rf doc/_build doc/generated doc/auto_examples doc/sg_execution_times.rst
