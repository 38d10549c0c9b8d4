"""The MFU pretraining and fine-tuning reached where they were measured, for the cost estimate in
place of the assumed ones.

``bench/gpu_acceptance.sh`` writes a record of each GPU it ran on
(``bench/records/gpu_acceptance-<gpu>-<date>[...].json``): tokens/s and MFU of the trainer at a
size (``--size``: 210m by default; ``--size 1b --sections throughput`` measures only that) as the
config's jobs of that size compute (:func:`setting_of`: micro-batch, sequence length, precision,
vocabulary, written in the record's batch line by :func:`batch_line`), against the GPU's datasheet
peak (6N model FLOPs, the LM head counted at the positions with a loss, as
:func:`pipeline.workflow.cost.pretraining_flops` counts them). Where a record matches the config's GPU (by
model: H100, H200, ...), the size, the objective kind and the setting, its MFU replaces
``hardware.assumed_mfu`` for that run, and the estimate names the record; elsewhere the assumption
stands and is printed as one. Of several matching records the newest is taken: the one whose
commit comes latest in this repository's history (a record without a commit ranks below those with one).

``bench/pretrain_throughput.py --json`` files kept in a record folder (``bench/records/<folder>/*.json``,
e.g. the H200's of 2026-11-28) count the same way where they measured the jobs' path (:data:`JOB_PATH`).
A GPU never measured at a size is costed from another GPU's measurement there, scaled by the two
GPUs' ratio at a size both were measured at (:func:`transferred_mfu`), and the estimate says so.

Fine-tuning: ``bench/finetune_throughput.py``'s records (``"bench": "finetune_throughput"``, in a
record folder) give each task type's MFU at a size and protocol (:func:`measured_finetune_mfu`), in
place of ``hardware.assumed_finetune_mfu``; another GPU's is scaled by the two GPUs' pretraining ratio.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.kernels import DEFAULT_KERNELS

if TYPE_CHECKING:
    from pipeline.config import Config
    from pipeline.pretrain.plan import RunPlan

REPOSITORY = Path(__file__).resolve().parents[2]
RECORDS = REPOSITORY / "bench" / "records"


# A record's batch line (:func:`batch_line`): "8 x 2048 tokens, bf16, 210m, vocabulary 128,256, sdpa, chunked head"
# (records from before the kernels were named: SDPA and the chunked head).
BATCH_LINE = re.compile(r"(\d+) x (\d+) tokens, (\w+), (\S+), vocabulary ([\d,]+)(?:, (\w+), (\w+) head)?")


@dataclass(frozen=True)
class Setting:
    """How a pretraining job of one size computes, as far as its MFU depends on it."""

    micro_batch_size: int
    sequence_length: int
    precision: str
    vocab_size: int
    # The kernels (pretraining.compute.attention and lm_head; bench --attention, --lm-head): records from before
    # those options computed with the defaults
    attention: str = DEFAULT_KERNELS["attention"]
    lm_head: str = DEFAULT_KERNELS["lm_head"]


def setting_of(config: Config, size: str) -> Setting:
    pretraining, compute = config.pretraining, config.pretraining.compute.for_size(size)
    micro = compute.micro_batch_size or pretraining.batch_size
    return Setting(micro, pretraining.sequence_length, compute.precision, config.tokenizer.vocab_size, compute.attention, compute.lm_head)


def batch_line(setting: Setting, size: str) -> str:
    """What a record says it measured, read back by :data:`BATCH_LINE`."""
    tokens = f"{setting.micro_batch_size} x {setting.sequence_length} tokens"
    return f"{tokens}, {setting.precision}, {size}, vocabulary {setting.vocab_size:,}, {setting.attention}, {setting.lm_head} head"


@dataclass(frozen=True)
class MeasuredMfu:
    mfu: float  # against the GPU's datasheet peak, as hardware.gpu_peak_tflops is
    record: str  # the record it comes from, relative to the repository (a transfer's: the other GPU's)
    samples: str = ""  # pretraining: what the record trained on (packed blocks or split samples)
    scaled_by: str = ""  # a transfer's (transferred_mfu): the ratio and the two records it comes from
    steps: int | None = None  # fine-tuning: the steps of the grid points it timed (a short point's set-up and scoring weigh more)
    phases: FinetunePhases | None = None  # fine-tuning: each phase apart, where the record timed them

    def said(self) -> str:
        """The MFU as the estimate's printout names it: a fine-tuning record's phases where it timed them."""
        if self.phases is None:
            return f"{self.mfu:.1%}"
        phases = self.phases
        return f"training {phases.training_mfu:.1%}, scoring {phases.scoring_mfu:.1%}, set-up {phases.set_up_seconds:.1f} s a point"


@dataclass(frozen=True)
class Measurement:
    """One GPU's MFU for one objective kind at one size and setting, as a record holds it."""

    gpu: str  # the record's GPU, lower case ("nvidia h200")
    size: str
    kind: str
    setting: Setting
    mfu: float  # against the datasheet peak
    record: str  # relative to the repository
    order: tuple[int, str]  # newest last: (position of its commit in this repository's history, file name)
    samples: str = "packed"  # what it trained on: packed blocks, or the study's split samples (--samples)


# The options of bench/pretrain_throughput.py under which it computes as a pretraining job does; a
# record measured with another (Liger's layers, whole-model compile, CUDA graphs) is an attempt, not the
# jobs' speed, until the trainer takes it (as it took the Liger head: a Setting's lm_head). A record older
# than an option ran without it (the value here).
JOB_PATH = {"liger_layers": False, "compile_scope": "layers", "compile_mode": "default", "sdpa_backend": "any"}
THROUGHPUT_GPU = re.compile(r"GPU ([^;]+)")  # pretrain_throughput's machine line: "..., GPU NVIDIA H200; torch ..."
FINETUNE_BENCH = "finetune_throughput"  # the "bench" of bench/finetune_throughput.py's records (the same machine line)


@functools.cache
def measurements() -> tuple[Measurement, ...]:
    """Every MFU in bench/records: the acceptance records (``gpu_acceptance-*.json``, their
    throughput section) and bench/pretrain_throughput.py's ``--json`` files in a record folder
    (``*/*.json`` with ``args`` and ``summary``), those measured on the jobs' path only."""
    found = []
    for path in sorted(RECORDS.glob("gpu_acceptance-*.json")):
        record = json.loads(path.read_text())
        throughput = record.get("sections", {}).get("throughput", {})
        sizes = record.get("paper_overlay", {}).get("pretraining", {}).get("sizes")
        batch = BATCH_LINE.fullmatch(str(throughput.get("batch", "")))
        if not batch or not sizes or len(sizes) != 1:
            continue
        kernels = (batch[6], batch[7]) if batch[6] else ()
        setting = Setting(int(batch[1]), int(batch[2]), batch[3], int(batch[5].replace(",", "")), *kernels)
        gpu = str(record.get("environment", {}).get("gpu", "")).lower()
        order = (history_position(record.get("environment", {}).get("git_commit")), path.name)
        for kind, sides in throughput.items():
            if isinstance(sides, dict) and "mfu_datasheet" in sides.get("ours", {}):
                mfu, samples = sides["ours"]["mfu_datasheet"], throughput.get("samples", "packed")
                found.append(Measurement(gpu, sizes[0], kind, setting, mfu, relative(path), order, samples))
    for path, record in bench_records():
        args, gpu = record.get("args", {}), THROUGHPUT_GPU.search(str(record.get("machine", "")))
        if record.get("bench") == FINETUNE_BENCH or not gpu or args.get("device") != "cuda" or not args.get("size"):
            continue
        if any(args.get(k, v) != v for k, v in JOB_PATH.items()):
            continue
        micro = args["micro_batch_size"] or args["batch_size"]
        kernels = (args.get("attention", DEFAULT_KERNELS["attention"]), args.get("lm_head", DEFAULT_KERNELS["lm_head"]))
        setting = Setting(micro, args["sequence_length"], args["precision"], args["vocab_size"], *kernels)
        for kind, sides in record.get("summary", {}).items():
            if "mfu_datasheet" in sides.get("ours", {}):
                order = (history_position(record.get("git_commit")), path.name)
                mfu, samples = sides["ours"]["mfu_datasheet"], args.get("samples", "packed")  # before --samples: packed
                found.append(Measurement(gpu[1].lower(), args["size"], kind, setting, mfu, relative(path), order, samples))
    return tuple(found)


def bench_records() -> Iterable[tuple[Path, dict]]:
    """The benchmarks' JSON records in a record folder (``*/*.json``), those that are objects: a folder
    may hold other JSON (the browser check's list of widths)."""
    for path in sorted(RECORDS.glob("*/*.json")):
        record = json.loads(path.read_text())
        if isinstance(record, dict):
            yield path, record


def relative(path: Path) -> str:
    """A record's path as the estimate names it: bench/records/..."""
    return path.relative_to(RECORDS.parents[1]).as_posix()


def gpu_model(gpu_name: str) -> str:
    """The model a GPU name starts with, lower case: "H100 80GB SXM" -> "h100"."""
    return gpu_name.split()[0].lower() if gpu_name.split() else ""


def preferring(samples: str):
    """A sort key over measurements: those that trained ``samples`` (the job's) above the others, then the newest."""
    return lambda m: (m.samples == samples, m.order)


def measured_mfu(gpu_name: str, size: str, kind: str, setting: Setting, samples: str = "") -> MeasuredMfu | None:
    """The newest record's MFU for ``kind`` (clm, mlm, ...) at ``size`` in ``setting`` on the GPU model ``gpu_name`` names,
    of those that trained ``samples`` (packed or split, the job's) if any did; None without one."""
    model = gpu_model(gpu_name)
    found = [m for m in measurements() if model and model in m.gpu and m.size == size and m.kind == kind and m.setting == setting]
    newest = max(found, key=preferring(samples)) if found else None
    return MeasuredMfu(newest.mfu, newest.record, newest.samples) if newest else None


def gpu_ratio(gpu_name: str, other_gpu: str, kind: str, exclude: tuple[str, Setting] | None = None) -> tuple[float, str] | None:
    """The MFU of the GPU model ``gpu_name`` names over ``other_gpu``'s (a record's GPU) for ``kind``,
    at the newest size and setting both were measured at (other than ``exclude``), and how it was
    found; None where they share none."""
    model = gpu_model(gpu_name)
    pairs = []
    for mine in (m for m in measurements() if model and model in m.gpu and m.kind == kind and (m.size, m.setting) != exclude):
        theirs = [m for m in measurements() if m.gpu == other_gpu and m.kind == kind and m.size == mine.size and m.setting == mine.setting]
        if theirs:
            pairs.append((mine, max(theirs, key=lambda m: m.order)))
    if not pairs:
        return None
    mine, reference = max(pairs, key=lambda pair: pair[0].order)
    gpus = f"{model.upper()}/{other_gpu.split()[-1].upper()}"
    how = f"the {gpus} ratio at {mine.size} micro-batch {mine.setting.micro_batch_size} ({mine.record} / {reference.record})"
    return mine.mfu / reference.mfu, how


def transferred_mfu(gpu_name: str, size: str, kind: str, setting: Setting, samples: str = "") -> MeasuredMfu | None:
    """For a GPU never measured at ``size`` in ``setting``: another GPU's MFU there, times the ratio
    of the two GPUs' MFUs measured for ``kind`` at one other size or setting both ran (the H100's
    610M from the H200's 610M and both at 210M). An estimate from three records, named in
    ``record``; None where no other GPU and common measurement give one."""
    model = gpu_model(gpu_name)
    elsewhere = [m for m in measurements() if m.size == size and m.kind == kind and m.setting == setting and model not in m.gpu]
    for there in sorted(elsewhere, key=preferring(samples), reverse=True):  # the first record that a ratio carries over
        ratio = gpu_ratio(gpu_name, there.gpu, kind, exclude=(size, setting))
        if ratio is not None:
            return MeasuredMfu(there.mfu * ratio[0], there.record, there.samples, f"{kind} x {ratio[0]:.2f}, {ratio[1]}")
    return None


# ----------------------------------------------------------------------------- fine-tuning


@dataclass(frozen=True)
class FinetuneSetting:
    """How a fine-tuning job computes, as far as its MFU depends on it (besides its task's lengths)."""

    precision: str  # finetuning.precision: fp32, bf16 (autocast) or bf16_weights (the study's)
    batch_size: int
    micro_batch_size: int | None
    compile: bool = False  # finetuning.compile: the layers compiled (records from before it: eager)


@dataclass(frozen=True)
class FinetunePhases:
    """A fine-tuning grid point's phases, timed apart by bench/finetune_throughput.py: what a point
    of any number of steps and scored examples costs, where a whole short point's MFU would weigh its
    set-up and scoring as if every point were that short."""

    set_up_seconds: float  # the pretrained weights restored, the head drawn, the optimizer built: once a point
    training_mfu: float  # 6N x padded training tokens over the steps' seconds, against the datasheet peak
    scoring_mfu: float  # 2N x scored tokens over the scoring's seconds

    def scaled(self, ratio: float) -> FinetunePhases:
        """On a GPU whose MFU is ``ratio`` times this one's: the set-up (memory copies and casts, no
        matmuls) is kept as measured."""
        return FinetunePhases(self.set_up_seconds, self.training_mfu * ratio, self.scoring_mfu * ratio)

    def seconds(self, training_flops: float, scoring_flops: float, peak_flops: float) -> float:
        """One grid point's seconds: its set-up, then ``training_flops`` and ``scoring_flops`` at their MFUs."""
        return self.set_up_seconds + training_flops / (self.training_mfu * peak_flops) + scoring_flops / (self.scoring_mfu * peak_flops)


@dataclass(frozen=True)
class FinetuneMeasurement:
    """One GPU's MFU for fine-tuning one task type at one size, as a bench/finetune_throughput.py record holds it."""

    gpu: str
    size: str
    task_type: str
    setting: FinetuneSetting
    mfu: float  # a grid point's FLOPs (6N trained + 2N scored) over its seconds, against the datasheet peak
    task: str  # the stand-in measured, and its mean padded training length
    mean_padded_length: float
    record: str
    order: tuple[int, str]
    steps: int  # of each timed grid point
    phases: FinetunePhases | None  # None: a record from before the phases were timed apart


@functools.cache
def finetune_measurements() -> tuple[FinetuneMeasurement, ...]:
    """Every fine-tuning MFU in bench/records: bench/finetune_throughput.py's records of a paper
    size (``--size``) on a GPU, task by task."""
    found = []
    for path, record in bench_records():
        args, gpu = record.get("args", {}), THROUGHPUT_GPU.search(str(record.get("machine", "")))
        if record.get("bench") != FINETUNE_BENCH or not gpu or args.get("device") != "cuda" or not args.get("size"):
            continue
        protocol = record["protocol"]
        setting = FinetuneSetting(
            protocol["precision"], protocol["batch_size"], protocol["micro_batch_size"], protocol.get("compile", False)
        )
        order = (history_position(record.get("git_commit")), path.name)
        for task, row in record["tasks"].items():
            found.append(
                FinetuneMeasurement(
                    gpu[1].lower(),
                    args["size"],
                    row["type"],
                    setting,
                    row["mfu_datasheet"],
                    task,
                    row["mean_padded_length"],
                    relative(path),
                    order,
                    row["steps"],
                    FinetunePhases(row["set_up_seconds"], row["training_mfu"], row["scoring_mfu"]) if "training_mfu" in row else None,
                )
            )
    return tuple(found)


def measured_finetune_mfu(gpu_name: str, size: str, task_type: str, setting: FinetuneSetting) -> MeasuredMfu | None:
    """The newest record's fine-tuning MFU for ``task_type`` at ``size`` in ``setting`` on the GPU model
    ``gpu_name`` names; else another GPU's, scaled by the two GPUs' pretraining ratio (:func:`gpu_ratio`,
    CLM); None without either."""
    model = gpu_model(gpu_name)
    found = [m for m in finetune_measurements() if m.size == size and m.task_type == task_type and m.setting == setting]
    here = [m for m in found if model and model in m.gpu]
    if here:
        newest = max(here, key=lambda m: m.order)
        return MeasuredMfu(newest.mfu, newest.record, steps=newest.steps, phases=newest.phases)
    for there in sorted(found, key=lambda m: m.order, reverse=True):
        ratio = gpu_ratio(gpu_name, there.gpu, "clm")
        if ratio is not None:
            phases = there.phases.scaled(ratio[0]) if there.phases else None
            scaled_by = f"x {ratio[0]:.2f}, {ratio[1]}"
            return MeasuredMfu(there.mfu * ratio[0], there.record, scaled_by=scaled_by, steps=there.steps, phases=phases)
    return None


def finetune_setting(config: Config, task: str) -> FinetuneSetting:
    protocol = config.finetuning.for_task(task)
    return FinetuneSetting(protocol.precision, protocol.batch_size, protocol.micro_batch_size, protocol.compile)


def measured_finetune_for(config: Config, task: str, size: str) -> MeasuredMfu | None:
    """The measured fine-tuning MFU of ``task``'s jobs at config size ``size`` (by its task type)."""
    return measured_finetune_mfu(config.hardware.gpu_name, size, config.tasks[task].type, finetune_setting(config, task))


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
    gpu, setting, samples = config.hardware.gpu_name, setting_of(config, plan.size), config.pretraining.samples
    return measured_mfu(gpu, plan.size, kind, setting, samples) or transferred_mfu(gpu, plan.size, kind, setting, samples)


def mfu_sources(config: Config, plans: Mapping[str, RunPlan]) -> str:
    """Which MFU the pretraining hours rest on: each measured one with its record, then the assumption."""
    measured = {}
    for plan in plans.values():
        found = measured_for(config, plan)
        if found is not None:
            measured[f"{plan.size} {config.objectives[plan.objective]['kind']}"] = found
    said = by_record(measured)
    trained = config.pretraining.samples
    elsewhere = sorted({key.split()[0] for key, found in measured.items() if found.samples != trained})
    if elsewhere:  # SDPA's dense mask for split samples is slower: 0.90x / 0.92x packed at 210M on an H200
        other = "packed blocks" if trained == "split" else "split samples"
        said += [f"{', '.join(elsewhere)} measured on {other} where this config trains {trained} samples"]
    return "; ".join([*said, f"{config.hardware.assumed_mfu:.0%} MFU assumed{' elsewhere' if said else ''}"])


def finetune_mfu_sources(config: Config, jobs: Iterable[tuple[str, str]]) -> str:
    """Which MFU the fine-tuning hours of ``jobs`` ((task, size) pairs) rest on: each measured task
    type and size with its record, then the assumption."""
    measured = {}
    for task, size in set(jobs):
        found = measured_finetune_for(config, task, size)
        if found is not None:
            measured[f"{size} {config.tasks[task].type}"] = found  # the tasks of one type share it
    said = by_record(measured)
    steps = sorted({found.steps for found in measured.values() if found.steps and found.phases is None})
    if steps:  # a point's set-up (weights restored, head, optimizer) and its scoring are spread over fewer steps than a job's
        said += [f"timed on grid points of {', '.join(map(str, steps))} steps, whose set-up and scoring weigh more than in longer points"]
    return "; ".join([*said, f"{config.hardware.assumed_finetune_mfu:.0%} MFU assumed{' elsewhere' if said else ''}"])


def by_record(measured: Mapping[str, MeasuredMfu]) -> list[str]:
    """What ``measured`` (what was measured -> its MFU) rests on: its keys with their MFU, record by
    record ("measured", or "scaled from" another GPU's), then each scaling ratio once."""
    keys_of: dict[str, list[str]] = {}
    for key, found in sorted(measured.items()):
        keys_of.setdefault(found.record, []).append(f"{key} {found.said()}")
    scaled = {found.record for found in measured.values() if found.scaled_by}
    said = [f"{', '.join(keys)} {'scaled from' if record in scaled else 'measured'} ({record})" for record, keys in keys_of.items()]
    # each ratio once, after the runs it scales
    return said + [f"scaled {how}" for how in sorted({found.scaled_by for found in measured.values() if found.scaled_by})]
