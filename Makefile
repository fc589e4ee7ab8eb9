# The two commands a new user runs (see README.md): `make demo` and `make test`.
# Both set everything up first, idempotently.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS := dev,zigzag,dask,optuna,bench
LOCK := requirements.lock

.PHONY: setup system demo test lint lock

setup: system $(STAMP)

system:
	@scripts/install-system-deps.sh

# Installs exactly the versions in $(LOCK) (what CI tested), so a fresh machine gets the same.
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c $(LOCK) pip
	$(BIN)/python -m pip install -q -c $(LOCK) -e '.[$(EXTRAS)]'
	@# torch and botorch (the bench-gp extra, for benchmarks/bo_peers.py) are bench-only and left
	@# out: `make test` skips their tests; see benchmarks/README.md to install them.
	touch $(STAMP)

# Re-resolves pyproject.toml's open ranges in a scratch venv and writes the newest versions to
# $(LOCK); run `make test` after it and commit both.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install -q --upgrade pip
	.lock-venv/bin/python -m pip install -q -e '.[$(EXTRAS)]'
	{ sed -n '1,/^# pyproject/p' $(LOCK); .lock-venv/bin/python -m pip freeze --all --exclude-editable; \
	  sed -n '/^# bench-gp extra/,$$p' $(LOCK); } > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .lock-venv

# The SGD cluster end to end from its logs alone (docs/sgd.md), a few minutes: read the 40-trial
# dataset, learn its graph and the relations in it (no annotations) and draw it, tune 15 trials
# started warm from the dataset, summarise. Everything goes to a fresh demo/ each time.
DEMO := demo

demo: setup
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(BIN)/boanon ingest datasets/sgd-googlenet -o $(DEMO)/sgd-googlenet.csv
	$(BIN)/boanon learn datasets/sgd-googlenet -o $(DEMO)/sgd-graph.json --render $(DEMO)/sgd-graph.svg
	$(BIN)/boanon tune examples/sgd-from-logs.yaml --budget 15 --store $(DEMO)/sgd.db
	$(BIN)/boanon status $(DEMO)/sgd.db

test: setup
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check .
