# The two commands a new user runs (see README.md): `make demo` and `make test`.
# Both set everything up first, idempotently.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system demo test lint

setup: system $(STAMP)

system:
	@scripts/install-system-deps.sh

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,zigzag,dask,bench]'
	touch $(STAMP)

demo: setup
	$(BIN)/boanon ingest datasets/rocksdb-readrandom -o rocksdb-readrandom.csv

test: setup
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check .
