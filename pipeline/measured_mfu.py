"""The MFU pretraining reached where it was measured, for the cost estimate in place of the
assumed one.

``bench/gpu_acceptance.sh`` writes a record of each GPU it ran on
(``bench/records/gpu_acceptance-<gpu>-<date>[...].json``): tokens/s and MFU of the trainer at a
size (``--size``: 210m by default; ``--size 1b --sections throughput`` measures only that) as the
config's jobs of that size compute (:func:`setting_of`: micro-batch, sequence length, precision,
vocabulary, written in the record's batch line by :func:`batch_line`), against the GPU's datasheet
peak (6N model FLOPs, the LM head counted at the positions with a loss, as
:func:`pipeline.cost.pretraining_flops` counts them). Where a record matches the config's GPU (by
model: H100, H200, ...), the size, the objective kind and the setting, its MFU replaces
``hardware.assumed_mfu`` for that run, and the estimate names the record; elsewhere the assumption
stands and is printed as one. Of several matching records the newest is taken: the one whose
commit comes latest in this repository's history.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.config import Config
    from pipeline.pretrain.plan import RunPlan

REPOSITORY = Path(__file__).resolve().parents[1]
RECORDS = REPOSITORY / "bench" / "records"


# A record's batch line (:func:`batch_line`): "8 x 2048 tokens, bf16, 210m, vocabulary 128,256".
BATCH_LINE = re.compile(r"(\d+) x (\d+) tokens, (\w+), (\S+), vocabulary ([\d,]+)")


@dataclass(frozen=True)
class Setting:
    """How a pretraining job of one size computes, as far as its MFU depends on it."""

    micro_batch_size: int
    sequence_length: int
    precision: str
    vocab_size: int


def setting_of(config: Config, size: str) -> Setting:
    pretraining, compute = config.pretraining, config.pretraining.compute.for_size(size)
    micro = compute.micro_batch_size or pretraining.batch_size
    return Setting(micro, pretraining.sequence_length, compute.precision, config.tokenizer.vocab_size)


def batch_line(setting: Setting, size: str) -> str:
    """What a record says it measured, read back by :data:`BATCH_LINE`."""
    return f"{setting.micro_batch_size} x {setting.sequence_length} tokens, {setting.precision}, {size}, vocabulary {setting.vocab_size:,}"


@dataclass(frozen=True)
class MeasuredMfu:
    mfu: float  # against the GPU's datasheet peak, as hardware.gpu_peak_tflops is
    record: str  # the record it comes from, relative to the repository


@functools.cache
def measured_mfu(gpu_name: str, size: str, kind: str, setting: Setting) -> MeasuredMfu | None:
    """The newest record's MFU for ``kind`` (clm, mlm, ...) at ``size`` in ``setting`` on the GPU model ``gpu_name`` names;
    None without one."""
    model = gpu_name.split()[0].lower() if gpu_name.split() else ""
    found = []
    for path in sorted(RECORDS.glob("gpu_acceptance-*.json")):
        record = json.loads(path.read_text())
        throughput = record.get("sections", {}).get("throughput", {})
        sizes = record.get("paper_overlay", {}).get("pretraining", {}).get("sizes")
        gpu = str(record.get("environment", {}).get("gpu", "")).lower()
        batch = BATCH_LINE.fullmatch(str(throughput.get("batch", "")))
        measured = Setting(int(batch[1]), int(batch[2]), batch[3], int(batch[5].replace(",", ""))) if batch else None
        if (
            model
            and model in gpu
            and sizes == [size]
            and measured == setting
            and "mfu_datasheet" in throughput.get(kind, {}).get("ours", {})
        ):
            order = history_position(record.get("environment", {}).get("git_commit"))
            found.append(
                (order, path.name, MeasuredMfu(throughput[kind]["ours"]["mfu_datasheet"], path.relative_to(REPOSITORY).as_posix()))
            )
    return max(found, key=lambda entry: entry[:2])[2] if found else None


def history_position(commit: str | None) -> int:
    """How many commits lead to ``commit`` in this repository (later commits have more); -1 if unknown."""
    if not commit:
        return -1
    try:
        done = subprocess.run(["git", "rev-list", "--count", commit], cwd=REPOSITORY, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return -1
    return int(done.stdout) if done.returncode == 0 and done.stdout.strip().isdigit() else -1


def measured_for(config: Config, plan: RunPlan) -> MeasuredMfu | None:
    """The measured MFU of ``plan``'s run: its objective kind at its size, in the setting its job computes in."""
    kind = config.objectives[plan.objective]["kind"]
    return measured_mfu(config.hardware.gpu_name, plan.size, kind, setting_of(config, plan.size))


def mfu_sources(config: Config, plans: Mapping[str, RunPlan]) -> str:
    """Which MFU the pretraining hours rest on: each measured one with its record, then the assumption."""
    measured = {}
    for plan in plans.values():
        found = measured_for(config, plan)
        if found is not None:
            measured[f"{plan.size} {config.objectives[plan.objective]['kind']}"] = found
    by_record: dict[str, list[str]] = {}
    for key, found in sorted(measured.items()):
        by_record.setdefault(found.record, []).append(f"{key} {found.mfu:.1%}")
    said = [f"{', '.join(runs)} measured ({record})" for record, runs in by_record.items()]
    return "; ".join([*said, f"{config.hardware.assumed_mfu:.0%} MFU assumed{' elsewhere' if said else ''}"])
