# Two entry points for a new user (see README.md):
#   make replicate   set up .venv, then run the whole replication on the embedded default
#   make test        set up .venv, then run the test suite (what .ci/run runs)
#   make evidence    the evidence tier (config/evidence.yaml, about an hour) in evidence/

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: setup replicate evidence smoke test test-fast clean-results

setup: $(STAMP)

# constraints.txt pins every package, torch==2.13.0 included (a loose torch pulls GBs of CUDA).
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	touch $(STAMP)

replicate: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

# Same rules, its own config and working directory, so it never overwrites the default's results.
evidence: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile config/evidence.yaml --directory evidence

smoke: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile config/smoke.yaml

test: $(STAMP)
	$(BIN)/python -m pytest

# The fast lane while working: everything but the tests marked slow (whole-DAG Snakemake runs).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow"

clean-results:
	rm -rf results/* reports/* logs benchmarks .snakemake
