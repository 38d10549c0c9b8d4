# Two entry points for a new user (see README.md):
#   make replicate   set up .venv, then run the whole replication on the embedded default
#   make test        set up .venv, then run the test suite (what .ci/run runs)
#   make evidence    the evidence tier (config/evidence.yaml, about an hour) in evidence/
#   make rehearsal   every job kind of the paper DAG on a CPU, offline from a staged fake hub, in rehearsal/
#   make slurm-rehearsal   the same submitted to a one-node SLURM on this machine (root, Debian), in rehearsal_slurm/
#   make one-gpu     the one-GPU tier (config/one_gpu.yaml: 610M CLM and MLM-40 to the study's 1k step; ~2 GPU days) in one_gpu/
#   make one-gpu-reduced   the same on the reduced fine-tuning grid (LR chosen on seed 0: a third of the runs), in one_gpu/
#   make one-gpu-plan   that tier's tasks prepared and its GPU-hours estimated from their lengths, before any GPU work
#   make one-gpu-miniature   that tier's every rule on a CPU, offline from the staged fake hub, in one_gpu_miniature/
#   make browser-check   the default's HTML report opened in headless Chromium (installed from Debian if missing: root)

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: setup replicate evidence rehearsal slurm-rehearsal one-gpu-plan one-gpu one-gpu-reduced one-gpu-miniature smoke browser-check test test-fast clean-results

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

# The rehearsal submitted to a one-node SLURM on this machine (Debian, as root: profiles/slurm_local/up.sh
# installs slurm-wlm and munge and starts the daemons) through profiles/slurm, with the site's settings
# as a workflow profile; its tables must equal the local rehearsal's but the timing columns.
slurm-rehearsal: rehearsal
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[slurm]'
	profiles/slurm_local/up.sh
	mkdir -p rehearsal_slurm && cp -r rehearsal/mirror rehearsal/encodeval rehearsal_slurm/
	$(BIN)/snakemake --profile profiles/slurm --workflow-profile profiles/slurm_local $(REHEARSAL) --directory rehearsal_slurm
	$(BIN)/python bench/compare_tables.py rehearsal/results/tables rehearsal_slurm/results/tables

# The tier on the one GPU a workstation has (docs/one-gpu.md): the hub is read directly. Its cost first:
#   python -m pipeline cost --configfile config/paper.yaml config/one_gpu.yaml --gpu h100 h200
# one-gpu-plan first: the tasks and tokenizer prepared (CPU, the hub's datasets), then the estimate from
# their measured lengths; one-gpu prints where a stopped run stands before it resumes.
ONE_GPU := --configfile config/paper.yaml config/one_gpu.yaml
one-gpu-plan: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) $(ONE_GPU) --directory one_gpu --until prepare_task train_tokenizer
	$(BIN)/python -m pipeline cost $(ONE_GPU) --gpu h100 h200 --directory one_gpu

one-gpu: $(STAMP)
	$(BIN)/python -m pipeline progress $(ONE_GPU) --directory one_gpu
	$(BIN)/snakemake --cores $(CORES) --resources gpu=1 $(ONE_GPU) --directory one_gpu

# The reduced grid, an opt-in: the same pretraining (one_gpu/, shared with one-gpu), fine-tuning redone on it.
ONE_GPU_REDUCED := $(ONE_GPU) config/one_gpu_reduced.yaml
one-gpu-reduced: $(STAMP)
	$(BIN)/python -m pipeline progress $(ONE_GPU_REDUCED) --directory one_gpu
	$(BIN)/snakemake --cores $(CORES) --resources gpu=1 $(ONE_GPU_REDUCED) --directory one_gpu

ONE_GPU_MINIATURE := $(ONE_GPU) config/one_gpu_miniature.yaml
ONE_GPU_MINIATURE_INPUTS := tests/paper_hub.py config/paper.yaml config/one_gpu.yaml config/one_gpu_miniature.yaml $(wildcard config/tasks/paper/*.yaml)
one_gpu_miniature/mirror/manifest.json: $(STAMP) $(ONE_GPU_MINIATURE_INPUTS)
	$(BIN)/python -m tests.paper_hub $(ONE_GPU_MINIATURE) --out one_gpu_miniature/hub --encodeval one_gpu_miniature/encodeval
	$(BIN)/python -m pipeline stage $(ONE_GPU_MINIATURE) --to one_gpu_miniature/mirror --from-directory one_gpu_miniature/hub

one-gpu-miniature: one_gpu_miniature/mirror/manifest.json
	$(BIN)/snakemake --cores $(CORES) $(ONE_GPU_MINIATURE) --directory one_gpu_miniature

smoke: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile config/smoke.yaml

# After `make replicate`: the report at a laptop's and a phone's width, screenshots and a record in reports/browser-check/.
browser-check: $(STAMP)
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || (apt-get update && apt-get install -y chromium chromium-driver)
	$(BIN)/python -m pipeline browser-check --html reports/replication.html --out reports/browser-check

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
