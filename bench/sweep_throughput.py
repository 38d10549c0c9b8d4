"""Fine-tuning sweep throughput: one process per grid point vs the in-process sweep, fp32 vs bf16.

    python bench/sweep_throughput.py --model results/pretrain/clm-tiny/model --task-dir results/data/tasks/sentiment

For one model and task, runs the task's default LR x seed grid in full (config/default.yaml,
``finetuning.for_task``) three ways, each through the real ``python -m pipeline finetune``:

  (a) naive: one process per (LR, seed) point, so every point pays process start-up,
      imports, tokenization and checkpoint loading;
  (b) in-process: one process for the whole grid (what the workflow runs);
  (c) in-process with ``precision: bf16`` (torch.autocast on the forward passes).

Prints runs/hour for each (wall clock of the processes, start-up included) and the
ratios, medians over ``--repeats`` rounds (the modes alternate within a round, so all see
similar machine load), and the mean scores, to check that (a) reproduces (b) exactly and
that bf16 stays close. A benchmark, not a test: these machines are noisy, read the ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline import strict
from pipeline.workflow.configure import read_config

REPOSITORY = Path(__file__).resolve().parents[1]


def run_spec(config, task: str, objective_kind: str, **finetuning) -> dict:
    """The spec the workflow would pass ``finetune`` for this task, with ``finetuning`` overrides."""
    return {
        "task_name": task,
        "task": strict.to_plain(config.tasks[task]),
        "run": f"{objective_kind}-bench",
        "objective": objective_kind,
        "objective_kind": objective_kind,
        "size": "bench",
        "finetuning": {**strict.to_plain(config.finetuning.for_task(task)), **finetuning},
    }


def finetune(spec: dict, args: argparse.Namespace, out: Path) -> tuple[float, list[dict]]:
    """Wall seconds of one ``python -m pipeline finetune`` process, and its grid."""
    command = [sys.executable, "-m", "pipeline", "finetune", "--spec", json.dumps(spec), "--model", args.model, "--task-dir", args.task_dir]
    started = time.perf_counter()
    subprocess.run([*command, "--out", str(out), "--threads", str(args.threads)], cwd=REPOSITORY, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    return seconds, json.loads((out / "scores.json").read_text())["grid"]


def one_round(args: argparse.Namespace, config, scratch: Path) -> dict[str, tuple[float, list[dict]]]:
    """Wall seconds of the whole grid and its points, for each mode. The full grid (no
    selection seeds): (a) runs each point alone, so it cannot choose an LR for the rest."""
    full_grid = {"selection_seeds": None}
    spec = run_spec(config, args.task, args.objective_kind, **full_grid)
    grid = [(lr, seed) for lr in spec["finetuning"]["learning_rates"] for seed in spec["finetuning"]["seeds"]]
    naive_seconds, naive_points = 0.0, []
    for index, (lr, seed) in enumerate(grid):
        seconds, points = finetune(
            run_spec(config, args.task, args.objective_kind, learning_rates=[lr], seeds=[seed], **full_grid),
            args,
            scratch / f"naive-{index}",
        )
        naive_seconds += seconds
        naive_points += points
        print(
            f"  (a) process {index + 1}/{len(grid)}: lr {lr:.0e} seed {seed}: {seconds:.1f} s ({points[0]['seconds']:.1f} s in the point)",
            flush=True,
        )
    results = {"naive": (naive_seconds, naive_points)}
    for mode, precision in (("fp32", "fp32"), ("bf16", "bf16")):
        results[mode] = finetune(run_spec(config, args.task, args.objective_kind, precision=precision, **full_grid), args, scratch / mode)
        inside = sum(p["seconds"] for p in results[mode][1])
        print(
            f"  ({'b' if mode == 'fp32' else 'c'}) in-process {mode}: {results[mode][0]:.1f} s ({inside:.1f} s in the points)", flush=True
        )
    return results


def mean(points: list[dict], key: str) -> float:
    return statistics.mean(p[key] for p in points)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="checkpoint directory")
    parser.add_argument("--task-dir", required=True, help="prepared task directory")
    parser.add_argument("--task", help="task name in the config (default: the task directory's name)")
    parser.add_argument("--config", default=str(REPOSITORY / "config" / "default.yaml"))
    parser.add_argument("--objective-kind", default="clm", help="the model's objective kind (NIAH's attention depends on it)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process, as the workflow's rule gives")
    args = parser.parse_args()
    args.task = args.task or Path(args.task_dir).name
    config = read_config(args.config)
    rounds = []
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(args.repeats):
            print(f"round {repeat + 1}/{args.repeats}", flush=True)
            rounds.append(one_round(args, config, Path(scratch) / str(repeat)))
    num_points = len(rounds[0]["fp32"][1])
    runs_per_hour = {mode: statistics.median(3600 * num_points / r[mode][0] for r in rounds) for mode in ("naive", "fp32", "bf16")}
    last = rounds[-1]
    print(
        f"\n{args.task} ({config.tasks[args.task].type}), {Path(args.model)}: {num_points} grid points, {args.threads} thread(s), median "
        f"of {args.repeats}"
    )
    print(f"(a) one process per point: {runs_per_hour['naive']:7.1f} runs/hour")
    print(f"(b) in-process sweep:      {runs_per_hour['fp32']:7.1f} runs/hour  {runs_per_hour['fp32'] / runs_per_hour['naive']:.2f}x (a)")
    print(
        f"(c) in-process bf16:       {runs_per_hour['bf16']:7.1f} runs/hour  {runs_per_hour['bf16'] / runs_per_hour['naive']:.2f}x (a), "
        f"{runs_per_hour['bf16'] / runs_per_hour['fp32']:.2f}x (b)"
    )
    same = [(p["validation"], p["test"]) for p in last["naive"][1]] == [(p["validation"], p["test"]) for p in last["fp32"][1]]
    metric = config.tasks[args.task].metric
    print(
        f"mean {metric} validation / test: (a) {mean(last['naive'][1], 'validation'):.2f} / {mean(last['naive'][1], 'test'):.2f}, ", end=""
    )
    print(f"(b) {mean(last['fp32'][1], 'validation'):.2f} / {mean(last['fp32'][1], 'test'):.2f}, ", end="")
    print(f"(c) {mean(last['bf16'][1], 'validation'):.2f} / {mean(last['bf16'][1], 'test'):.2f}; (a) == (b) point by point: {same}")


if __name__ == "__main__":
    main()
