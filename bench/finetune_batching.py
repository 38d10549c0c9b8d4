"""Side-by-side: fine-tuning one grid point with random vs length-grouped batches.

    python bench/finetune_batching.py --model results/init/random-tiny --task-dir results/data/tasks/sentiment

Runs the same (LR, seed) point alternately with plain random batches
(``LENGTH_GROUP_BATCHES = 1``: each pool is one batch) and with the default grouping, in
one process so both see the same machine load; prints padded tokens, medians and the
ratio. A benchmark, not a test: these machines are noisy, so read the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from transformers import AutoTokenizer

import pipeline.finetune.sweep as sweep
from pipeline.config import FinetuningSpec, TaskSpec
from pipeline.finetune.task_data import read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.metrics import get_metric


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--task-dir", required=True)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    task = TaskSpec(
        family="SC", type="sequence_classification", metric="accuracy", data=None, description="bench", max_length=args.max_length
    )
    stats, rows = read_task(args.task_dir)
    classification = get_task_type(task.type)(TaskContext(task, stats, tokenizer, "bidirectional", "clm"))
    splits = {name: classification.encode_split(split_rows) for name, split_rows in rows.items()}
    spec = FinetuningSpec(tasks=("bench",), learning_rates=(args.learning_rate,), seeds=(0,))
    runner = sweep.Sweep(classification, classification.load_pretrained(args.model), splits, spec, get_metric("accuracy"))
    lengths = splits["train"].lengths
    default_pool = sweep.LENGTH_GROUP_BATCHES
    seconds: dict[str, list[float]] = {"random": [], "grouped": []}
    for _ in range(args.repeats):
        for name, pool in (("random", 1), ("grouped", default_pool)):
            sweep.LENGTH_GROUP_BATCHES = pool
            steps = spec.budget.trained_steps(len(lengths))
            padded = sum(len(b) * max(lengths[i] for i in b.tolist()) for b in sweep.batch_order(lengths, steps, spec.batch_size, 0))
            started = time.perf_counter()
            result, _ = runner.run_point(args.learning_rate, 0, "bench")
            seconds[name].append(time.perf_counter() - started)
            print(f"{name:8s} padded tokens {padded:,}  {seconds[name][-1]:.1f} s  test {result.test:.1f}", flush=True)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    print(
        f"median s/point: random {medians['random']:.1f}, grouped {medians['grouped']:.1f}; speed-up "
        f"{medians['random'] / medians['grouped']:.2f}x"
    )


if __name__ == "__main__":
    main()
