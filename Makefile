# srlens: `make build` gives a built demo warehouse, `make test` the quick tests, `make test-all` all of them.
# Python 3.11 or newer: 3.11 when installed, else the default python3.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
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
	# srlens and the extras the build and tests use: all in the lock, so pip only checks the ranges.
	$(BIN)/pip install --quiet --no-build-isolation -e '.[stanza,test,lint]'
	touch $@

build: venv
	$(BIN)/srlens --warehouse $(WAREHOUSE) load-demo
	$(BIN)/srlens --warehouse $(WAREHOUSE) build --processor aligned

# Two processes (pytest-xdist); a module's tests stay in one of them, so its own build is made once.
PYTEST_PROCESSES := -n 2 --dist loadfile

# The quick tier: every feature, command and mart on one shared build (tests/README.md).
test: venv
	$(BIN)/pytest $(PYTEST_PROCESSES) -m "not slow"

# Both tiers: the quick one and the slow one (own builds, crash loops, stanza, Chromium, wheel, fuzz).
test-all: venv
	$(BIN)/pytest $(PYTEST_PROCESSES)

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
