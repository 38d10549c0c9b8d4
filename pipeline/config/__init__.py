"""The typed configuration of a replication, parsed strictly from YAML: the ground floor.

One dataclass per concern, in one module per part of the study (:mod:`.data`,
:mod:`.pretraining`, :mod:`.finetuning`); this module holds the whole :class:`Config`
and re-exports every part, so ``from pipeline.config import TaskSpec`` is the one way
in. Every stage receives only its own part (as JSON through Snakemake ``params:``, so
that changing a value reruns exactly the affected jobs). Names carry their units:
``budget_steps``, ``num_warmup_steps``, ``max_length`` (tokens).

Nothing here reads a file or imports another part of the pipeline: reading, merging
overlays, the checks that need registries (metrics, objectives, claims) and the run plan
live in :mod:`pipeline.workflow.configure`. A number's range is part of its type (:mod:`.bounds`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any

from pipeline.config.bounds import DISTINCT, NonNegativeInt, OpenFraction
from pipeline.config.data import (
    ArtifactSpec,
    CorpusSpec,
    DataSourceSpec,
    HubSpec,
    JudgementsSpec,
    MinimalPairKind,
    MinimalPairsSpec,
    NeedleSpec,
    TaskFamily,
    TaskSpec,
    TaskTypeName,
)
from pipeline.config.finetuning import BagOfWordsSpec, ExampleBudget, FinetuningSpec, InputFormat, TaskBudgetSpec
from pipeline.config.pretraining import (
    ComputeOverrides,
    ComputeSpec,
    ContinuedPretrainingSpec,
    HardwareSpec,
    LearningCurveSpec,
    OptimizerSpec,
    OutsideModelSpec,
    PretrainingSpec,
    ReadyMadeTokenizer,
    ScheduleSpec,
    SizeSpec,
    TokenizerSample,
    TokenizerSpec,
    TwoStageSpec,
    ZooSpec,
)
from pipeline.config.replicates import RANDOM_INIT, is_replicate_name

__all__ = [
    "RANDOM_INIT",
    "Config",
    "LeftOutTask",
    "ReportSpec",
    "StudyResultsSpec",
    "model_pair",
    "ArtifactSpec",
    "CorpusSpec",
    "DataSourceSpec",
    "HubSpec",
    "JudgementsSpec",
    "MinimalPairKind",
    "MinimalPairsSpec",
    "NeedleSpec",
    "TaskFamily",
    "TaskSpec",
    "TaskTypeName",
    "BagOfWordsSpec",
    "FinetuningSpec",
    "InputFormat",
    "TaskBudgetSpec",
    "ComputeOverrides",
    "ComputeSpec",
    "ContinuedPretrainingSpec",
    "ExampleBudget",
    "HardwareSpec",
    "LearningCurveSpec",
    "OptimizerSpec",
    "OutsideModelSpec",
    "PretrainingSpec",
    "ReadyMadeTokenizer",
    "ScheduleSpec",
    "SizeSpec",
    "TokenizerSample",
    "TokenizerSpec",
    "TwoStageSpec",
    "ZooSpec",
]


@dataclass(frozen=True)
class LeftOutTask:
    task: str
    why: str


@dataclass(frozen=True)
class ReportSpec:
    title: str = "Pretraining objectives: CLM vs MLM"
    confidence: OpenFraction = 0.95
    claims_file: str | None = None  # claims.yaml checked by the report, if present
    # Tasks this configuration does not fine-tune, each with why (e.g. at its floor for every
    # model at this scale): the report lists them beside the headline. A list, so that an
    # override replaces it whole (Snakemake merges mappings key by key).
    tasks_left_out: Annotated[tuple[LeftOutTask, ...], DISTINCT] = ()


@dataclass(frozen=True)
class StudyResultsSpec:
    """The study's released per-run fine-tuning results (the ``results/`` directory of
    EncodEval's ``MLM_vs_CLM`` branch, cloned by the user: git, not a package registry),
    recomputed with this harness's protocol for the report; each of ``pairs``
    (``modelA:modelB``) is compared example by example on the datasets both have. An outside
    model that is one of the study's checkpoints is set beside the study's results for it:
    ``models`` names the study's model of an outside model (one whose path is the study's hub
    id, ``MLMvsCLM/<model>``, needs no entry), ``tasks`` the study's dataset of a task (by
    default its own name)."""

    path: str
    pairs: Annotated[tuple[str, ...], DISTINCT] = ()
    models: dict[str, str] = field(default_factory=dict)
    tasks: dict[str, str] = field(default_factory=dict)

    def validate(self) -> None:
        for pair in self.pairs:
            if model_pair(pair) is None or not all(map(STUDY_NAME.fullmatch, model_pair(pair))):
                raise ValueError(f"pairs: {pair!r} is not modelA:modelB (names of letters, digits, '_', '.', '-')")
        for key, mapping in (("models", self.models), ("tasks", self.tasks)):
            for name, value in mapping.items():
                if not STUDY_NAME.fullmatch(value):
                    raise ValueError(f"{key}.{name}: {value!r} is not a name of the study's results (letters, digits, '_', '.', '-')")


# A model or dataset name of the study's results tree (210m-clm-42k, conll2003_en): it becomes
# a command-line word of study-results, so it cannot start like an option.
STUDY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
STUDY_HUB = "MLMvsCLM/"  # the hub organisation of the study's released checkpoints


def model_pair(text: str) -> tuple[str, str] | None:
    """``modelA:modelB`` as its two names; None when it is not of that form."""
    first, separator, second = text.partition(":")
    return (first, second) if first and separator and second else None


@dataclass(frozen=True)
class Config:
    scale: str  # one line on what this configuration is, printed in the report
    seed: NonNegativeInt
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
    minimal_pairs: MinimalPairsSpec | None = None  # absent: no zero-shot family
    report: ReportSpec = ReportSpec()
    study_results: StudyResultsSpec | None = None  # absent: the report shows no released results of the study
    # Checkpoints made outside this harness, fine-tuned on every task like a pretrained run
    # (import-model; results/outside/<name>/model) and tabulated as outside models. A list, so
    # that an overlay replaces it whole.
    outside_models: tuple[OutsideModelSpec, ...] = ()
    hardware: HardwareSpec = HardwareSpec()  # where pretraining and fine-tuning run; read by the rules and the cost estimate only
    task_dir: str | None = None  # a directory of <task>.yaml files, relative to the repository
    # A directory `python -m pipeline stage` filled: every hub dataset, tokenizer and model is read
    # from there instead of the hub (offline compute nodes); one not staged stops the plan.
    hub_mirror: str | None = None
    # The config file an overlay extends (config/rehearsal.yaml: config/paper.yaml), relative to the
    # repository; the overlay is refused when that file is not given before it.
    overlay_of: str | None = None
    tasks: dict[str, TaskSpec] = field(default_factory=dict)  # task_dir's files, the config's own entries merged over them

    def outside_model(self, name: str) -> OutsideModelSpec:
        return self.outside_models_by_name()[name]

    def outside_models_by_name(self) -> dict[str, OutsideModelSpec]:
        return {spec.name: spec for spec in self.outside_models}

    def study_matches(self) -> dict[str, str]:
        """Outside model -> the study's model it is (``study_results.models``, else by hub id)."""
        if self.study_results is None:
            return {}
        hub_ids = {spec.name: spec.hub_id or spec.path for spec in self.outside_models}  # the id as written, mirrored or not
        by_hub_id = {name: hub_id.removeprefix(STUDY_HUB) for name, hub_id in hub_ids.items() if hub_id.startswith(STUDY_HUB)}
        return {**by_hub_id, **self.study_results.models}

    def study_datasets(self) -> dict[str, str]:
        """Task -> the study's dataset it is (``study_results.tasks``, else its own name)."""
        return {**{task: task for task in self.finetuning.tasks}, **(self.study_results.tasks if self.study_results else {})}

    def validate(self) -> None:
        if RANDOM_INIT in self.objectives:
            raise ValueError(f"objectives: {RANDOM_INIT!r} is reserved for the untrained baseline")
        taken = [name for name in self.objectives if is_replicate_name(name)]
        if taken:
            raise ValueError(f"objectives: {taken[0]!r} ends like a pretraining replicate's name (_r<N>); rename it")
        references = [
            ("pretraining.sizes", self.pretraining.sizes, self.sizes),
            ("pretraining.objectives", self.pretraining.objectives, self.objectives),
            ("finetuning.tasks", self.finetuning.tasks, self.tasks),
            ("pretraining.compute.by_size", tuple(self.pretraining.compute.by_size), self.sizes),
        ]
        if self.zoo is not None:
            references += [("zoo.sizes", self.zoo.sizes, self.sizes), ("zoo.objectives", self.zoo.objectives, self.objectives)]
            if self.zoo.budget_steps is not None:
                self._check_budget("zoo.budget_steps", self.zoo.budget_steps)
        if self.two_stage is not None:
            stage = self.two_stage
            references += [("two_stage.sizes", stage.sizes, self.sizes), ("two_stage", (stage.first, stage.second), self.objectives)]
            for index, splits in enumerate(stage.splits):
                references += [(f"two_stage.splits[{index}].sizes", splits.sizes, self.sizes)]
                references += [(f"two_stage.splits[{index}].seconds", splits.seconds or (), self.objectives)]
            self._check_two_stage_splits(stage)
        if self.continued_pretraining is not None:
            cpt = self.continued_pretraining
            references += [
                ("continued_pretraining.sizes", cpt.sizes, self.sizes),
                ("continued_pretraining.objective", (cpt.objective,), self.objectives),
                ("continued_pretraining.bases", cpt.bases, self.objectives),
                ("continued_pretraining.outside_bases", cpt.outside_bases, self.outside_models_by_name()),
            ]
            unsized = [
                name for name in cpt.outside_bases if name in self.outside_models_by_name() and self.outside_model(name).size is None
            ]
            if unsized:
                raise ValueError(
                    f"continued_pretraining.outside_bases: outside model {unsized[0]!r} has no size; name the config size it has "
                    "(outside_models[].size), which its continued run is costed and tabulated at"
                )
        if self.study_results is not None:
            references.append(("study_results.models", tuple(self.study_results.models), self.outside_models_by_name()))
            references.append(("study_results.tasks", tuple(self.study_results.tasks), self.tasks))
        sized = tuple(spec.size for spec in self.outside_models if spec.size is not None)
        references.append(("outside_models[*].size", sized, self.sizes))
        names = [spec.name for spec in self.outside_models]
        for name in names:
            if names.count(name) > 1 or name in self.objectives or is_replicate_name(name) or name == RANDOM_INIT:
                raise ValueError(f"outside_models: name {name!r} is taken (twice, or by an objective or a run)")
        left_out = tuple(entry.task for entry in self.report.tasks_left_out)
        references.append(("report.tasks_left_out", left_out, self.tasks))
        run_and_left_out = sorted(set(left_out) & set(self.finetuning.tasks))
        if run_and_left_out:
            raise ValueError(f"report.tasks_left_out: {run_and_left_out[0]!r} is in finetuning.tasks too")
        for where, names, known in references:
            for name in names:
                if name not in known:
                    raise ValueError(f"{where}: {name!r} is not defined (defined: {', '.join(sorted(known))})")
        self._check_compute_kernels()
        self._check_trained_with()
        self._check_curve_families()
        used_artifacts = [s.artifact for s in self.corpus.documents] + [t.data.artifact for t in self.tasks.values()]
        if self.tokenizer.ready_made is not None:
            used_artifacts.append(self.tokenizer.ready_made.artifact)
        for artifact in used_artifacts:
            if artifact is not None and artifact not in self.sources:
                raise ValueError(f"artifact {artifact!r} is not in sources (defined: {', '.join(sorted(self.sources))})")

    def _check_trained_with(self) -> None:
        """A task scored on another's fine-tuned models runs exactly where its trainer runs:
        the trainer is a task of the same type that fine-tunes itself, in ``finetuning.tasks``
        whenever the task is, and the task has no ``by_task`` protocol of its own."""
        for name, task in self.tasks.items():
            trainer = task.trained_with
            if trainer is None:
                continue
            where = f"tasks.{name}.trained_with"
            if trainer not in self.tasks:
                raise ValueError(f"{where}: {trainer!r} is not defined (defined: {', '.join(sorted(self.tasks))})")
            if self.tasks[trainer].trained_with is not None or self.tasks[trainer].type != task.type:
                raise ValueError(f"{where}: {trainer!r} must be a {task.type} task that fine-tunes itself (no trained_with)")
            if name in self.finetuning.tasks and trainer not in self.finetuning.tasks:
                raise ValueError(f"{where}: {trainer!r} is not in finetuning.tasks, so nothing fine-tunes the models {name!r} is scored on")
            if name in self.finetuning.curve_tasks and trainer not in self.finetuning.curve_tasks:
                raise ValueError(
                    f"{where}: {trainer!r} is kept off the learning curves (by_task.{trainer}.learning_curves), {name!r} is not"
                )
            if name in self.finetuning.by_task:
                raise ValueError(f"finetuning.by_task.{name}: {name!r} is scored on {trainer!r}'s fine-tuned models, under its protocol")

    def trainer_of(self, task: str) -> str:
        """The task whose fine-tuning job scores ``task``: its ``trained_with``, else itself."""
        return self.tasks[task].trained_with or task

    def _check_compute_kernels(self) -> None:
        """The GPU-only kernels of ``pretraining.compute`` (and of each ``by_size`` entry) are refused where they cannot run."""
        base, on_gpu = self.pretraining.compute, self.hardware.gpus_per_run > 0
        for where, compute in [("pretraining.compute", base)] + [
            (f"pretraining.compute.by_size.{size}", base.for_size(size)) for size in base.by_size
        ]:
            refusal = compute.kernel_refusal(on_gpu, gpu_is="hardware.gpus_per_run >= 1")
            if refusal:
                raise ValueError(f"{where}.{refusal[0]}: {refusal[1]}")

    def evaluated_with(self, trainer: str) -> tuple[str, ...]:
        """The tasks of ``finetuning.tasks`` that ``trainer``'s fine-tuned models are scored on besides it."""
        return tuple(task for task in self.finetuning.tasks if self.tasks[task].trained_with == trainer)

    def _check_curve_families(self) -> None:
        """A task kept off the learning curves takes its family with it: a family's curve is
        compared with its final models' and random init's family averages (the budget trend),
        which would otherwise be over more tasks than its checkpoints."""
        off = set(self.finetuning.tasks) - set(self.finetuning.curve_tasks)
        for task in sorted(off):
            family = self.tasks[task].family
            kept = [t for t in self.finetuning.tasks if t not in off and self.tasks[t].family == family]
            if kept:
                raise ValueError(
                    f"finetuning.by_task.{task}.learning_curves: false leaves {kept[0]!r}, of the same family ({family}), on the"
                    " curves; keep the whole family off them, or on"
                )

    def _check_budget(self, where: str, budget: int) -> None:
        """A step budget other runs are compared at: its CLM and MLM are decay branches of the
        full runs, which start from a checkpoint the LR decay has not touched yet and after
        the warmup (or their schedule would not be the WSD schedule of that budget)."""
        schedule, budget_steps = self.pretraining.schedule, self.pretraining.budget_steps
        if budget != budget_steps and schedule.kind != "wsd":
            raise ValueError(
                f"{where}: a budget below pretraining.budget_steps needs pretraining.schedule.kind 'wsd' (a cosine run has no undecayed "
                "checkpoint)"
            )
        shortest = schedule.num_warmup_steps + schedule.num_decay_steps
        if not shortest <= budget <= budget_steps:
            raise ValueError(
                f"{where}: {budget} must lie between warmup + decay ({shortest}) and pretraining.budget_steps ({budget_steps})"
            )

    def _check_two_stage_splits(self, stage: TwoStageSpec) -> None:
        """Every run of the study starts from a checkpoint the LR decay has not touched yet:
        each split, and each shorter budget's decay branch."""
        schedule, budget_steps = self.pretraining.schedule, self.pretraining.budget_steps
        if schedule.kind != "wsd":
            raise ValueError("two_stage needs pretraining.schedule.kind 'wsd' (a cosine run has no undecayed checkpoint)")
        for budget in stage.budgets or (budget_steps,):
            self._check_budget("two_stage.budgets", budget)
            decay_start = budget - schedule.num_decay_steps
            late = [f for f in stage.first_stage_fractions if round(f * budget) > decay_start]
            if late:
                raise ValueError(
                    f"two_stage.first_stage_fractions {late}: the split would fall after the decay starts (step {decay_start} of {budget})"
                )
        for index, splits in enumerate(stage.splits):
            where = f"two_stage.splits[{index}]"
            self._check_budget(f"{where}.budget", splits.budget)
            decay_start = splits.budget - schedule.num_decay_steps
            late = [step for step in splits.first_stage_steps if step > decay_start]
            if late:
                raise ValueError(f"{where}.first_stage_steps {late}: the split would fall after the decay starts (step {decay_start})")
