"""The LM head and its loss alone, at the study's vocabulary: rows per chunk of the chunked
linear cross-entropy (``pipeline/model/linear_cross_entropy.py``) against the dense head.

    python bench/lm_head_chunks.py --device cuda                     # 8 x 2,048 positions, 128,256 rows, bf16
    python bench/lm_head_chunks.py --device cpu --positions 2048 --vocab-size 4096 --precision fp32

Each variant runs forward + backward of the head and loss on the same random hidden states
(N positions x hidden size) and labels, ``--repeats`` times after a warm-up, the device
synchronised around each; printed: the median milliseconds, the peak memory (CUDA) and the
loss (all variants must agree up to rounding), then a markdown table. ``dense`` is
``F.cross_entropy(hidden @ weight.T, labels)`` with the (N, V) logits in float32, as the
transformers ``Trainer``'s models compute it.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from pipeline.model.linear_cross_entropy import default_chunk_rows, linear_cross_entropy


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def head_and_loss(hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, rows: int | None, dtype: torch.dtype) -> float:
    """Forward and backward of one variant; returns the loss. ``rows`` None: the dense head."""
    with torch.autocast(hidden.device.type, dtype=dtype, enabled=dtype != torch.float32):
        if rows is None:
            loss = F.cross_entropy((hidden @ weight.T).float(), labels)
        else:
            loss = linear_cross_entropy(hidden, weight, labels, chunk_rows=rows)
    loss.backward()
    return loss.item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    parser.add_argument("--positions", type=int, default=8 * 2048, help="positions that carry loss (N)")
    parser.add_argument("--hidden-size", type=int, default=768, help="the 210M preset's")
    parser.add_argument("--vocab-size", type=int, default=128256, help="the study's Llama-3 vocabulary")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="bf16")
    parser.add_argument("--rows", type=int, nargs="+", default=[256, 1024, 2048, 4096, 8192], help="rows per chunk to time")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    device = torch.device(args.device)
    dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32
    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(args.positions, args.hidden_size, generator=generator).to(device).requires_grad_()
    weight = (torch.randn(args.vocab_size, args.hidden_size, generator=generator) * 0.02).to(device).requires_grad_()
    labels = torch.randint(args.vocab_size, (args.positions,), generator=generator).to(device)
    default = default_chunk_rows(args.vocab_size, device)
    variants = [(f"{rows} rows" + (" (default here)" if rows == default else ""), rows) for rows in args.rows] + [("dense", None)]
    lines = [
        f"\n{args.positions:,} positions x hidden {args.hidden_size} x vocabulary {args.vocab_size:,}, {args.precision}, {args.device}"
        f" ({torch.cuda.get_device_name(0) if device.type == 'cuda' else 'CPU'}); medians of {args.repeats}",
        "",
        "| variant | ms (forward + backward) | peak GB | loss |",
        "|---|---:|---:|---:|",
    ]
    for name, rows in variants:
        head_and_loss(hidden, weight, labels, rows, dtype)  # warm-up
        hidden.grad = weight.grad = None
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        times = []
        for _ in range(args.repeats):
            synchronize(device)
            started = time.perf_counter()
            loss = head_and_loss(hidden, weight, labels, rows, dtype)
            synchronize(device)
            times.append(1000 * (time.perf_counter() - started))
            hidden.grad = weight.grad = None
        peak = torch.cuda.max_memory_allocated(device) / 1e9 if device.type == "cuda" else float("nan")
        print(f"{name}: {statistics.median(times):.2f} ms, peak {peak:.2f} GB, loss {loss:.6f}", flush=True)
        lines.append(f"| {name} | {statistics.median(times):.2f} | {peak:.2f} | {loss:.6f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
