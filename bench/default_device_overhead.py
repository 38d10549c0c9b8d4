"""What PyTorch's default-device context costs a fine-tuning step whose ops are small, side by side.

    python bench/default_device_overhead.py                       # dispatch-bound: 12 narrow layers, 2 x 8 tokens
    python bench/default_device_overhead.py --width 128 --batch 8 --length 54 --layers 2   # the tiny model, SST-2's mix

``torch.set_default_device`` installs a Python ``TorchFunctionMode`` that every torch call of the forward
pass goes through (the backward runs in C++, outside it). A GPU fine-tuning step of short texts at 210M is
host-bound (the H200 ran the stand-ins at 0.9-2.6% MFU), so its time is the host's time per op; on the CPU
a narrow model's step is dispatch-bound in the same way, which is what this measures: one bidirectional
backbone's forward + backward with and without the context, alternated in one process, medians of
``--steps`` steps per round after warm-up steps. The finetune job used the context on a GPU until
2026-11-28 and no longer does (every task type names the model's device: pipeline/batch.py's pad_batch).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from pipeline.config import SizeSpec
from pipeline.model.backbone import BackboneSpec, build_language_model


def step_seconds(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor, steps: int) -> float:
    """Median seconds of a forward + backward of ``model``'s backbone on ids, mask (B, T), after 5 warm-up steps."""
    times = []
    for index in range(5 + steps):
        started = time.perf_counter()
        model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state.float().mean().backward()
        if index >= 5:
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--width", type=int, default=32, help="hidden size (heads of 16 dimensions, feed-forward 2x)")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--length", type=int, default=8, help="tokens a row (the last quarter padding)")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    size = SizeSpec(args.layers, args.width, args.width // 16, args.width // 16, 2 * args.width)
    model = build_language_model(BackboneSpec(size, 1000, args.length, 0, 1, 2, 3), "bidirectional", seed=0)
    ids = torch.randint(4, 1000, (args.batch, args.length), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    mask[:, args.length - args.length // 4 :] = 0
    ratios = []
    for _ in range(args.rounds):
        plain = step_seconds(model, ids, mask, args.steps)
        with torch.device("cpu"):  # what torch.set_default_device installs
            in_context = step_seconds(model, ids, mask, args.steps)
        ratios.append(in_context / plain)
        print(f"step without the context {plain * 1e3:.2f} ms, with it {in_context * 1e3:.2f} ms: {ratios[-1]:.3f}x", flush=True)
    print(f"median over {args.rounds} rounds: {statistics.median(ratios):.3f}x the step's time with the default-device context")


if __name__ == "__main__":
    main()
