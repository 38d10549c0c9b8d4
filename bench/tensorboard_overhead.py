"""What the TensorBoard event files cost a job: the same pretraining and fine-tuning jobs with them on
and off (``PIPELINE_TENSORBOARD``, pipeline/tensorboard_log.py), side by side.

    python bench/tensorboard_overhead.py --results results --repeats 3     # a finished `make replicate`

Each measurement is one ``python -m pipeline`` job, run as its rule runs it, from a finished run's own
records: a pretraining job (``--pretrain``, its spec from provenance.json, cut to ``--steps``) and a
fine-tuning job (``--finetune``: its whole LR x seed grid), each into a scratch directory. On and off
alternate (the order flips every repeat) so both see the same machine load. Printed: every wall time,
then each job's median with events on and off and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from alternation import in_turn  # a sibling script

REPO = Path(__file__).resolve().parent.parent


def pretrain_argv(results: Path, run: str, steps: int, scratch: Path) -> list[str]:
    record = json.loads((results / "pretrain" / run / "provenance.json").read_text())
    spec = record["spec"]
    plan = spec["plan"]
    plan["last_step"] = min(steps, plan["last_step"])
    plan["stage_checkpoint_steps"] = [step for step in plan["stage_checkpoint_steps"] if step < plan["last_step"]]
    inputs = {role: Path(entry["path"]) for role, entry in record["inputs"].items()}
    return [
        *("pretrain", "--spec", json.dumps(spec), "--tokens", str(results.parent / inputs["tokens"].parent)),
        *("--init", str(results.parent / inputs["init"].parent), "--work-dir", str(scratch / "work"), "--out", str(scratch / "run")),
    ]


def finetune_argv(results: Path, job: str, scratch: Path) -> list[str]:
    record = json.loads((results / "finetune" / job / "provenance.json").read_text())
    inputs = {role: Path(entry["path"]) for role, entry in record["inputs"].items()}
    task = next(path for role, path in inputs.items() if role.startswith("task "))
    return [
        *("finetune", "--spec", json.dumps(record["spec"]), "--model", str(results.parent / inputs["model"].parent)),
        *("--task-dir", str(results.parent / task), "--work-dir", str(scratch / "work"), "--out", str(scratch / "out")),
    ]


def timed(argv_of, events: bool) -> float:
    """Wall seconds of one job in a fresh scratch directory."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "PIPELINE_TENSORBOARD": "1" if events else "0"}
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pipeline", *argv_of(Path(scratch))], cwd=REPO, env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            sys.exit(f"a job failed: {done.stderr.strip().splitlines()[-1]}")
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True, help="a finished run's results/ directory")
    parser.add_argument("--pretrain", default="clm-tiny", help="the pretraining run to time (results/pretrain/<run>)")
    parser.add_argument("--steps", type=int, default=240, help="its first steps only")
    parser.add_argument("--finetune", default="sentiment/clm-tiny", help="the fine-tuning job to time (results/finetune/<task>/<run>)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results = args.results.resolve()
    jobs = {
        f"pretrain {args.pretrain}, {args.steps} steps": lambda scratch: pretrain_argv(results, args.pretrain, args.steps, scratch),
        f"finetune {args.finetune}": lambda scratch: finetune_argv(results, args.finetune, scratch),
    }
    seconds: dict[tuple[str, bool], list[float]] = {}
    for repeat in range(args.repeats):
        for name, argv_of in jobs.items():
            for events in in_turn((True, False), repeat):
                seconds.setdefault((name, events), []).append(timed(argv_of, events))
                print(f"{name}, events {'on' if events else 'off'}: {seconds[name, events][-1]:.1f} s", flush=True)
    print("\n| job | events on (s) | events off (s) | on / off |")
    print("|---|---:|---:|---:|")
    for name in jobs:
        on, off = (statistics.median(seconds[name, events]) for events in (True, False))
        print(f"| {name} | {on:.1f} | {off:.1f} | {on / off:.3f} |")


if __name__ == "__main__":
    main()
