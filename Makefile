# srlens: `make build` gives a built demo warehouse, `make test` the whole test suite.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
WAREHOUSE ?= warehouse/srlens.duckdb

export DBT_SEND_ANONYMOUS_USAGE_STATS := false
export DO_NOT_TRACK := 1

.PHONY: venv build test test-all lint report clean

venv: $(VENV)/.installed

# torch first, alone, so pip takes the CPU build rather than the CUDA one.
$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

build: venv
	$(BIN)/srlens --warehouse $(WAREHOUSE) load-demo
	$(BIN)/srlens --warehouse $(WAREHOUSE) build --processor aligned

test: venv
	$(BIN)/pytest -m "not slow"

# The slow tier too (pytest -m slow): builds opened by older DuckDB releases (tests/test_old_readers.py).
test-all: venv
	$(BIN)/pytest

# ruff for the Python, sqlfluff for the dbt models (config: pyproject.toml, .sqlfluff).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/sqlfluff lint dbt_project/models --processes 2

# The HTML report of the demo warehouse: report/index.html, opens offline.
report: build
	$(BIN)/srlens --warehouse $(WAREHOUSE) report report/

clean:
	rm -rf warehouse dbt_project/target dbt_project/logs
