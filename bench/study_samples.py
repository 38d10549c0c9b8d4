"""The study's cut samples against packed blocks: what ``pretraining.samples: split`` costs.

    # CPU, the default's tiny preset (needs results/tokens and results/init/random-tiny):
    python bench/study_samples.py --tokens results/tokens --init results/init/random-tiny --threads 2
    # one GPU, the study's 210M at 2,048 tokens in bf16 (fresh weights, any packed tokens):
    python bench/study_samples.py --tokens results/tokens --tokenizer results/tokenizer --size 210m \\
        --device cuda --precision bf16 --compile --fused-optimizer --sequence-length 2048 --batch-size 8

This project's trainer on the same blocks, the same initial weights and steps, once with every
block one sample (``packed``) and once cut in two as the study's trainer cuts it (``split``,
pipeline/pretrain/samples.py), alternating which goes first. Both feed the same tokens: a cut
adds no padding (the padding fraction is 0 either way; a one-sample-per-row layout of the same
samples would pad half of every row), so the cost is the attention mask alone: tokens/s,
medians over ``--repeats``, and their ratio. Also printed: the loss positions a cut removes
(CLM: one per row) and the samples' mean length.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch
from transformers import AutoTokenizer

sys.path.insert(0, str(Path(__file__).parent))
from alternation import in_turn  # noqa: E402  (a sibling script)
from pretrain_throughput import Bench, prepare_init  # noqa: E402  (a sibling script)
from throughput_record import machine  # noqa: E402  (a sibling script)

from pipeline.pretrain.samples import cut_point  # noqa: E402
from pipeline.tokenization.special_tokens import SpecialIds  # noqa: E402

FORMATS = ("packed", "split")


def main() -> None:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--init")
    parser.add_argument("--size")
    parser.add_argument("--tokenizer")
    parser.add_argument("--vocab-size", type=int, default=128256)
    parser.add_argument("--objectives", nargs="+", default=["clm", "mlm"])
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--fused-optimizer", action="store_true")
    args = parser.parse_args()
    args.dense_lm_head = False
    if bool(args.init) == bool(args.size):
        parser.error("give exactly one of --init and --size")
    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer or args.init)
    special = SpecialIds.from_tokenizer(tokenizer)
    cuts = [cut_point(0, step, row, args.sequence_length) for step in range(200) for row in range(args.batch_size)]
    print(f"machine: {machine()}")
    print(
        f"samples per row: packed 1 of {args.sequence_length} tokens; split 2, mean {args.sequence_length / 2:g} tokens"
        f" (cuts {min(cuts)}..{max(cuts)}); padding fraction 0 for both"
    )
    print(f"CLM loss positions per row: packed {args.sequence_length - 1}, split {args.sequence_length - 2}")
    with tempfile.TemporaryDirectory() as scratch:
        bench = Bench(args, prepare_init(args, tokenizer, special, Path(scratch) / "init"), special, tokenizer)
        measured = {kind: {name: [] for name in FORMATS} for kind in args.objectives}
        for repeat in range(args.repeats):
            for kind in args.objectives:
                for name in in_turn(FORMATS, repeat):
                    tokens_per_second, _ = bench.ours(kind, samples=name)
                    measured[kind][name].append(tokens_per_second)
                    print(f"repeat {repeat} {kind} {name:6s} {tokens_per_second:12,.0f} tokens/s", flush=True)
    shape = f"{args.batch_size} x {args.sequence_length} tokens"
    print(f"\n{args.device}, {args.precision}, {shape}, medians of {args.repeats} x {args.steps} steps")
    print("| objective | packed tokens/s | split tokens/s | split / packed |\n|---|---:|---:|---:|")
    for kind, by_format in measured.items():
        packed, split = (statistics.median(by_format[name]) for name in FORMATS)
        print(f"| {kind} | {packed:,.0f} | {split:,.0f} | {split / packed:.2f}x |")


if __name__ == "__main__":
    main()
