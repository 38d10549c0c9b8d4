"""GPU acceptance: what the paper configuration needs from one GPU, checked in one run (a few minutes on an H100).

    # once, on a CPU machine: the smoke config's small inputs (tokenizer, packed tokens, a task, minimal pairs)
    snakemake results/tokens/meta.json results/data/tasks/sentiment/stats.json \\
        results/data/minimal_pairs/pairs.jsonl --cores 2 --configfile config/smoke.yaml
    # on the GPU machine (bench/gpu_acceptance.sh wraps this):
    python bench/gpu_acceptance.py --inputs results --work /tmp/gpu_acceptance --json gpu_acceptance.json

Sections, each recorded in the JSON with its wall time, verdict and numbers (a failing section
is recorded and the next one still runs; the exit status is 1 if any failed):

1. ``throughput``: ``bench/pretrain_throughput.py`` at the paper's 210M preset (``--size``), 2,048 tokens, bf16,
   one micro-batch of the size's per step (8 at 210M, 4 at 610M and 1B),
   the study's 128,256-row vocabulary, ours (compiled, fused AdamW, sparse LM head) beside the
   transformers ``Trainer``: tokens/s, MFU against the measured matmul peak and against the card's
   dense bf16 datasheet peak (``hardware.gpu_peak_tflops`` of config/paper.yaml), peak memory.
2. ``pretrain_resume``: the real ``pretrain`` stage with config/paper.yaml's pretraining section
   (bf16, compile, fused optimizer, micro-batches of 8, WSD) shrunk to 30 steps, run twice: once
   straight, once killed (SIGKILL) after its step-10 resume state and rerun. The two must end at
   the same held-out loss up to GPU rounding (bf16 and non-deterministic kernels: not bit-exact).
3. ``finetune``: the real ``finetune`` stage on cuda with the paper's fine-tuning protocol
   (batch 32, one LR and seed, fewer steps) on the embedded ``sentiment`` task, from section 2's model.
4. ``minimal_pairs``: the real ``minimal-pairs`` stage on cuda, same model.
5. ``cpu_gpu_agreement``: the default config's ``tiny`` preset pretrained 20 steps in fp32 from the
   same initial weights on the CPU and on cuda (TF32 matmuls): every logged loss must agree within
   ``--loss-tolerance``.

The model in sections 2-4 has the smoke tokenizer's vocabulary (its tokens are what is packed);
section 1 alone has the study's vocabulary size. Without cuda the script stops at once (exit 2);
``--device cpu --size tiny --sequence-length 64`` dry-runs its plumbing on a CPU (the CPU-vs-GPU
section then compares the CPU with itself).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch

from pipeline import strict
from pipeline.errors import PipelineError
from pipeline.pretrain.trainer import STATE_FILE
from pipeline.provenance import code_version
from pipeline.workflow import jobs
from pipeline.workflow.configure import REPOSITORY, Resolved, merge, read_configs, read_task_files, resolve
from pipeline.workflow.measured_mfu import batch_line, setting_of


def single_runs(budget_steps: int) -> dict[str, Any]:
    """An overlay that plans the objectives' single runs alone: no zoo, two-stage, CPT, curves or outside models."""
    return {
        "zoo": {"sizes": [], "budget_steps": None},
        "two_stage": {"sizes": [], "budgets": [budget_steps], "splits": []},
        "continued_pretraining": {"sizes": [], "outside_bases": []},
        "learning_curves": {"sizes": [], "runs": []},
        "outside_models": [],
    }


# config/paper.yaml shrunk to a few steps of one size: the pretraining section keeps its
# compute (bf16, compile, fused AdamW, sparse prediction, micro-batches of 8) and optimizer.
PAPER_SHRUNK = {
    "pretraining": {
        "objectives": ["clm", "mlm"],
        "batch_size": 16,  # two micro-batches of 8 per step: gradient accumulation runs too
        "budget_steps": 30,
        "checkpoint_steps": [20],
        "resume_every_steps": 10,
        "num_heldout_batches": 1,
        "schedule": {"kind": "wsd", "peak_lr": 5.0e-4, "num_warmup_steps": 5, "num_decay_steps": 5},
    },
    "finetuning": {"tasks": ["sentiment"], "learning_rates": [5.0e-5], "seeds": [0], "max_steps": 100, "by_task": {}},
}


def paper_shrunk(size: str, sequence_length: int) -> tuple[dict[str, Any], Resolved]:
    """config/paper.yaml with PAPER_SHRUNK's single runs at ``size``, and the overlay that made it (for the record)."""
    # The embedded sentiment task (its splits are in --inputs) beside the paper's datasets.
    sentiment = {"sentiment": read_task_files("config/tasks", "config")["sentiment"]}
    overlay = merge(
        merge(single_runs(30), PAPER_SHRUNK),
        {"pretraining": {"sizes": [size], "sequence_length": sequence_length}, "tasks": sentiment},
    )
    return overlay, resolve(merge(read_configs([str(REPOSITORY / "config" / "paper.yaml")]), overlay))


# The default config's tiny preset in fp32 without compile: what the CPU and the GPU both run.
TINY_FP32 = {
    "pretraining": {
        "sizes": ["tiny"],
        "objectives": ["clm"],
        "sequence_length": 128,
        "batch_size": 8,
        "budget_steps": 20,
        "checkpoint_steps": [],
        "resume_every_steps": 20,
        "num_heldout_batches": 2,
        "schedule": {"kind": "wsd", "peak_lr": 1.0e-3, "num_warmup_steps": 5, "num_decay_steps": 5},
        "compute": {"precision": "fp32", "compile": False, "fused_optimizer": False, "micro_batch_size": 8, "by_size": {}},
    },
}


def refuse(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


class SectionFailed(Exception):
    """A section's check did not hold; its message goes into the JSON."""


def require_cuda(device: str) -> None:
    if device == "cuda" and not torch.cuda.is_available():
        refuse(
            f"bench/gpu_acceptance.py needs a CUDA GPU, and torch {torch.__version__} sees none"
            " (torch.cuda.is_available() is False); run it on a GPU machine"
        )


def require_inputs(inputs: Path) -> None:
    for relative in ("tokenizer", "tokens/meta.json", "data/tasks/sentiment/stats.json", "data/minimal_pairs/pairs.jsonl"):
        if not (inputs / relative).exists():
            refuse(f"{inputs / relative} is missing; make the inputs first (see the top of bench/gpu_acceptance.py)")


def stage(args: argparse.Namespace, name: str, *options: str, timeout: float, log: Path) -> None:
    """``python -m pipeline <name> ...`` as a rule would run it; its output goes to ``log``."""
    command = [sys.executable, "-m", "pipeline", name, *options]
    with open(log, "w") as handle:
        done = subprocess.run(command, cwd=REPOSITORY, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout)
    if done.returncode != 0:
        raise SectionFailed(f"{name} exited {done.returncode}: {tail(log)}")


def tail(log: Path, lines: int = 3) -> str:
    return " | ".join(log.read_text(errors="replace").strip().splitlines()[-lines:])


def read_log(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "log.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def logged_losses(rows: list[dict[str, str]], column: str) -> dict[int, float]:
    return {int(row["step"]): float(row[column]) for row in rows if row.get(column)}


def initialize(args: argparse.Namespace, config, size: str, max_length: int, out: Path) -> None:
    stage(
        args,
        "initialize",
        "--size",
        jobs.as_json(config.sizes[size]),
        "--max-length",
        str(max_length),
        "--seed",
        "0",
        "--tokenizer",
        str(args.inputs / "tokenizer"),
        "--out",
        str(out),
        timeout=300,
        log=out.with_suffix(".log"),
    )


def pretrain(args: argparse.Namespace, spec: str, init: Path, out: Path, device: str, kill_after_state: bool = False) -> float:
    """The pretrain stage; with ``kill_after_state`` it is killed (SIGKILL) once its first resume
    state is on disk and started again. Returns the wall seconds of the (last) attempt."""
    work = out.with_name(out.name + "-resume")
    options = [
        "--spec",
        spec,
        "--tokens",
        str(args.inputs / "tokens"),
        "--init",
        str(init),
        "--work-dir",
        str(work),
        "--out",
        str(out),
        "--threads",
        str(args.threads),
        "--device",
        device,
    ]
    if kill_after_state:
        command = [sys.executable, "-m", "pipeline", "pretrain", *options]
        with open(out.with_suffix(".killed.log"), "w") as handle:
            process = subprocess.Popen(command, cwd=REPOSITORY, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            deadline = time.monotonic() + args.stage_timeout
            while not (work / STATE_FILE).is_file():
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    raise SectionFailed(f"pretrain wrote no resume state before it ended: {tail(out.with_suffix('.killed.log'))}")
                time.sleep(0.2)
            process.send_signal(signal.SIGKILL)
            process.wait()
    started = time.perf_counter()
    stage(args, "pretrain", *options, timeout=args.stage_timeout, log=out.with_suffix(".log"))
    return time.perf_counter() - started


def section_throughput(args: argparse.Namespace, record: dict) -> None:
    out = args.work / "throughput.json"
    # One micro-batch of the size's per step, in its precision, vocabulary, attention kernel, head and samples:
    # what a pipeline job's forward passes are, so that the cost estimate may take the MFU measured (pipeline/workflow/measured_mfu.py).
    setting = setting_of(args.paper, args.size)
    command = [
        sys.executable,
        "bench/pretrain_throughput.py",
        "--tokens",
        str(args.inputs / "tokens"),
        "--tokenizer",
        str(args.inputs / "tokenizer"),
        "--size",
        args.size,
        "--vocab-size",
        str(setting.vocab_size),
        "--device",
        args.device,
        "--precision",
        setting.precision,
        "--compile",
        "--fused-optimizer",
        "--sequence-length",
        str(setting.sequence_length),
        "--batch-size",
        str(setting.micro_batch_size),
        "--steps",
        "10",
        "--warmup",
        "5",
        "--repeats",
        "3",
        "--threads",
        str(args.threads),
        "--attention",
        setting.attention,
        "--lm-head",
        setting.lm_head,
        "--samples",
        args.paper.pretraining.samples,
        "--json",
        str(out),
    ]
    log = args.work / "throughput.log"
    with open(log, "w") as handle:
        done = subprocess.run(command, cwd=REPOSITORY, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=420)
    if done.returncode != 0:
        raise SectionFailed(f"pretrain_throughput exited {done.returncode}: {tail(log)}")
    measured = json.loads(out.read_text())
    record["matmul_peak_tflops"] = measured["peak_flops"] / 1e12
    record["datasheet_peak_tflops"] = measured["datasheet_peak_flops"] / 1e12
    record["batch"] = batch_line(setting, args.size)
    record["samples"] = args.paper.pretraining.samples
    for kind, by_who in measured["summary"].items():
        by_who["ours_over_trainer"] = by_who["ours"]["tokens_per_second"] / by_who["trainer"]["tokens_per_second"]
        record[kind] = by_who


def section_pretrain_resume(args: argparse.Namespace, record: dict) -> None:
    config, plans = args.paper, args.paper_plans
    plan = plans[f"clm-{args.size}"]
    spec = jobs.pretrain_spec(config, plan)
    init = args.work / f"init-{args.size}"
    initialize(args, config, args.size, 3 * args.sequence_length + 1, init)
    straight, resumed = args.work / "pretrain-straight", args.work / "pretrain-resumed"
    record["straight_seconds"] = pretrain(args, spec, init, straight, args.device)
    record["resumed_seconds"] = pretrain(args, spec, init, resumed, args.device, kill_after_state=True)
    resumed_log = resumed.with_suffix(".log").read_text()
    if "resumed from" not in resumed_log:
        raise SectionFailed("the rerun after SIGKILL did not resume from the saved state")
    summaries = [json.loads((run / "summary.json").read_text()) for run in (straight, resumed)]
    heldout = [summary["heldout_loss"] for summary in summaries]
    if not all(isinstance(loss, float) and math.isfinite(loss) for loss in heldout):
        raise SectionFailed(f"non-finite held-out loss: {heldout}")
    losses = [logged_losses(read_log(run), "loss") for run in (straight, resumed)]
    common = sorted(set(losses[0]) & set(losses[1]))
    record["steps"] = summaries[0]["trained_steps"]
    record["tokens_per_second"] = summaries[0]["tokens_per_second"]
    record["heldout_loss"] = heldout
    record["max_train_loss_difference"] = max(abs(losses[0][s] - losses[1][s]) for s in common)
    record["num_parameters"] = summaries[0]["num_parameters"]
    difference = abs(heldout[0] - heldout[1])
    record["heldout_loss_difference"] = difference
    if difference > args.loss_tolerance:
        raise SectionFailed(f"resumed run ends {difference:.4f} from the straight one (tolerance {args.loss_tolerance})")
    args.pretrained = straight / "model"


def score_pretrained(args: argparse.Namespace, record: dict, stage_name: str, spec: str, *data: str) -> dict:
    """Run ``stage_name`` (finetune, minimal-pairs) on section 2's model on the device; its scores.json."""
    if args.pretrained is None:
        raise SectionFailed("needs pretrain_resume's model, which failed")
    out = args.work / stage_name
    started = time.perf_counter()
    stage(
        args,
        stage_name,
        "--spec",
        spec,
        "--model",
        str(args.pretrained),
        *data,
        "--out",
        str(out),
        "--threads",
        str(args.threads),
        "--device",
        args.device,
        timeout=args.stage_timeout,
        log=out.with_suffix(".log"),
    )
    record["seconds"] = time.perf_counter() - started
    return json.loads((out / "scores.json").read_text())


def section_finetune(args: argparse.Namespace, record: dict) -> None:
    spec = jobs.finetune_spec(args.paper, "sentiment", "clm", args.size, "clm", None)
    scores = score_pretrained(args, record, "finetune", spec, "--task-dir", str(args.inputs / "data/tasks/sentiment"))
    record["metric"] = scores["metric"]
    record["grid"] = [
        {key: point[key] for key in ("learning_rate", "seed", "trained_steps", "validation", "test", "seconds")} for point in scores["grid"]
    ]


def section_minimal_pairs(args: argparse.Namespace, record: dict) -> None:
    spec = jobs.minimal_pairs_spec(args.paper, "clm", args.size, "clm", None)
    scores = score_pretrained(args, record, "minimal-pairs", spec, "--pairs", str(args.inputs / "data/minimal_pairs/pairs.jsonl"))
    for method, pairs in scores["methods"].items():
        record[f"{method}_accuracy"] = sum(good > bad for good, bad in zip(pairs["good"], pairs["bad"])) / max(len(pairs["good"]), 1)
        record["num_pairs"] = len(pairs["good"])


def section_cpu_gpu_agreement(args: argparse.Namespace, record: dict) -> None:
    resolved = resolve(merge(read_configs([]), merge(single_runs(20), TINY_FP32)))
    spec = jobs.pretrain_spec(resolved.config, resolved.plans["clm-tiny"])
    init = args.work / "init-tiny"
    initialize(args, resolved.config, "tiny", 3 * 128 + 1, init)
    runs = {"cpu": args.work / "tiny-cpu", "gpu": args.work / f"tiny-{args.device}-gpu"}
    for which, out in runs.items():
        record[f"{which}_seconds"] = pretrain(args, spec, init, out, "cpu" if which == "cpu" else args.device)
    logs = {which: read_log(out) for which, out in runs.items()}
    for column in ("loss", "heldout_loss"):
        cpu, gpu = (logged_losses(logs[which], column) for which in ("cpu", "gpu"))
        record[f"max_{column}_difference"] = max(abs(cpu[step] - gpu[step]) for step in cpu)
    record["final_loss"] = {which: float(rows[-1]["loss"]) for which, rows in logs.items()}
    record["tolerance"] = args.loss_tolerance
    worst = max(record["max_loss_difference"], record["max_heldout_loss_difference"])
    if worst > args.loss_tolerance:
        raise SectionFailed(f"CPU and GPU losses differ by up to {worst:.4f} (tolerance {args.loss_tolerance})")


SECTIONS: dict[str, Callable[[argparse.Namespace, dict], None]] = {
    "throughput": section_throughput,
    "pretrain_resume": section_pretrain_resume,
    "finetune": section_finetune,
    "minimal_pairs": section_minimal_pairs,
    "cpu_gpu_agreement": section_cpu_gpu_agreement,
}


def environment(device: str) -> dict[str, Any]:
    import transformers

    return {
        **code_version(),  # this project's commit only from its own checkout, and its source's sha256 always
        "command": sys.argv,
        "device": device,
        "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
        "gpu_memory_gb": torch.cuda.get_device_properties(0).total_memory / 1e9 if device == "cuda" else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=Path, default=Path("results"), help="results/ of the smoke config's inputs (see above)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/gpu_acceptance"), help="scratch directory (emptied runs go here)")
    parser.add_argument(
        "--json", type=Path, default=Path("gpu_acceptance.json"), help="where the record goes (rewritten after each section)"
    )
    parser.add_argument("--size", default="210m", help="a size of config/paper.yaml")
    parser.add_argument("--sequence-length", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--stage-timeout", type=float, default=300, help="seconds one stage may take")
    parser.add_argument("--loss-tolerance", type=float, default=0.02, help="largest loss difference taken as GPU rounding")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: a dry run of the script itself")
    parser.add_argument("--sections", nargs="+", choices=sorted(SECTIONS), default=list(SECTIONS))
    args = parser.parse_args()
    require_cuda(args.device)
    args.inputs, args.work = args.inputs.resolve(), args.work.resolve()
    require_inputs(args.inputs)
    args.work.mkdir(parents=True, exist_ok=True)
    try:
        overlay, resolved = paper_shrunk(args.size, args.sequence_length)
    except PipelineError as error:
        refuse(str(error))
    args.paper, args.paper_plans, args.pretrained = resolved.config, resolved.plans, None
    record: dict[str, Any] = {"environment": environment(args.device), "paper_overlay": strict.to_plain(overlay), "sections": {}}
    for name in args.sections:
        section: dict[str, Any] = {}
        started = time.perf_counter()
        print(f"{name} ...", flush=True)
        try:
            SECTIONS[name](args, section)
            section["verdict"] = "passed"
        except (SectionFailed, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as error:
            section["verdict"] = "failed"
            section["error"] = f"{type(error).__name__}: {error}"
        section["wall_seconds"] = time.perf_counter() - started
        record["sections"][name] = section
        print(f"{name}: {section['verdict']} in {section['wall_seconds']:.0f} s {section.get('error', '')}", flush=True)
        args.json.write_text(json.dumps(record, indent=2, default=str) + "\n")
    failed = [name for name, section in record["sections"].items() if section["verdict"] != "passed"]
    print(json.dumps(record, indent=2, default=str))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
