"""What the portable CPU paths cost: training steps of the default's backbones under each mode.

    python bench/cpu_paths.py --repeats 5      # ~5 minutes on 2 cores

Each measurement is one subprocess under ``PIPELINE_CPU_PATHS=portable`` or ``native``
(pipeline/cpu_paths.py: the pins must be in place before torch loads), alternating between the
two so both see the same machine load. A subprocess builds each of config/default.yaml's
pretraining sizes with the causal (CLM) and bidirectional (MLM) attention, and times
forward + backward + AdamW steps on one fixed batch of the default's shape (16 x 128 tokens,
its tokenizer's 8,192 ids) after a few untimed ones. It also prints a digest of the final loss:
the two modes round differently, each mode the same in every repeat. Printed: every
measurement, then the medians and the portable/native ratio as a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml
from alternation import in_turn  # a sibling script

from pipeline.cpu_paths import PORTABLE_PINS

REPO = Path(__file__).resolve().parent.parent
MODES = ("native", "portable")
ATTENTIONS = {"clm": "causal", "mlm": "bidirectional"}


def measure(sizes: list[str], steps: int, warmup: int, threads: int) -> dict[str, dict[str, float]]:
    """Median seconds per step and the final loss, by size and objective, in this process."""
    import torch

    from pipeline.config import SizeSpec
    from pipeline.model.backbone import BackboneSpec, build_language_model

    torch.set_num_threads(threads)
    table = yaml.safe_load((REPO / "config" / "default.yaml").read_text())["sizes"]
    results = {}
    for size_name in sizes:
        spec = BackboneSpec(SizeSpec(**table[size_name]), vocab_size=8192, max_length=128, pad_id=0, bos_id=1, eos_id=2, mask_id=3)
        for objective, attention in ATTENTIONS.items():
            model = build_language_model(spec, attention, seed=0)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            ids = torch.randint(4, 8192, (16, 128), generator=torch.Generator().manual_seed(0))  # (batch, positions)
            seconds = []
            for step in range(warmup + steps):
                start = time.perf_counter()
                loss = model(input_ids=ids, labels=ids).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if step >= warmup:
                    seconds.append(time.perf_counter() - start)
            results[f"{size_name} {objective}"] = {"step_seconds": statistics.median(seconds), "final_loss": loss.item()}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["tiny", "mini"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one-process", action="store_true", help=argparse.SUPPRESS)  # a measurement's subprocess
    args = parser.parse_args()
    if args.one_process:
        print(json.dumps(measure(args.sizes, args.steps, args.warmup, args.threads)))
        return
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for repeat in range(args.repeats):
        for mode in in_turn(MODES, repeat):
            argv = [sys.executable, __file__, "--one-process", "--sizes", *args.sizes, "--steps", str(args.steps)]
            argv += ["--warmup", str(args.warmup), "--threads", str(args.threads)]
            env = {k: v for k, v in os.environ.items() if k not in PORTABLE_PINS}
            done = subprocess.run(argv, env={**env, "PIPELINE_CPU_PATHS": mode}, cwd=REPO, capture_output=True, text=True, check=True)
            runs[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(mode, json.dumps(runs[mode][-1]), flush=True)
    print("\n| model | native s/step | portable s/step | portable / native | final loss native / portable |")
    print("|---|---:|---:|---:|---|")
    for key in runs["native"][0]:
        native, portable = (statistics.median(run[key]["step_seconds"] for run in runs[mode]) for mode in MODES)
        # One value per mode where every repeat agreed (the runs are deterministic within a mode).
        losses = " / ".join(", ".join(sorted({f"{run[key]['final_loss']:.9f}" for run in runs[mode]})) for mode in MODES)
        print(f"| {key} | {native:.4f} | {portable:.4f} | {portable / native:.2f} | {losses} |")


if __name__ == "__main__":
    main()
