"""Why a task sits at its floor at CPU scale: a grid over fine-tuning steps, task and model.

    python bench/task_floor.py --run-dir /tmp/rep4 --out /tmp/qa_floor --json bench/records/qa_floor.json
    python bench/task_floor.py --run-dir /tmp/rep4 --out /tmp/needle_floor --tasks needle --models clm random

``--run-dir`` is a finished `make replicate` checkout (its results/pretrain/{clm,mlm}-tiny/model,
results/init/random-tiny and results/sources). Each task of ``--tasks`` (news_cloze: a third of the
questions unanswerable, SQuAD v2's metric; news_qa: the same questions, every one answerable;
needle: a number to copy out of a haystack, generative models only) is prepared by the current
code, then each model is fine-tuned by the real ``finetune`` stage at each of ``--steps`` with the default config's LRs and
``--seeds``, exactly as the workflow's job would be but for ``max_steps``. Printed and written:
the test score at the LR chosen on validation, per (task, steps, model), with the task's other
metrics (the abstaining share, the needle's cells) beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from pipeline import strict
from pipeline.analysis.scoring import chosen_on_validation
from pipeline.finetune.run import command_line
from pipeline.workflow import jobs
from pipeline.workflow.configure import read_configs, resolve

MODELS = {"clm": "results/pretrain/clm-tiny/model", "mlm": "results/pretrain/mlm-tiny/model", "random": "results/init/random-tiny"}
KINDS = {"clm": "clm", "mlm": "mlm", "random": "random"}


def run(command: list[str], log: Path) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as handle:
        done = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(command[:4])} ... failed; see {log}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-dir", required=True, type=Path, help="a finished make-replicate checkout (its results/)")
    parser.add_argument("--out", required=True, type=Path, help="scratch: prepared tasks and fine-tuning outputs")
    parser.add_argument("--json", type=Path, help="write every grid point here")
    parser.add_argument("--tasks", nargs="+", default=["news_cloze", "news_qa"])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--steps", nargs="+", type=int, default=[40, 200, 600])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--max-epochs", type=float, default=1.0, help="the cap beside max_steps (the study's: one epoch)")
    args = parser.parse_args()
    config = resolve(read_configs([]), "default").config
    points = []
    for task in args.tasks:
        task_dir = args.out / "tasks" / task
        if not (task_dir / "stats.json").is_file():
            spec = json.dumps(strict.to_plain(config.tasks[task]))
            run(
                [
                    sys.executable,
                    "-m",
                    "pipeline",
                    "prepare-task",
                    "--name",
                    task,
                    "--spec",
                    spec,
                    "--sources",
                    str(args.run_dir / "results" / "sources"),
                    "--out",
                    str(task_dir),
                ],
                args.out / f"prepare-{task}.log",
            )
        for steps in args.steps:
            finetuning = dataclasses.replace(
                config.finetuning, max_steps=steps, max_epochs=args.max_epochs, seeds=tuple(args.seeds), selection_seeds=None, by_task={}
            )
            stepped = dataclasses.replace(config, finetuning=finetuning)
            for model in args.models:
                out = args.out / "finetune" / task / f"{steps}-steps-{args.max_epochs:g}-epochs" / model
                if not (out / "scores.json").is_file():
                    spec = jobs.finetune_spec(stepped, task, model, "tiny", KINDS[model], None)
                    started = time.perf_counter()
                    run(
                        command_line(spec, args.run_dir / MODELS[model], task_dir, out),
                        out.with_suffix(".log"),
                    )
                    print(f"{task} {steps} steps ({args.max_epochs:g} epochs) {model}: {time.perf_counter() - started:.0f} s", flush=True)
                scores = json.loads((out / "scores.json").read_text())
                trained_steps = scores["grid"][0]["trained_steps"]  # max_steps, or fewer where max_epochs stops first
                points.append(
                    {
                        "task": task,
                        "max_steps": steps,
                        "max_epochs": args.max_epochs,
                        "trained_steps": trained_steps,
                        "model": model,
                        "metric": scores["metric"],
                        **chosen(scores["grid"]),
                    }
                )
    print("\n| task | steps run | model | LR | validation | test | other metrics (test) |\n|---|---:|---|---:|---:|---:|---|")
    for p in points:
        rate, scores = f"{p['learning_rate']:g}", f"{p['validation']:.1f} | {p['test']:.1f}"
        print(f"| {p['task']} | {p['trained_steps']} | {p['model']} | {rate} | {scores} | {p['other']} |")
    if args.json:
        args.json.write_text(json.dumps(points, indent=1) + "\n")


def chosen(grid: list[dict]) -> dict:
    """The LR the report chooses on validation (pipeline.analysis.scoring), its mean scores there,
    and the mean of each other test metric at it."""
    points = pd.DataFrame(grid)
    best, validation, test = chosen_on_validation(points, "learning_rate")
    at_best = points.loc[points["learning_rate"] == best, "test_scores"].tolist()
    other = {name: round(statistics.mean(scores[name] for scores in at_best), 1) for name in at_best[0]}
    return {"learning_rate": best, "validation": float(validation), "test": float(test.mean()), "other": other}


if __name__ == "__main__":
    main()
