"""``python -m pipeline cost``: the estimate of :mod:`pipeline.workflow.cost` as it is printed (GPU-hours per
stage, beside the study's own; the budget line; peak memory per size; the data stage), on the
config's GPU or on the ones ``--gpu`` names, fine-tuning measured on the tasks prepared in
``--directory`` (:mod:`pipeline.finetune.lengths`), from the study datasets' records where not
(:mod:`pipeline.workflow.record_lengths`). The Snakemake workflow prints the same text when
``hardware.print_cost_estimate`` is set.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from pipeline.config import Config
from pipeline.workflow.configure import DEFAULT_CONFIG, Resolved, resolve_in
from pipeline.workflow.cost import (
    Lengths,
    Plans,
    StageCost,
    data_stage_cost,
    finetune_peak_memory,
    parameters,
    peak_memory,
    stage_costs,
)
from pipeline.workflow.measured_mfu import finetune_mfu_sources, measured_finetune_for, mfu_sources
from pipeline.workflow.record_lengths import with_records
from pipeline.workflow.rule_params import gpu_jobs
from pipeline.workflow.targets import every_job

# The study's own count (paper section 2, "Experimental scale"): what it trained and fine-tuned,
# and its compute by stage in MI250X GPU-hours, which this estimate's stages add up to.
STUDY_SCOPE = {"models": 38, "checkpoints fine-tuned": 50, "fine-tuning runs": 15_120}
STUDY_GPU_HOURS = {  # study stage -> (MI250X GPU-hours, this estimate's stages)
    "base models": (81_000, ("pretrain (objectives)",)),
    "two-stage": (16_000, ("pretrain (short_budget)", "pretrain (two_stage)")),
    "continued pretraining": (4_000, ("pretrain (continued)",)),
    "fine-tuning": (9_000, ("finetune", "finetune_checkpoint")),
}


def beside_the_study(costs: Sequence[StageCost], resolved: Resolved, config: Config) -> list[str]:
    """This plan's models, fine-tuned checkpoints and runs, and its GPU-hours by the study's
    stages, beside the study's own numbers (the hours are of other GPUs: compare shares)."""
    by_stage = {cost.stage: cost for cost in costs}
    finetune_runs = sum(by_stage[s].runs for s in ("finetune", "finetune_checkpoint") if s in by_stage)
    plans, curve_points = resolved.plans, resolved.curve_points
    ours = {"models": len(plans), "checkpoints fine-tuned": len(plans) + len(curve_points), "fine-tuning runs": finetune_runs}
    trained = sum(config.tasks[task].trained_with is None for task in config.finetuning.tasks)
    lines = [
        "Beside the study's scope (paper section 2; its hours are MI250X GPU-hours, these the GPU above: compare the shares):",
        "  " + "; ".join(f"{what} {ours[what]:,} (study {theirs:,})" for what, theirs in STUDY_SCOPE.items()),
        f"  (fine-tuning runs: every checkpoint x {trained} trained tasks x its grid, the untrained baseline's where fine-tuned; tasks"
        " scored on another's models (trained_with) add none, as the study's nq and mldr_en on its MS MARCO model)",
    ]
    total = sum(cost.gpu_hours for cost in costs if any(cost.stage in stages for _, stages in STUDY_GPU_HOURS.values()))
    study_total = sum(hours for hours, _ in STUDY_GPU_HOURS.values())
    for name, (hours, stages) in STUDY_GPU_HOURS.items():
        mine = sum(by_stage[s].gpu_hours for s in stages if s in by_stage)
        share = f"{mine / total:>6.1%}" if total else "     -"
        lines.append(f"  {name:<30}{mine:>12,.0f} GPU-hours {share}   study {hours:>7,} {hours / study_total:>6.1%}")
    lines.append(f"  {'total':<30}{total:>12,.0f} GPU-hours          study {study_total:>7,}")
    return lines


# GPUs the estimate can be asked for by name (``--gpu``): datasheet dense bf16 peak and memory.
# The H200 is the H100's compute die with more and faster memory: the same peak.
GPU_MODELS = {
    "h100": {"gpu_name": "H100 80GB SXM", "gpu_peak_tflops": 989.0, "gpu_memory_gb": 80.0},
    "h200": {"gpu_name": "H200 141GB", "gpu_peak_tflops": 989.0, "gpu_memory_gb": 141.0},
}


def on_gpu(config: Config, model: str) -> Config:
    """``config`` with its hardware the GPU model ``model`` names (a key of :data:`GPU_MODELS`)."""
    return dataclasses.replace(config, hardware=dataclasses.replace(config.hardware, **GPU_MODELS[model]))


def plan_costs(config: Config, resolved: Resolved, lengths: Lengths | None = None) -> list[StageCost]:
    """The estimate's rows: every job of ``resolved`` whose rule declares a kind of GPU job, costed
    under ``config`` (``resolved``'s own, or on another GPU or grid, which plan the same jobs)."""
    return stage_costs(config, resolved.plans, every_job(resolved), gpu_jobs(), lengths)


def lengths_text(config: Config, plans: Plans, lengths: Lengths) -> list[str]:
    """Which tasks' fine-tuning is costed from measured lengths, which from their datasets' records,
    and which at the cap (no record)."""
    trained = [task for task in config.finetuning.tasks if config.tasks[task].trained_with is None]
    capped = [task for task in trained if task not in lengths]
    lines = []
    for source, heading in (
        ("measured", "fine-tuning measured on the prepared rows"),
        (
            "record",
            "fine-tuning from the datasets' records, not measured (pipeline/external/published/hub_records.yaml: published rows and"
            " lengths, words x 1.3 where a source counts words; padded to 1.5 x the mean, 8 framing tokens an example: assumed)",
        ),
    ):
        found = [lengths[task] for task in trained if task in lengths and lengths[task].source == source]
        if found:
            lines.append(
                f"  {heading} (one grid point: steps x padded tokens, + scored tokens): "
                + "; ".join(
                    f"{m.task} {m.steps} x {m.train_tokens / m.steps:,.0f} (mean {m.mean_tokens:,.0f} a row) + {m.scored_tokens:,.0f}"
                    for m in found
                )
            )
    if capped:
        lines.append(
            f"  fine-tuning at the cap (upper bound: max_steps batches of max_length tokens, scoring not counted) for {len(capped)} task(s)"
            f" with no record and not prepared here: {', '.join(capped)} (`python -m pipeline cost --directory <workdir>` measures"
            " prepared ones)"
        )
    if any(measured_finetune_for(config, task, size) is None for task, size in finetuned_jobs(config, plans)):
        lines.append(
            f"  every fine-tuning step not measured on this GPU adds {config.hardware.assumed_finetune_step_seconds:g} s (assumed:"
            " launches and AdamW; hardware.assumed_finetune_step_seconds); retrieval's cached loss costs 8N a token, not 6N"
        )
    return lines


def budget_text(config: Config, total_hours: float, lengths: Lengths) -> list[str]:
    """Whether the plan fits ``hardware.budget_gpu_hours``, and by how much it misses (and why,
    where fine-tuning is costed at its cap)."""
    budget = config.hardware.budget_gpu_hours
    if budget is None:
        return []
    verdict = f"fits, {budget - total_hours:,.1f} to spare" if total_hours <= budget else f"MISSES by {total_hours - budget:,.1f}"
    capped = [task for task in config.finetuning.tasks if config.tasks[task].trained_with is None and task not in lengths]
    why = f" (fine-tuning of {len(capped)} task(s) at the cap, an upper bound: cost them prepared, --directory)" if capped else ""
    if not capped and any(tokens.source == "record" for tokens in lengths.values()):
        why = " (fine-tuning from published lengths where not measured)"
    return [f"  budget: {budget:g} GPU-hours on one {config.hardware.gpu_name}; this plan {total_hours:,.1f}: {verdict}{why}"]


def full_grid_text(config: Config, resolved: Resolved, lengths: Lengths, total_hours: float) -> list[str]:
    """The plan on the other grid: under a reduced grid (``finetuning.selection_seeds``), the study's
    full grid, whose cells compare with the study's in the learning-rate choice too; under the full
    grid, the reduced one (every rate on the first seed, config/one_gpu_reduced.yaml's)."""
    finetuning = config.finetuning
    if finetuning.selection_seeds is None:
        other = dataclasses.replace(finetuning, selection_seeds=finetuning.seeds[:1])
        hours = sum(cost.gpu_hours for cost in plan_costs(dataclasses.replace(config, finetuning=other), resolved, lengths))
        return [
            f"  full grid: every rate on every seed ({finetuning.num_runs} runs per task and model, the study's learning-rate choice);"
            f" the reduced grid (every rate on seed {other.seeds_at_every_rate[0]}, the other seeds at the rate it chooses:"
            f" {other.num_runs} runs, cells marked for it) would make the plan {hours:,.1f} GPU-hours ({hours - total_hours:+,.1f})"
        ]
    full = dataclasses.replace(config, finetuning=dataclasses.replace(finetuning, selection_seeds=None))
    hours = sum(cost.gpu_hours for cost in plan_costs(full, resolved, lengths))
    return [
        f"  reduced grid: every rate on seeds {', '.join(map(str, finetuning.seeds_at_every_rate))}, the other seeds at the"
        f" rate they choose ({finetuning.num_runs} runs per task and model); the study's full grid"
        f" ({full.finetuning.num_runs} runs, its learning-rate choice) would make the plan {hours:,.1f} GPU-hours"
        f" (+{hours - total_hours:,.1f})"
    ]


def finetuned_jobs(config: Config, plans: Plans) -> list[tuple[str, str]]:
    """(task, size) of the fine-tuning jobs' kinds: every trained task at every size a run is pretrained at."""
    trained = [task for task in config.finetuning.tasks if config.tasks[task].trained_with is None]
    return [(task, size) for task in trained for size in sorted({plan.size for plan in plans.values()})]


def format_estimate(config: Config, resolved: Resolved, origin: str, lengths: Lengths | None = None) -> str:
    """The estimate of ``resolved``'s plan on ``config``'s GPU (``resolved.config``, or it on another GPU)."""
    lengths, plans = lengths or {}, resolved.plans
    hardware = config.hardware
    world_size = max(hardware.gpus_per_run, 1)
    lines = [
        f"Cost estimate for {origin} on {hardware.gpu_name} ({hardware.gpu_peak_tflops:g} TFLOP/s bf16 peak, {hardware.gpu_memory_gb:g} "
        "GB),"
        f" {hardware.gpus_per_run} GPU(s) per pretraining job",
        "  FLOPs = 6 x N x tokens (N = non-embedding parameters + LM-head parameters x the share of positions the head runs on:"
        " those with a loss under sparse prediction, as bench/pretrain_throughput.py's MFU counts them);"
        f" pretraining at {mfu_sources(config, plans)},"
        f" fine-tuning at {finetune_mfu_sources(config, finetuned_jobs(config, plans))}",
        *lengths_text(config, plans, lengths),
        f"  {'stage':<30}{'jobs':>6}{'runs':>8}{'tokens':>12}{'EFLOP':>10}{'GPU-hours':>12}",
    ]
    costs = plan_costs(config, resolved, lengths)
    for cost in costs:
        lines.append(
            f"  {cost.stage:<30}{cost.jobs:>6}{cost.runs:>8}{cost.tokens:>12.3g}{cost.flops / 1e18:>10.3g}{cost.gpu_hours:>12,.1f}"
        )
    total_hours = sum(c.gpu_hours for c in costs)
    lines.append(f"  {'total':<30}{'':>6}{'':>8}{'':>12}{sum(c.flops for c in costs) / 1e18:>10.3g}{total_hours:>12,.1f}")
    lines += budget_text(config, total_hours, lengths)
    lines += full_grid_text(config, resolved, lengths, total_hours)
    unsized = [model.name for model in config.outside_models if model.size is None]
    if unsized:
        lines.append(f"  not costed: {len(unsized)} outside model(s) without a size ({', '.join(unsized)})")
    lines += beside_the_study(costs, resolved, config)
    lines += [
        f"Peak memory per GPU (estimate; pretraining: each size's most memory-hungry objective; fine-tuning: the longest"
        f" task's micro-batch), against {hardware.gpu_memory_gb:g} GB:",
        f"  {'size':<8}{'params':>9}{'micro-batch':>13}{'sharding':>10}{'weights+AdamW':>15}{'activations':>13}{'logits':>8}{'total':>8}",
    ]
    sizes = sorted({p.size for p in plans.values()}, key=lambda s: parameters(config.sizes[s], 1).non_embedding)
    for m in [*(peak_memory(config, plans, size, world_size) for size in sizes), *(finetune_peak_memory(config, size) for size in sizes)]:
        verdict = "fits" if m.fits else f"EXCEEDS {hardware.gpu_memory_gb:g} GB"
        lines.append(
            f"  {m.size:<8}{m.num_parameters / 1e6:>8.0f}M{m.micro_batch_size:>13}{m.sharding:>10}{m.states_gb:>13.1f}GB"
            f"{m.activations_gb:>11.1f}GB{m.logits_gb:>6.1f}GB{m.total_gb:>6.1f}GB  {verdict}"
        )
    data = data_stage_cost(config)
    if data is not None:
        lines += [
            f"Data stage (CPU; {hardware.data_tokens_per_cpu_second:,.0f} tokens/s per core and {hardware.data_text_bytes_per_token:g} "
            "bytes"
            " of text per token, as bench/data_stage.py measured them):",
            f"  {data.num_shards} prepare_corpus + {data.num_shards} pack jobs over {data.tokens:.3g} tokens: {data.cpu_hours:,.0f} "
            "CPU-hours"
            f" ({data.cpu_hours / data.num_shards:,.1f} per shard); disk {data.text_gb:,.0f} GB of prepared text"
            f" + {data.tokens_gb:,.0f} GB of tokens (uint{8 * data.token_bytes})",
        ]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--configfile", nargs="*", default=[], help="config files merged over config/default.yaml, as snakemake --configfile"
    )
    parser.add_argument(
        "--gpu", nargs="+", choices=sorted(GPU_MODELS), help="cost on these GPU models instead of the config's hardware (one estimate each)"
    )
    parser.add_argument(
        "--directory",
        type=Path,
        help="a working directory whose prepared tasks (results/data/tasks) and tokenizer (results/tokenizer) the fine-tuning"
        " tokens are measured on; tasks not prepared there are costed from their dataset's record, at the cap without one",
    )


def run(args: argparse.Namespace) -> None:
    directory = (args.directory or Path(".")).resolve()
    resolved = resolve_in(args.configfile, directory)
    name = " ".join(Path(p).name for p in args.configfile) or DEFAULT_CONFIG
    if args.directory:  # measuring encodes rows: torch and the task types, imported only then
        from pipeline.finetune.lengths import measured_lengths

        measured = measured_lengths(resolved.config, directory)
    else:
        measured = {}
    lengths = with_records(resolved.config, measured)
    configs = [on_gpu(resolved.config, gpu) for gpu in args.gpu] if args.gpu else [resolved.config]
    print("\n\n".join(format_estimate(config, resolved, name, lengths) for config in configs))
