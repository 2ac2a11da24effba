# Quick start: `make demo` (the core install: check and run the bundled examples; no torch, no Triton)
#              `make test` (every extra the tests need, then the whole test suite)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CORE   := $(VENV)/.installed-core
FULL   := $(VENV)/.installed-test

.PHONY: setup demo test test-all test-fast bench clean

$(CORE): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $(CORE)

$(FULL): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[triton,torch,dev,agent,scale,certificates]'
	touch $(FULL) $(CORE)

setup: $(FULL)

demo: $(CORE)
	$(VENV)/bin/volta parse examples/*.ptx
	$(VENV)/bin/volta check examples/vector_add.ptx        # launch: examples/vector_add.json
	$(VENV)/bin/volta check examples/saxpy.ptx             # CUDA, 3907 CTAs covered symbolically
	$(VENV)/bin/volta run examples/vector_add.ptx --launch examples/vector_add.json
	@echo "--- kernels with bugs (exit status 1 is the expected verdict):"
	-$(VENV)/bin/volta check examples/racy_reduction.ptx
	-$(VENV)/bin/volta check examples/saxpy.ptx --entry saxpy_oob

test: $(FULL)
	$(PY) -m pytest -q -n 2 -m "not heavy" tests

test-all: $(FULL)
	$(PY) -m pytest -q -n 2 tests

test-fast: $(FULL)
	$(PY) -m pytest -q -n 2 -m "not slow and not heavy" tests

bench: $(FULL)
	$(PY) bench/parse.py
	$(PY) bench/emulate.py
	$(PY) bench/verify.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
