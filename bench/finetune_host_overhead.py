"""The host's share of a fine-tuning step, side by side: what was removed from it on 2026-11-28.

    python bench/finetune_host_overhead.py                        # dispatch-bound: 12 narrow layers, 2 x 8 tokens
    python bench/finetune_host_overhead.py --width 128 --batch 8 --length 54 --layers 2   # the tiny model, SST-2's mix

A GPU fine-tuning step of short texts at 210M is host-bound (the H200 ran the stand-ins at 0.9-2.6%
MFU), so its time is the host's: what the host does per op and per batch. Two things measured here, each
against what the finetune job did before, alternated in one process, medians per round:

1. PyTorch's default-device context (``torch.set_default_device``, which the job set on a GPU) installs a
   Python ``TorchFunctionMode`` that every torch call of the forward pass goes through (the backward runs in
   C++, outside it). On the CPU a narrow model's step is dispatch-bound as a GPU's is: one bidirectional
   backbone's forward + backward with and without the context.
2. Padding a batch of token lists: ``pipeline.batch.pad_batch`` (numpy, one copy) against the row-by-row
   torch fill it replaced, for a training micro-batch (8 rows of ~``--length``) and a scoring batch
   (128 rows of 500-1,000 tokens).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence

import torch

from pipeline.batch import pad_batch
from pipeline.config import SizeSpec
from pipeline.model.backbone import BackboneSpec, build_language_model


def median_seconds(run: Callable[[], object], repeats: int, warmup: int = 5) -> float:
    times = []
    for index in range(warmup + repeats):
        started = time.perf_counter()
        run()
        if index >= warmup:
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def row_by_row(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The padding pad_batch replaced: a torch tensor filled one row at a time, ids and mask alike."""

    def fill(rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
        out = torch.full((len(rows), max(len(r) for r in rows)), value, dtype=torch.long)
        for index, row in enumerate(rows):
            out[index, : len(row)] = torch.as_tensor(row, dtype=torch.long)
        return out

    return fill(sequences, pad_id), fill([[1] * len(s) for s in sequences], 0)


def device_context(args: argparse.Namespace) -> list[float]:
    """Per round: a step's time with the default-device context over its time without."""
    size = SizeSpec(args.layers, args.width, args.width // 16, args.width // 16, 2 * args.width)
    model = build_language_model(BackboneSpec(size, 1000, args.length, 0, 1, 2, 3), "bidirectional", seed=0)
    ids = torch.randint(4, 1000, (args.batch, args.length), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    mask[:, args.length - args.length // 4 :] = 0

    def step() -> None:
        model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state.float().mean().backward()

    ratios = []
    for _ in range(args.rounds):
        plain = median_seconds(step, args.steps)
        with torch.device("cpu"):  # what torch.set_default_device installs
            in_context = median_seconds(step, args.steps)
        ratios.append(in_context / plain)
        print(f"step without the context {plain * 1e3:.2f} ms, with it {in_context * 1e3:.2f} ms: {ratios[-1]:.3f}x", flush=True)
    return ratios


def padding(args: argparse.Namespace) -> None:
    rng = random.Random(0)
    for name, rows, shortest, longest in (("micro-batch", 8, args.length // 2, args.length), ("scoring batch", 128, 500, 1000)):
        sequences = [[rng.randrange(1000) for _ in range(rng.randrange(shortest, longest + 1))] for _ in range(rows)]
        assert all(torch.equal(a, b) for a, b in zip(pad_batch(sequences, 0), row_by_row(sequences, 0)))
        ratios = []
        for _ in range(args.rounds):
            before = median_seconds(lambda: row_by_row(sequences, 0), args.steps)
            after = median_seconds(lambda: pad_batch(sequences, 0), args.steps)
            ratios.append(before / after)
        print(f"padding a {name} of {rows} rows of {shortest}-{longest} tokens: row by row {before * 1e6:,.0f} us,")
        print(f"  pad_batch {after * 1e6:,.0f} us (last round); median {statistics.median(ratios):.1f}x faster over {args.rounds} rounds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--width", type=int, default=32, help="hidden size (heads of 16 dimensions, feed-forward 2x)")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--length", type=int, default=8, help="tokens a row (the last quarter padding)")
    parser.add_argument("--steps", type=int, default=30, help="timed repeats per round, after 5 warm-up ones")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    ratios = device_context(args)
    print(f"median over {args.rounds} rounds: {statistics.median(ratios):.3f}x the step's time with the default-device context")
    padding(args)


if __name__ == "__main__":
    main()
