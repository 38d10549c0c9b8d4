#!/usr/bin/env bash
# The GPU acceptance run in one command (bench/gpu_acceptance.py says what it checks):
#   bench/gpu_acceptance.sh [OUT_DIR [ARGUMENTS...]]
# writes OUT_DIR/gpu_acceptance.json and OUT_DIR/gpu_acceptance.log (OUT_DIR: . by default); ARGUMENTS go to the
# .py, e.g. `--size 1b --sections throughput`: a record of the 1B preset's MFU, which the cost estimate then takes.
# It needs results/ with the smoke config's inputs (made on any CPU machine, see the .py's top)
# and a CUDA GPU: without one it stops at once with exit status 2.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath "${1:-.}")"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # the pipeline package, installed or not
"${PYTHON:-python3}" bench/gpu_acceptance.py --inputs results --work "${TMPDIR:-/tmp}/gpu_acceptance" \
    --json "$out/gpu_acceptance.json" "${@:2}" 2>&1 | tee "$out/gpu_acceptance.log"
