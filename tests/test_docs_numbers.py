"""Figures typed into the docs that the code computes are checked against it, so that none
drifts when an estimate or a plan changes: each row names the page, the text around the figure
and how the figure is computed here. (Measured numbers, which only a run gives, carry the
machine and commit they were measured at instead: bench/records/.)"""

from __future__ import annotations

import functools

import pytest

from pipeline.workflow.configure import Resolved, read_configs, resolve
from pipeline.workflow.cost import pretraining_gpu_hours
from pipeline.workflow.cost_printout import on_gpu, plan_costs
from pipeline.workflow.record_lengths import with_records
from pipeline.workflow.targets import every_job
from tests.conftest import REPO


@functools.cache
def resolved(*overlays: str) -> Resolved:
    return resolve(read_configs([str(REPO / "config" / name) for name in overlays]), overlays[-1].removesuffix(".yaml"))


def gpu_hours(overlays: tuple[str, ...], stage: str = "", gpu: str | None = None, lengths: bool = True) -> float:
    """The estimate's GPU-hours of the stages starting with ``stage`` on ``gpu`` (the config's, an H100,
    by default), fine-tuning from the datasets' published records as `python -m pipeline cost` prints
    it (``lengths``; else at the cap)."""
    plan = resolved(*overlays)
    config = on_gpu(plan.config, gpu) if gpu else plan.config
    costs = plan_costs(config, plan, with_records(config, {}) if lengths else None)
    return sum(cost.gpu_hours for cost in costs if cost.stage.startswith(stage))


def run_hours(overlays: tuple[str, ...], run: str, gpu: str) -> float:
    plan = resolved(*overlays)
    return pretraining_gpu_hours(on_gpu(plan.config, gpu), plan.plans[run])


def one_gpu_row(gpu: str) -> str:
    """docs/one-gpu.md's cost row of ``gpu``: each run, pretraining, and fine-tuning and total on both grids."""
    hours = [run_hours(ONE_GPU, "clm-610m", gpu), run_hours(ONE_GPU, "mlm-610m", gpu)]
    grids = [(gpu_hours(tier, "finetune", gpu), gpu_hours(tier, "", gpu)) for tier in (ONE_GPU, REDUCED)]
    return (
        f"| {hours[0]:.2f} h | {hours[1]:.2f} h | {gpu_hours(ONE_GPU, 'pretrain', gpu):.1f} h | "
        + " | ".join(f"{finetune:.1f} h | {total:.1f} h" for finetune, total in grids)
        + " |"
    )


PAPER, ONE_GPU = ("paper.yaml",), ("paper.yaml", "one_gpu.yaml")
REDUCED = (*ONE_GPU, "one_gpu_reduced.yaml")

DOCUMENTED = [
    ("docs/paper-scale.md", "{:,.0f} H100 (estimate", lambda: gpu_hours(PAPER)),
    ("docs/paper-scale.md", "{:,.0f} GPU-hours in all", lambda: gpu_hours(PAPER)),
    ("docs/paper-scale.md", "{:,.0f} of it fine-tuning, from the datasets' published lengths", lambda: gpu_hours(PAPER, "finetune")),
    ("docs/paper-scale.md", "about {:,.0f} GPU-hours, where", lambda: gpu_hours(PAPER, "finetune")),
    ("docs/paper-scale.md", "the 2,028-token cap\nwould give {:,.0f}", lambda: gpu_hours(PAPER, "finetune", lengths=False)),
    ("docs/paper-scale.md", "| total | | {:,.0f} |", lambda: gpu_hours(PAPER)),
    ("docs/paper-scale.md", "about {:,.0f} GPU-hours;", lambda: round(gpu_hours(PAPER, "pretrain"), -1)),
    # Snakemake's dry run counts its target rule, `all`, as one more job
    ("docs/paper-scale.md", "{:,} jobs", lambda: len(list(every_job(resolved(*PAPER)))) + 1),
    ("README.md", "Pretraining is {:.1f} H100-hours", lambda: gpu_hours(ONE_GPU, "pretrain")),
    ("README.md", "fine-tuning {:.1f} H100-hours", lambda: gpu_hours(ONE_GPU, "finetune")),
    ("README.md", "({:.1f} on the reduced grid", lambda: gpu_hours(REDUCED, "finetune")),
    ("docs/one-gpu.md", "| H100 80GB {}", lambda: one_gpu_row("h100")),
    ("docs/one-gpu.md", "| H200 {}", lambda: one_gpu_row("h200")),
    ("docs/one-gpu.md", "micro-batches of {}", lambda: resolved(*ONE_GPU).config.pretraining.compute.for_size("610m").micro_batch_size),
]


@pytest.mark.parametrize(("page", "text", "figure"), DOCUMENTED, ids=[f"{page}: {text}" for page, text, _ in DOCUMENTED])
def test_a_documented_figure_is_what_the_code_computes(page: str, text: str, figure) -> None:
    expected = text.format(figure())
    assert expected in (REPO / page).read_text(), f"{page} should say {expected!r}"
