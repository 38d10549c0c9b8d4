"""Fine-tuning jobs with and without the workflow's glibc malloc tunables, side by side.

    python bench/malloc_tunables.py --results results --model clm-tiny --tasks sentiment topic news_cloze --repeats 3

For each task, runs the job the workflow runs (``python -m pipeline finetune`` under the
task's protocol in config/default.yaml) once with ``GLIBC_TUNABLES`` as the workflow sets
it (pipeline/malloc_tunables.py) and once with glibc's defaults, alternating within each
round so both see the same machine load. Prints per task the medians of wall seconds, CPU
seconds and minor page faults, the wall-time ratio, and whether the two give identical
scores. A benchmark, not a test: these machines are noisy, read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sweep_throughput import REPOSITORY, run_spec

from pipeline.finetune.run import command_line
from pipeline.malloc_tunables import glibc_tunables
from pipeline.workflow.configure import read_config

MODES = {"glibc defaults": None, "tunables": glibc_tunables({})}


def run_job(command: list[str], tunables: str | None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and minor page faults of one job process."""
    environment = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    if tunables is not None:
        environment["GLIBC_TUNABLES"] = tunables
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=REPOSITORY, env=environment, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu, after.ru_minflt - before.ru_minflt


def scores(out: Path) -> list[tuple[float, float]]:
    return [(p["validation"], p["test"]) for p in json.loads((out / "scores.json").read_text())["grid"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results", help="the workflow's results directory")
    parser.add_argument("--model", default="clm-tiny", help="a pretraining run under results/pretrain/")
    parser.add_argument("--tasks", nargs="+", required=True, help="prepared tasks under results/data/tasks/")
    parser.add_argument("--objective-kind", default="clm", help="the model's objective kind (NIAH's attention depends on it)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    config = read_config(str(REPOSITORY / "config" / "default.yaml"))
    results = Path(args.results).resolve()
    print(f"{args.model}, 1 thread per job, median of {args.repeats} rounds; GLIBC_TUNABLES={MODES['tunables']}")
    with tempfile.TemporaryDirectory() as scratch:
        for task in args.tasks:
            spec = json.dumps(run_spec(config, task, args.objective_kind))
            measured: dict[str, list[tuple[float, float, int]]] = {mode: [] for mode in MODES}
            grids = {}
            for repeat in range(args.repeats):
                for mode, tunables in MODES.items():
                    out = Path(scratch) / f"{task}-{repeat}-{mode.replace(' ', '-')}"
                    model = results / "pretrain" / args.model / "model"
                    command = command_line(spec, model, results / "data" / "tasks" / task, out, "--threads", "1")
                    measured[mode].append(run_job(command, tunables))
                    grids[mode] = scores(out)
            medians = {mode: [statistics.median(column) for column in zip(*rows)] for mode, rows in measured.items()}
            for mode, (wall, cpu, faults) in medians.items():
                print(f"{task:14s} {mode:15s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  minor faults {faults / 1e6:5.2f} M")
            ratio = medians["glibc defaults"][0] / medians["tunables"][0]
            print(f"{task:14s} tunables: {ratio:.2f}x faster; scores identical: {grids['glibc defaults'] == grids['tunables']}", flush=True)


if __name__ == "__main__":
    main()
