# Two entry points for a fresh machine (see README.md):
#   make run   - set everything up, open the app on the example script and compile it live
#   make test  - set everything up and run all tests
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
EXAMPLE := resources/examples/mlp_breaks.py

.PHONY: setup run test test-fast bench dist dist-test clean

setup: $(STAMP)

# torch is pinned to the CPU wheel that lies on this machine's disk; an unpinned torch pulls a
# multi-GB CUDA build. It is only needed for captures and for the tests that make real ones.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[gui,dev]'
	touch $(STAMP)

# Opens the app on the example script and compiles it live (needs a display).
run: $(STAMP)
	$(VENV)/bin/compile-inspector $(EXAMPLE) --run

test: $(STAMP)
	$(PY) -m pytest -q

# The inner loop: everything but the tests that run real torch.compile captures or freeze the app.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

bench: $(STAMP)
	$(PY) bench/bench_trace_reader.py

# A onedir desktop app without torch (captures use the user's own Python): build/dist/compile-inspector/
dist: $(STAMP)
	$(VENV)/bin/pyinstaller --noconfirm --clean --log-level WARN --distpath build/dist --workpath build/work \
		packaging/compile-inspector.spec
	@du -sh build/dist/compile-inspector

# The frozen app's self-test, run with an empty environment (no Python packages reachable).
dist-test: dist
	env -i HOME="$$HOME" PATH=/usr/bin:/bin build/dist/compile-inspector/compile-inspector --selftest

clean:
	rm -rf $(VENV) .pytest_cache build
