"""How far fine-tuning moves the weights at each learning rate of the study's grid, in fp32 and
in the study's pure bf16 (``finetuning.precision: bf16_weights``, EncodEval's).

    python bench/bf16_weight_movement.py --tokens results/tokens --init results/init/random-tiny --steps 300

The same pretrained backbone (``--init``), the same batches (MLM at 40% on packed blocks of
``--tokens``: a stand-in task, since what matters is the update's size against a weight's bf16
spacing, not the loss) and the fine-tuning protocol's AdamW and schedule (linear warmup over
10%, then linear decay), once with float32 weights and once cast to bfloat16 with bf16 AdamW
state. Per learning rate: the share of weights that moved at all, the bf16 displacement as a
share of the fp32 one (L2 norms of the change), and the share of RMSNorm gains that moved.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from transformers import AutoTokenizer

from pipeline.batch import make_batch
from pipeline.config import OptimizerSpec
from pipeline.finetune.sweep import in_precision
from pipeline.model.backbone import encode, labelled_logits, load_language_model
from pipeline.objectives import example_rng, parse_objective
from pipeline.optimization import build_adamw, set_learning_rate
from pipeline.pretrain.token_blocks import TokenBlocks
from pipeline.schedules import linear_with_warmup
from pipeline.tokenization.special_tokens import SpecialIds

LEARNING_RATES = (1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4)  # the study's grid


def train(init: str, precision: str, learning_rate: float, steps: int, blocks: TokenBlocks, special: SpecialIds, batch_size: int):
    """The weights before and after ``steps`` AdamW steps, both as float32 copies."""
    torch.manual_seed(0)
    model = in_precision(load_language_model(init, "bidirectional"), precision)
    before = {name: p.detach().float().clone() for name, p in model.named_parameters()}
    optimizer = build_adamw(model, OptimizerSpec(), learning_rate)
    objective = parse_objective({"kind": "mlm", "mask_ratio": 0.4})
    for step in range(steps):
        set_learning_rate(optimizer, linear_with_warmup(step, steps, learning_rate, 0.1))
        rows = blocks.blocks_for_step(step, batch_size)
        batch = make_batch(objective, rows, [example_rng(0, step, i) for i in range(len(rows))], special)
        logits, labels = labelled_logits(model, encode(model, batch), batch.labels)
        torch.nn.functional.cross_entropy(logits.float(), labels).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    after = {name: p.detach().float().clone() for name, p in model.named_parameters()}
    return before, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--init", required=True)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    special = SpecialIds.from_tokenizer(AutoTokenizer.from_pretrained(args.init))
    blocks = TokenBlocks(args.tokens, "train", args.sequence_length, seed=0)
    print(f"{args.steps} AdamW steps of {args.batch_size} x {args.sequence_length} tokens, warmup 10% then linear decay")
    print("| LR | weights moved, fp32 | weights moved, bf16 | bf16 / fp32 displacement | RMSNorm gains moved, fp32 / bf16 |")
    print("|---:|---:|---:|---:|---:|")
    for learning_rate in LEARNING_RATES:
        moved, displacement, norms = {}, {}, {}
        for precision in ("fp32", "bf16_weights"):
            before, after = train(args.init, precision, learning_rate, args.steps, blocks, special, args.batch_size)
            changed = {name: (after[name] != before[name]) for name in before}
            moved[precision] = sum(int(c.sum()) for c in changed.values()) / sum(c.numel() for c in changed.values())
            displacement[precision] = float(np.sqrt(sum(float(((after[n] - before[n]) ** 2).sum()) for n in before)))
            gains = [n for n in before if "norm" in n]
            norms[precision] = sum(int(changed[n].sum()) for n in gains) / sum(changed[n].numel() for n in gains)
        print(
            f"| {learning_rate:.0e} | {moved['fp32']:.1%} | {moved['bf16_weights']:.1%} | "
            f"{displacement['bf16_weights'] / displacement['fp32']:.0%} | {norms['fp32']:.0%} / {norms['bf16_weights']:.0%} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
