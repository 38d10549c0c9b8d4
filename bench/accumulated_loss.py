"""What transformers' weighting of accumulated micro-batches moves, against the exact mean: one
task's fine-tuning grids of the same pretrained models, run twice in copies of one finished
workflow directory (``finetuning.micro_batch_size`` set in both, ``accumulated_loss`` per_unit in one,
per_micro_batch in the other), each grid's test score at the learning rate chosen on validation
set side by side, with the difference's Welch interval over fine-tuning seeds.

    python bench/accumulated_loss.py per_unit_dir per_micro_batch_dir --task proper_nouns --runs clm-tiny mlm-tiny
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.analysis.inputs import read_finetune_grid
from pipeline.analysis.scoring import chosen_on_validation
from pipeline.analysis.stats import difference, mean_interval
from pipeline.analysis.text import interval_text


def chosen(directory: Path, task: str, runs: list[str]):
    """Run -> its test scores at the learning rate its validation chose, for ``task``'s grids of ``runs`` under ``directory``."""
    grid = read_finetune_grid([directory / "results" / "finetune" / task / run / "scores.json" for run in runs])
    return {run: chosen_on_validation(points, "learning_rate")[2] for run, points in grid.groupby("run", sort=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True)
    parser.add_argument("--runs", nargs="+", required=True, help="the pretrained runs whose grids were fine-tuned in both")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("per_unit", type=Path, help="the workflow directory fine-tuned with accumulated_loss: per_unit")
    parser.add_argument("per_micro_batch", type=Path, help="the same with accumulated_loss: per_micro_batch")
    args = parser.parse_args()
    exact, trainer = (chosen(directory, args.task, args.runs) for directory in (args.per_unit, args.per_micro_batch))
    print(f"| {args.task} run | per unit (exact mean) | per micro-batch (Trainer's) | difference, {args.confidence:.0%} Welch |")
    print("|---|---:|---:|---:|")
    for run in sorted(set(exact) & set(trainer)):
        one, two = (mean_interval(scores, args.confidence) for scores in (exact[run], trainer[run]))
        gap = difference(two, one)
        print(
            f"| {run} | {interval_text(one.mean, one.low, one.high)} | {interval_text(two.mean, two.low, two.high)}"
            f" | {interval_text(gap.mean, gap.low, gap.high, signed=True)} |"
        )


if __name__ == "__main__":
    main()
