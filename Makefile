# Two entry points for a fresh machine (see README.md):
#   make run   - set everything up and open the app on the bundled example session
#   make test  - set everything up and run all tests
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
EXAMPLE := resources/sessions/mlp_breaks

.PHONY: setup run test bench clean

setup: $(STAMP)

# torch is pinned to the CPU wheel that lies on this machine's disk; an unpinned torch pulls a
# multi-GB CUDA build. It is only needed for captures and for the tests that make real ones.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[gui,dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/compile-inspector $(EXAMPLE)

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/bench_trace_reader.py

clean:
	rm -rf $(VENV) .pytest_cache
