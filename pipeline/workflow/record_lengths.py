"""What a fine-tuning grid point of a study task computes, from its dataset's record alone
(:mod:`pipeline.external.hub_records`: published row counts and token lengths), for the cost
estimate of a task not prepared here: no hub, no torch.

A run trains ``budget.trained_steps(train rows)`` steps of ``batch_size`` examples, each padded to the
longest of its micro-batch: to the record's p95 where it has one, else to
:data:`PADDING_OF_THE_MEAN` x the mean (assumed: no length distribution recorded); a retrieval pair
is its query and its document, each padded so. Every example is its fields' mean tokens plus
:data:`FRAMING_TOKENS` (the study's template or framing words and special tokens, assumed), cut at
the task's ``max_length``. Scoring is every validation and test example at its mean (the sweep
scores in length order, so padding is small there); a judged retrieval task's, its judged queries
and documents (its record's ``judged``), with those of the tasks scored on its models.
"""

from __future__ import annotations

import math

from pipeline.config import Config
from pipeline.external.hub_records import DatasetRecord, FieldLengths, HubPart, hub_records
from pipeline.finetune.run_tokens import RunTokens
from pipeline.staging.references import HF_URL

PADDING_OF_THE_MEAN = 1.5  # a micro-batch's longest example over the mean, where no p95 is recorded (assumed)
FRAMING_TOKENS = 8  # template words, "Question: ... Context:", <s> and </s> (assumed)
RETRIEVAL_SIDES = ("query", "document")


def with_records(config: Config, measured: dict[str, RunTokens]) -> dict[str, RunTokens]:
    """The lengths the estimate costs fine-tuning at: ``measured`` on prepared rows where a task has
    them, its record's elsewhere (a task with neither is costed at the cap)."""
    return {**recorded_lengths(config), **measured}


def recorded_lengths(config: Config) -> dict[str, RunTokens]:
    """Trained task -> one grid point's tokens from its record, for every trained task of
    ``config`` whose dataset has a record with lengths."""
    found = {}
    for task in config.finetuning.tasks:
        spec = config.tasks[task]
        record = hub_records().for_task(task)
        if spec.trained_with is not None or record is None or record.lengths is None:
            continue
        scored = [name for name in config.finetuning.tasks if config.tasks[name].trained_with == task]
        found[task] = record_tokens(config, task, record, scored)
    return found


def record_tokens(config: Config, task: str, record: DatasetRecord, scored_with: list[str]) -> RunTokens:
    spec, protocol = config.tasks[task], config.finetuning.for_task(task)
    cap = spec.max_length
    rows = split_rows(config, task, record)
    steps = protocol.budget.trained_steps(rows["train"]) if rows["train"] is not None else protocol.max_steps  # unpublished: many
    lengths = record.lengths or {}
    if spec.type == "retrieval":
        mean = sum(example_tokens([lengths[side]], cap) for side in RETRIEVAL_SIDES)
        padded = sum(padded_tokens([lengths[side]], cap) for side in RETRIEVAL_SIDES)
    else:
        mean, padded = example_tokens(list(lengths.values()), cap), padded_tokens(list(lengths.values()), cap)
    elsewhere = [(name, hub_records().for_task(name)) for name in scored_with]
    scored = scored_tokens(config, task, record, rows) + sum(
        scored_tokens(config, name, other, split_rows(config, name, other)) for name, other in elsewhere
    )
    return RunTokens(task, rows["train"], steps, mean, steps * protocol.batch_size * padded, scored, source="record")


def example_tokens(fields: list[FieldLengths], cap: int) -> float:
    """An example's mean tokens: its fields' and the framing's, cut at ``cap``."""
    return min(sum(field.mean for field in fields) + FRAMING_TOKENS, cap)


def padded_tokens(fields: list[FieldLengths], cap: int) -> float:
    """What an example costs in a random micro-batch: padded to its p95, or the assumed share above its mean."""
    return min(sum(field.p95 if field.p95 is not None else PADDING_OF_THE_MEAN * field.mean for field in fields) + FRAMING_TOKENS, cap)


def part_of(config: Config, task: str, record: DatasetRecord) -> HubPart | None:
    """The recorded part a task's training data is read from (``data.hub``: a repository, or hf:// files of one)."""
    hub = config.tasks[task].data.hub
    if hub is None:
        return None
    files = [HF_URL.match(file) for files in hub.file_lists().values() for file in files]
    repo = files[0]["repo"] if files and files[0] else hub.path
    return next((part for part in record.parts if part.repo == repo and part.config == hub.name), None)


def split_rows(config: Config, task: str, record: DatasetRecord) -> dict[str, int | None]:
    """Our split -> its rows as the task reads them from the recorded counts (None: not published):
    the study's validation drawn from train where the task draws it, a judged task's scored queries."""
    spec = config.tasks[task]
    part = part_of(config, task, record)
    hub_splits = spec.data.hub.splits if spec.data.hub is not None else {}
    rows = {ours: part.splits.get(theirs) if part is not None else None for ours, theirs in hub_splits.items()}
    if spec.validation_draw == "train_test_split" and rows.get("train") is not None:
        drawn = math.ceil(rows["train"] * spec.validation_fraction)
        rows |= {"train": rows["train"] - drawn, "validation": drawn}
    if record.judged is not None:
        rows |= record.judged.queries
    return {split: rows.get(split) for split in ("train", "validation", "test")}


def scored_tokens(config: Config, task: str, record: DatasetRecord, rows: dict[str, int | None]) -> float:
    """Tokens scoring one grid point puts through the encoder on ``task``: its validation and test
    examples (a judged task's queries) and a judged task's documents."""
    cap, lengths = config.tasks[task].max_length, record.lengths or {}
    evaluated = sum(rows[split] or 0 for split in ("validation", "test"))
    if record.judged is None:
        return evaluated * example_tokens(list(lengths.values()), cap)
    return evaluated * example_tokens([lengths["query"]], cap) + record.judged.documents * example_tokens([lengths["document"]], cap)
