# Two entry points for a new user (see README.md):
#   make replicate   set up .venv, then run the whole replication on the embedded default
#   make test        set up .venv, then run the test suite (what .ci/run runs)
#   make evidence    the evidence tier (config/evidence.yaml, about an hour) in evidence/
#   make rehearsal   every job kind of the paper DAG on a CPU, offline from a staged fake hub, in rehearsal/

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: setup replicate evidence rehearsal smoke test test-fast clean-results

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

# config/rehearsal.yaml over config/paper.yaml: the fake hub (tests/paper_hub.py), staged into
# rehearsal/mirror as a cluster's login node would stage the real one, then the DAG offline.
# The hub and mirror are made again only when what makes them changed: rewritten, their files
# would be newer than the jobs that read them, and a second `make rehearsal` would rerun those.
REHEARSAL := --configfile config/paper.yaml config/rehearsal.yaml
REHEARSAL_HUB_INPUTS := tests/paper_hub.py config/paper.yaml config/rehearsal.yaml $(wildcard config/tasks/paper/*.yaml)
rehearsal/mirror/manifest.json: $(STAMP) $(REHEARSAL_HUB_INPUTS)
	$(BIN)/python -m tests.paper_hub $(REHEARSAL) --out rehearsal/hub --encodeval rehearsal/encodeval
	$(BIN)/python -m pipeline stage $(REHEARSAL) --to rehearsal/mirror --from-directory rehearsal/hub

rehearsal: rehearsal/mirror/manifest.json
	$(BIN)/snakemake --cores $(CORES) $(REHEARSAL) --directory rehearsal

smoke: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile config/smoke.yaml

# Two workers, each test file whole on one (a module's shared DAG run is made once), in the
# order tests/conftest.py sorts them (the whole-DAG files first): those runs leave a core idle
# on their serial stretches, and the unit tests fill it.
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder

# The fast lane while working: everything but the tests marked slow (whole-DAG Snakemake runs).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m "not slow"

clean-results:
	rm -rf results/* reports/* logs benchmarks .snakemake
