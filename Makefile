# Quick start: `make demo` (set up + run the verifier's front end on a bundled example)
#              `make test` (set up + run the whole test suite)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-fast bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[torch,dev,agent,scale]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/volta parse examples/*.ptx
	$(VENV)/bin/volta check examples/vector_add.ptx        # launch: examples/vector_add.json
	$(VENV)/bin/volta run examples/vector_add.ptx --launch examples/vector_add.json
	@echo "--- a kernel with a missing barrier (exit status 1 is the expected verdict):"
	-$(VENV)/bin/volta check examples/racy_reduction.ptx

test: setup
	$(PY) -m pytest -q -n 2 tests

test-fast: setup
	$(PY) -m pytest -q -n 2 -m "not slow" tests

bench: setup
	$(PY) bench/parse.py
	$(PY) bench/emulate.py
	$(PY) bench/verify.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
