"""What a run of bench/pretrain_throughput.py says of itself: who ran it (code version, machine), its
medians and MFU, its losses against a baseline run's, its markdown table and where its wall time went, and
the ``--json`` record that holds all of it (written after every measurement, so a run stopped at its time
limit keeps what it measured). bench/finetune_throughput.py records its runs' identity the same way."""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from pipeline.provenance import code_version

IMPORTED = time.perf_counter()  # process_age's origin where /proc is not there


def trainer_micro_batch(args: argparse.Namespace) -> int:
    """The Trainer's sequences per forward pass: --trainer-micro-batch-size, else ours."""
    return args.trainer_micro_batch_size or args.micro_batch_size or args.batch_size


def machine() -> str:
    try:
        cpu = next(
            line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")
        )
    except (OSError, StopIteration):
        cpu = platform.processor()
    gpu = f", GPU {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ""
    return f"{cpu}, {torch.get_num_threads()} threads{gpu}; torch {torch.__version__}, Python {platform.python_version()}"


@functools.cache
def run_identity() -> dict:
    """The code version (git_commit only from this project's own checkout; source_sha256 always) and the
    machine, the same for every record a run writes: hashed and read once, not at each measurement."""
    return {**code_version(), "machine": machine()}


def process_age() -> float:
    """Seconds since this process started (Linux: what a caller's time cap counts, interpreter start-up and
    imports included; elsewhere only since this module's import)."""
    try:
        started = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])  # field 22, starttime, in clock ticks
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started / os.sysconf("SC_CLK_TCK")
    except (OSError, AttributeError, ValueError, IndexError):
        return time.perf_counter() - IMPORTED


def wall_time_line(wall: dict, results: dict, profiles: dict) -> str:
    """Where an attempt's wall time went: before the first run, each run whole (load, compile, warm-up, timed
    steps), the profiled runs, the rest (the second peak, the table), so a time cap can be set from it."""
    runs = [row["run_seconds"] for by_who in results.values() for rows in by_who.values() for row in rows]
    profiled = [profile["run_seconds"] for profile in profiles.values() if "run_seconds" in profile]
    rest = wall["total"] - wall["ready"] - sum(runs) - sum(profiled)
    each = ", ".join(f"{seconds:.1f}" for seconds in runs)
    return (
        f"wall time: {wall['ready']:.1f} s before the first run, {sum(runs):.1f} s in {len(runs)} runs ({each}), "
        f"{sum(profiled):.1f} s profiled, {rest:.1f} s else: {wall['total']:.1f} s in all"
    )


def write_record(
    args: argparse.Namespace,
    results: dict,
    summary: dict,
    peak: float,
    datasheet: float,
    complete: bool,
    profiles: dict | None = None,
    wall: dict | None = None,
) -> None:
    """The ``--json`` record: ``complete`` false while measurements remain (its summary the medians of
    those made, against the peak measured before them); ``profiles``, with --profile, each objective's;
    ``wall``, once complete, the attempt's wall time (:func:`wall_time_line`)."""
    if not args.json:
        return
    record = {
        "args": vars(args),
        "command": sys.argv,
        **run_identity(),
        "complete": complete,
        "peak_flops": peak,
        "datasheet_peak_flops": datasheet,
        "results": results,
        "summary": summary,
        "profile": profiles or {},
        "wall_seconds": wall or {},
    }
    Path(args.json).write_text(json.dumps(record, indent=2))


def summarize(flops_per_token: Callable[[str], tuple[float, float]], results: dict, peak: float, datasheet: float) -> dict:
    """Per objective and trainer: median tokens/s, MFU against the measured ``peak`` (6N, and 6N +
    attention, per token: ``flops_per_token(objective)``) and against the ``datasheet`` peak (6N: what the
    cost estimate takes), peak memory."""
    summary = {}
    for kind, measured in results.items():
        if not measured.get("ours"):  # not measured yet (a record written along the way)
            continue
        flops, flops_attention = flops_per_token(kind)
        summary[kind] = {}
        for who, rows in measured.items():
            if not rows:
                continue
            median = statistics.median(r["tokens_per_second"] for r in rows)
            summary[kind][who] = {
                "tokens_per_second": median,
                "mfu": median * flops / peak,
                "mfu_with_attention": median * flops_attention / peak,
                "mfu_datasheet": median * flops / datasheet,
                "model_flops_per_token": flops,
                "peak_memory_gb": max(r["peak_memory_gb"] for r in rows),
            }
            if who == "ours":
                summary[kind][who]["final_loss"] = statistics.median(r["final_loss"] for r in rows)
    return summary


# What must match for two runs' losses to be compared: the same model, data, steps and precision.
SAME_RUN = ("init", "size", "vocab_size", "sequence_length", "batch_size", "steps", "warmup", "precision", "dense_lm_head")


def read_baseline(path: str, args: argparse.Namespace) -> dict:
    """The run ``--compare-losses`` names, refused in one line unless it trained what this run trains."""
    try:
        baseline = json.loads(Path(path).read_text())
        differing = [key for key in SAME_RUN if baseline["args"][key] != getattr(args, key)]
    except (OSError, ValueError, KeyError) as error:
        raise SystemExit(f"error: {path}: not a bench/pretrain_throughput.py record ({type(error).__name__}: {error})") from None
    if differing:
        key = differing[0]
        theirs, ours = baseline["args"][key], getattr(args, key)
        raise SystemExit(f"error: {path}: trained with {key} {theirs!r}, this run with {ours!r}: its losses compare to nothing here")
    return baseline


def compare_losses(summary: dict, baseline: dict, args: argparse.Namespace) -> None:
    """Each objective's last-step training loss against the baseline's (same weights, tokens, masks
    and steps: they differ by rounding alone, bf16 noise on a GPU), recorded beside ours."""
    for kind, by_who in summary.items():
        theirs = baseline["summary"].get(kind, {}).get("ours", {}).get("final_loss")
        if theirs is None:
            continue
        difference = by_who["ours"]["final_loss"] - theirs
        by_who["ours"]["loss_versus_baseline"] = {
            "baseline": args.compare_losses,
            "baseline_final_loss": theirs,
            "difference": difference,
            "tolerance": args.loss_tolerance,
            "agrees": abs(difference) <= args.loss_tolerance,
        }


def report(args: argparse.Namespace, summary: dict, peak: float, datasheet: float) -> str:
    version = run_identity()
    commit = (version["git_commit"] or "")[:7] or f"not a checkout, source {version['source_sha256']}"
    attempt = (
        (f"compile {args.compile_scope} ({args.compile_mode})" if args.compile else "eager")
        + f", attention {args.attention}, LM head {args.lm_head}{', Liger layers' if args.liger_layers else ''}"
        + f", SDPA {args.sdpa_backend}, {args.samples} samples"
    )
    lines = [
        f"\n{version['machine']}; commit {commit}; matmul peak {peak / 1e12:.3f} TFLOP/s ({args.precision});"
        f" medians of {args.repeats} x {args.steps} steps of {args.batch_size} x {args.sequence_length} tokens"
        f" (micro-batches of {args.micro_batch_size or args.batch_size}; the Trainer's {trainer_micro_batch(args)}); ours: {attempt}",
        "MFU = tokens/s x 6 x (non-embedding parameters + LM head parameters x share of positions with a loss) / peak;"
        " +attn adds 12 x layers x hidden x sequence length per token; 'datasheet' divides by"
        f" hardware.gpu_peak_tflops ({datasheet / 1e12:.0f} TFLOP/s), the rest by the matmul peak measured here",
        "",
        "| objective | ours tokens/s | Trainer tokens/s | ratio | ours MFU (6N / +attn) | ours MFU, datasheet | Trainer MFU (6N / +attn)"
        " | peak GB ours / Trainer | ours' last-step loss (- baseline's) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, by_who in summary.items():
        ours, trainer = by_who["ours"], by_who.get("trainer")
        mfu = {who: f"{row['mfu']:.1%} / {row['mfu_with_attention']:.1%}" for who, row in by_who.items()}
        versus = (
            f"{trainer['tokens_per_second']:,.0f} | {ours['tokens_per_second'] / trainer['tokens_per_second']:.2f}x" if trainer else "— | —"
        )
        lines.append(
            f"| {kind} | {ours['tokens_per_second']:,.0f} | {versus} | {mfu['ours']} | {ours['mfu_datasheet']:.1%}"
            f" | {mfu.get('trainer', '—')} | {ours['peak_memory_gb']:.1f} / {trainer['peak_memory_gb'] if trainer else float('nan'):.1f}"
            f" | {loss_cell(ours)} |"
        )
    return "\n".join(lines)


def loss_cell(ours: dict) -> str:
    compared = ours.get("loss_versus_baseline")
    if compared is None:
        return f"{ours['final_loss']:.4f}"
    verdict = "within" if compared["agrees"] else "BEYOND"
    return f"{ours['final_loss']:.4f} ({compared['difference']:+.4f}: {verdict} {compared['tolerance']:g})"
