"""Figures typed into the docs that the code computes are checked against it, so that none
drifts when an estimate or a plan changes: each row names the page, the text around the figure
and how the figure is computed here. (Measured numbers, which only a run gives, carry the
machine and commit they were measured at instead: bench/records/.)"""

from __future__ import annotations

import functools

import pytest

from pipeline.workflow.configure import Resolved, read_configs, resolve
from pipeline.workflow.cost import stage_costs
from pipeline.workflow.targets import every_job
from tests.conftest import REPO


@functools.cache
def resolved(*overlays: str) -> Resolved:
    return resolve(read_configs([str(REPO / "config" / name) for name in overlays]), overlays[-1].removesuffix(".yaml"))


def gpu_hours(overlays: tuple[str, ...], stage: str = "") -> float:
    """The estimate's GPU-hours on the config's GPU (H100) of the stages starting with ``stage``."""
    plan = resolved(*overlays)
    return sum(cost.gpu_hours for cost in stage_costs(plan.config, plan.plans, plan.curve_points) if cost.stage.startswith(stage))


PAPER, ONE_GPU = ("paper.yaml",), ("paper.yaml", "one_gpu.yaml")

DOCUMENTED = [
    ("docs/paper-scale.md", "{:,.0f} H100 (estimate", lambda: gpu_hours(PAPER)),
    ("docs/paper-scale.md", "{:,.0f} GPU-hours in all", lambda: gpu_hours(PAPER)),
    ("docs/paper-scale.md", "{:,.0f} of it fine-tuning's upper bound", lambda: gpu_hours(PAPER, "finetune")),
    ("docs/paper-scale.md", "about {:,.0f} GPU-hours", lambda: round(gpu_hours(PAPER, "pretrain"), -1)),
    # Snakemake's dry run counts its target rule, `all`, as one more job
    ("docs/paper-scale.md", "{:,} jobs", lambda: len(list(every_job(resolved(*PAPER)))) + 1),
    ("README.md", "Pretraining is {:.1f} H100-hours", lambda: gpu_hours(ONE_GPU, "pretrain")),
    ("README.md", "at most {:.1f} H100-hours", lambda: gpu_hours(ONE_GPU, "finetune")),
    ("docs/one-gpu.md", "| {:.1f} h | <=", lambda: gpu_hours(ONE_GPU, "pretrain")),
    ("docs/one-gpu.md", "<= {:.1f} h at the cap | <=", lambda: gpu_hours(ONE_GPU, "finetune")),
]


@pytest.mark.parametrize(("page", "text", "figure"), DOCUMENTED, ids=[f"{page}: {text}" for page, text, _ in DOCUMENTED])
def test_a_documented_figure_is_what_the_code_computes(page: str, text: str, figure) -> None:
    expected = text.format(figure())
    assert expected in (REPO / page).read_text(), f"{page} should say {expected!r}"
