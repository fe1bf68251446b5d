# Two entry points for a fresh machine (see README.md):
#   make run   - set everything up, open the app on the example script and compile it live
#   make test  - set everything up and run all tests
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
EXAMPLE := resources/examples/mlp_breaks.py

.PHONY: setup run test test-fast bench dist dist-test deb install-test-deps clean

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

# The inner loop: everything but the tests marked slow (real torch.compile captures, the frozen app, the
# bench scripts' smoke runs), on every core. Each worker starts with its share of the tests in file order
# and an idle one takes tests the other has not started (worksteal), so neither waits on the other at the
# end, as whole modules handed out by their number of tests (loadscope) left one to do; a module's
# fixtures are made once on each worker that runs its tests. `make test` stays serial.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow" -n auto --dist worksteal

bench: $(STAMP)
	$(PY) bench/bench_trace_reader.py

# The app is frozen from a venv holding only what it runs on (the `gui` extra) and PyInstaller (the
# `build` extra): nothing from `dev` (jax, scipy, transformers, pytest, torch) can get into it.
RUNTIME := build/runtime-venv
RUNTIME_STAMP := $(RUNTIME)/.installed
DIST := build/dist/compile-inspector

$(RUNTIME_STAMP): pyproject.toml
	rm -rf $(RUNTIME)
	$(PYTHON) -m venv $(RUNTIME)
	$(RUNTIME)/bin/python -m pip install -q --upgrade pip
	$(RUNTIME)/bin/python -m pip install -q '.[gui,build]'
	touch $(RUNTIME_STAMP)

# A onedir desktop app without torch (captures use the user's own Python): build/dist/compile-inspector/
dist: $(RUNTIME_STAMP)
	$(RUNTIME)/bin/pyinstaller --noconfirm --clean --log-level WARN --distpath build/dist --workpath build/work \
		packaging/compile-inspector.spec
	@du -sh $(DIST)

# The frozen app's self-test, run with an empty environment (no Python packages reachable).
dist-test: dist
	env -i HOME="$$HOME" PATH=/usr/bin:/bin $(DIST)/compile-inspector --selftest

# build/compile-inspector_<version>_<arch>.deb: install with `sudo apt install ./build/compile-inspector_*.deb`
deb: dist
	packaging/make_deb.sh $(DIST) build

# Debian packages tests/test_install.py needs (run as root; installs only the missing ones): a display
# and its tools, the desktop's MIME, launcher and gio tools, and the libraries Qt's xcb plugin loads; and
# the PostgreSQL server tests/test_run_history.py starts a throwaway cluster of (skipped without it).
INSTALL_TEST_DEBS := xvfb x11-utils xdg-utils libfile-mimeinfo-perl shared-mime-info desktop-file-utils \
	libglib2.0-bin libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xkb1 \
	libxkbcommon-x11-0 libxcb-cursor0 postgresql
install-test-deps:
	@missing="$$(for p in $(INSTALL_TEST_DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
		| grep -q '^install ok installed' || echo $$p; done)"; \
	if [ -n "$$missing" ]; then apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; fi

clean:
	rm -rf $(VENV) .pytest_cache build
