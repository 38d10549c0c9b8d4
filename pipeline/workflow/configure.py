"""Reading a configuration: overlay files merged over the default, task files, the checks that
need the registries, and the run plan, built once.

This is the top floor of configuration: :mod:`pipeline.config` holds the types and imports
nothing of the pipeline; this module reads files and asks the registries (metrics,
objectives, claim checks) and the planner whether the config makes sense, so that
``snakemake -n`` and ``python -m pipeline check-config`` refuse a typo before any job runs.
The workflow (``rules/common.smk``), ``check-config`` and ``cost`` all go through
:func:`resolve`, and the rules take the plan it built instead of planning again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import strict
from pipeline.analysis.claims.spec import Claim, read_claims
from pipeline.config import Config, TokenizerSpec
from pipeline.data.task_rows import TASK_TYPES, unmapped_fields
from pipeline.errors import PipelineError
from pipeline.files import read_yaml
from pipeline.kernels import KERNELS, kernel_names
from pipeline.metrics import get_metric
from pipeline.objectives import LOSSES_WITH_PARAMETERS, parse_objective
from pipeline.pretrain.plan import RunPlan, curve_checkpoints, plan_runs
from pipeline.pretrain.samples import SPLIT_KINDS
from pipeline.staging.mirror import mirrored
from pipeline.tokenization.special_tokens import special_token_list

REPOSITORY = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = "config/default.yaml"  # what every overlay is merged over, as the Snakefile's configfile

logger = logging.getLogger(__name__)
# The names a config gives its sources, sizes, objectives, tasks and outside models: rules/common.smk's
# wildcard_constraints, bounded (a 300-character name would be a path component of every job).
MAX_NAME_LENGTH = 64
PATH_NAME = re.compile(rf"[A-Za-z0-9_]{{1,{MAX_NAME_LENGTH}}}", re.ASCII)
BYTE_ALPHABET = 256  # tokens a byte-level BPE holds before any merge (pre_tokenizers.ByteLevel.alphabet())


@dataclass(frozen=True)
class Resolved:
    """A checked config with everything derived from it that the workflow plans with."""

    config: Config
    plans: dict[str, RunPlan]  # every pretraining run by name, bases first
    curve_points: list[tuple[RunPlan, int]]  # (run, step) of every learning-curve checkpoint fine-tuned
    claims: list[Claim]  # the claims file's claims, each with its parsed check; [] without one
    claims_file: Path | None  # where they were read from (absolute)


def merge(base: Any, override: Any) -> Any:
    """``override`` deep-merged over ``base`` (mappings merge key by key; anything else
    replaces), as Snakemake merges ``--configfile`` overlays."""
    if isinstance(base, dict) and isinstance(override, dict):
        return {**base, **{key: merge(base.get(key), value) for key, value in override.items()}}
    return override


def read_configs(paths: list[str]) -> dict[str, Any]:
    """The config files merged as the workflow merges them: config/default.yaml first, then each file."""
    data: dict[str, Any] = {}
    for _, layer in config_layers(paths):
        data = merge(data, layer)
    return data


def config_layers(paths: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(file, its mapping) in merge order: config/default.yaml, then each overlay; an overlay that
    names the file it extends (``overlay_of``) is refused unless that file comes before it."""
    default = str(REPOSITORY / DEFAULT_CONFIG)
    overlays = [p for p in paths if str(Path(p).resolve()) != default]
    layers = [(path, read_yaml(path, "config file", mapping=True) or {}) for path in (default, *overlays)]
    for index, (path, layer) in enumerate(layers):
        base = layer.get("overlay_of")
        if base is not None and (REPOSITORY / str(base)).resolve() not in {Path(p).resolve() for p, _ in layers[:index]}:
            raise PipelineError(
                f"{path}: overlay_of: it extends {base}, which is not among the config files before it; give both, "
                f"--configfile {base} {path} (a --configfile on the command line replaces a profile's)"
            )
    return layers


def resolve_files(data: dict[str, Any], paths: list[str]) -> "Resolved":
    """:func:`resolve` for the overlay files ``paths`` merged over the default (``data``: their
    merge, with any command-line values); an error names the file that set the key at fault,
    or the merged config where none did (a key missing, a clash between keys). The files are
    read again: first to refuse what Snakemake's reading lets pass (a key given twice), then on
    an error to find the file behind it."""
    layers = config_layers(paths)
    try:
        return resolve(data, MERGED)
    except PipelineError as error:
        raise PipelineError(blame(str(error), layers)) from None


MERGED = "config"  # the origin a merged config's errors start with, before blame names the file


def blame(message: str, layers: list[tuple[str, dict[str, Any]]]) -> str:
    """``config.a.b[0]: what`` as ``<the last file setting a.b>: a.b[0]: what``."""
    head, separator, what = message.partition(": ")
    if not separator or not head.startswith(f"{MERGED}."):
        return message
    key = head.removeprefix(f"{MERGED}.")
    setters = [name for name, layer in layers if sets(layer, key)]
    where = setters[-1] if setters else " + ".join(name for name, _ in layers)
    return f"{where}: {key}: {what}"


def sets(layer: dict[str, Any], key: str) -> bool:
    """Whether ``layer`` gives a value at ``key`` (``a.b[0].c``; list indices go with their list)."""
    node: Any = layer
    for part in key.split("."):
        name = part.split("[", 1)[0]
        if not isinstance(node, dict) or name not in node:
            return False
        node = node[name]
    return True


def read_task_files(task_dir: str, origin: str) -> dict[str, Any]:
    """Every ``<name>.yaml`` of a task directory, by name; a relative directory is the repository's."""
    directory = Path(task_dir) if Path(task_dir).is_absolute() else REPOSITORY / task_dir
    if not directory.is_dir():
        raise PipelineError(f"{origin}.task_dir: {directory} is not a directory")
    return {path.stem: read_yaml(path, "task file", mapping=True) or {} for path in sorted(directory.glob("*.yaml"))}


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


def claims_path(config: Config) -> Path | None:
    """The claims file the report checks; a relative one is the repository's own, wherever
    the workflow's working directory is."""
    if config.report.claims_file is None:
        return None
    path = Path(config.report.claims_file)
    return path if path.is_absolute() else REPOSITORY / path


def resolve_in(paths: list[str], directory: Path) -> Resolved:
    """The config files ``paths`` resolved as the workflow resolves them under ``snakemake
    --directory directory``: the files named from here, the paths inside them that the workflow
    reads from its working directory (``hub_mirror``) from ``directory``."""
    files = [str(Path(path).resolve()) for path in paths]
    with contextlib.chdir(directory):
        return resolve(read_configs(files), "+".join([DEFAULT_CONFIG, *paths]))


def resolve(data: dict[str, Any], origin: str = "config") -> Resolved:
    """Parse a config mapping, check it against every registry, plan its runs and parse its
    claims; a bad key or value raises PipelineError naming it.

    Tasks come from ``task_dir`` (one file per task) with the config's own ``tasks:``
    entries merged over them, so an overlay such as the smoke config changes one field.
    """
    config = strict.parse(Config, without_foreign_budgets(with_task_files(data, origin)), origin)
    if config.hub_mirror is not None:
        config = mirrored(config, config.hub_mirror, origin)
    for name, task in config.tasks.items():
        for key, metric in [("metric", task.metric), *(("also_metrics", other) for other in task.also_metrics)]:
            try:
                get_metric(metric)
            except PipelineError as error:
                raise PipelineError(f"{origin}.tasks.{name}.{key}: {error}") from None
            scorable = TASK_TYPES[task.type].metrics
            if metric not in scorable:
                raise PipelineError(
                    f"{origin}.tasks.{name}.{key}: {task.type} predictions cannot be scored with {metric!r} ({', '.join(scorable)} can)"
                )
        if task.metric in task.also_metrics:
            raise PipelineError(f"{origin}.tasks.{name}.also_metrics: {task.metric!r} is the task's metric already")
        if task.data.hub is not None and (missing := unmapped_fields(task.type, task.data.hub.fields, task.templates)):
            raise PipelineError(
                f"{origin}.tasks.{name}.data.hub.fields: no column mapped to our {missing[0]!r} (a {task.type} row needs it)"
            )
    check_names(config, origin)
    check_vocabulary(config.tokenizer, origin)
    check_processes(config, origin)
    for name, spec in config.objectives.items():
        parse_objective(spec, f"{origin}.objectives.{name}")
    for index, outside in enumerate(config.outside_models):
        parse_objective({"kind": outside.objective}, f"{origin}.outside_models[{index}].objective")
    try:
        plans = plan_runs(config)
    except ValueError as error:
        raise PipelineError(f"{origin}: {error}") from None
    check_row_objectives(config, plans, origin)
    check_carried_optimizers(config, plans, origin)
    try:
        points = curve_checkpoints(config, plans)
    except ValueError as error:
        raise PipelineError(f"{origin}.{error}") from None
    claims_file = claims_path(config)
    claims = read_claims(claims_file) if claims_file is not None else []
    return Resolved(config, plans, points, claims, claims_file)


def check_carried_optimizers(config: Config, plans: dict[str, RunPlan], origin: str) -> None:
    """A second stage that carries its first stage's AdamW state (two_stage.optimizer_state:
    carry) trains the same parameters: a loss owning parameters of its own (ELECTRA's generator,
    NSP's head) on one side only would fail the job, after its base trained, on a state that
    does not fit."""
    for plan in plans.values():
        if not plan.start.carry_optimizer:
            continue
        first = plans[plan.start.run].objective
        losses = [parse_objective(config.objectives[name]).loss for name in (first, plan.objective)]
        if losses[0] != losses[1] and LOSSES_WITH_PARAMETERS & set(losses):
            raise PipelineError(
                f"{origin}.two_stage.optimizer_state: carry, but {plan.run} continues {first} ({losses[0]} loss) with"
                f" {plan.objective} ({losses[1]} loss), which trains other parameters besides the backbone; set reset"
            )


def check_row_objectives(config: Config, plans: dict[str, RunPlan], origin: str) -> None:
    """What works on CLM and MLM rows alone, refused for a run of another objective (span corruption's
    targets, NSP's pairs, prefix LM, UL2, ...):

    - the study's cut samples (pretraining.samples: split) keep an example aligned with its block, which CLM
      and MLM examples are and the others are not: every run trains with the same samples, or the comparison
      is unfair;
    - an attention kernel that takes no mask (pipeline/kernels/: varlen, only where each sample starts and ends):
      CLM and MLM rows, whole or split, say all they need that way; prefix attention and padded targets do not.
    """
    for plan in plans.values():
        kind = config.objectives[plan.objective]["kind"]
        if kind in SPLIT_KINDS:
            continue
        if config.pretraining.samples == "split":
            raise PipelineError(
                f"{origin}.pretraining.samples: 'split' cuts CLM and MLM examples only; run {plan.run!r} trains {plan.objective!r}"
                f" (kind {kind!r}): use samples 'packed' with it"
            )
        attention = KERNELS[config.pretraining.compute.for_size(plan.size).attention]
        if attention.whole_samples_refusal:
            others = [name for name in kernel_names("attention") if not KERNELS[name].whole_samples_refusal]
            raise PipelineError(
                f"{origin}.pretraining.compute.attention: {attention.name!r} trains CLM and MLM examples only; run {plan.run!r}"
                f" trains {plan.objective!r} (kind {kind!r}) at {plan.size!r}: use {' or '.join(repr(name) for name in others)}"
                f" there ({attention.whole_samples_refusal})"
            )


def check_vocabulary(tokenizer: TokenizerSpec, origin: str) -> None:
    """A trained byte-level BPE starts with 256 byte tokens and the special tokens; a smaller
    vocab_size would silently give that many tokens, not the size asked for."""
    smallest = BYTE_ALPHABET + len(special_token_list(tokenizer.num_sentinel_tokens))
    if tokenizer.ready_made is None and tokenizer.vocab_size < smallest:
        raise PipelineError(
            f"{origin}.tokenizer.vocab_size: {tokenizer.vocab_size} is below the {smallest} tokens a trained byte-level BPE"
            f" starts with ({BYTE_ALPHABET} bytes + {smallest - BYTE_ALPHABET} special tokens)"
        )


def check_names(config: Config, origin: str) -> None:
    """Names that become folders, file names and Snakemake wildcards (results/pretrain/<objective>-<size>,
    results/data/tasks/<task>) follow the wildcards' own pattern, so that a name with ``/``, ``..``,
    a space or a look-alike letter stops the plan here rather than failing, or matching another
    job's path, later. ``-`` is not in it: it joins a run's objective and size."""
    named = [("sources", config.sources), ("sizes", config.sizes), ("objectives", config.objectives), ("tasks", config.tasks)]
    named += [(f"outside_models[{number}].name", [spec.name]) for number, spec in enumerate(config.outside_models)]
    for where, names in named:
        for name in names:
            if not PATH_NAME.fullmatch(name):
                raise PipelineError(
                    f"{origin}.{where}: name {name[:80]!r} must be 1 to {MAX_NAME_LENGTH} ASCII letters, digits or '_'"
                    " (it names folders and jobs)"
                )


def check_processes(config: Config, origin: str) -> None:
    """A pretraining job's processes each take an equal share of the batch, and on CPUs a core
    each (rules/pretrain.smk): more than either fails in the job, after everything before it ran."""
    hardware, batch_size = config.hardware, config.pretraining.batch_size
    on_gpus = hardware.gpus_per_run > 0
    key, processes = ("gpus_per_run", hardware.gpus_per_run) if on_gpus else ("cpu_processes_per_run", hardware.cpu_processes_per_run)
    if batch_size % processes:
        raise PipelineError(f"{origin}.hardware.{key}: {processes} processes cannot split pretraining.batch_size {batch_size} evenly")
    cores = os.cpu_count() or 1
    if not on_gpus and processes > cores:
        raise PipelineError(f"{origin}.hardware.cpu_processes_per_run: {processes} processes, one core each, on a machine of {cores} cores")


def load_config(data: dict[str, Any], origin: str = "config") -> Config:
    """:func:`resolve`'s config alone, for code that needs no plan."""
    return resolve(data, origin).config


def read_config(path: str | Path) -> Config:
    """One complete config file (not an overlay), checked."""
    return load_config(read_yaml(path, "config file", mapping=True) or {}, str(path))
