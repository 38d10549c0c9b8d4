"""``python -m pipeline prepare-task``: one downstream task's train/validation/test files.

The rows a reader gives are checked and cleaned by the task's type
(:mod:`task_types`), then split as the study does: the source's own test (validation)
split when it has one, else a seeded hash of each row's group (its id when it has none)
against ``test_fraction`` and then ``validation_fraction`` of the rest
(:class:`splits.GroupSplit`). Hashing groups keeps an article's rows together and gives
an article the same split in every BBC task. Exact duplicates are removed after the
split, keeping the copy in test before validation before train, so no text sits in two
splits. Every split keeps the source's row order. Label and tag names are numbered in
the order the source declares them (``class_names``), else in sorted order. A
needle-in-a-haystack task builds its rows from each split's sentences.
"""

from __future__ import annotations

import argparse
import logging
import random
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pipeline import strict
from pipeline.config import TaskSpec
from pipeline.data.judgements import JudgedSplits, read_judgements
from pipeline.data.needle import needle_rows
from pipeline.data.sources import HUB_READER, describe_source, read_source
from pipeline.data.splits import GroupSplit
from pipeline.data.task_rows import RETRIEVAL_ROWS, Baseline, Example, TaskRows, random_ranking, task_rows, unmapped_fields
from pipeline.data.templates import apply_templates
from pipeline.data.text import clean_text
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, write_json, write_jsonl
from pipeline.provenance import write_provenance

logger = logging.getLogger(__name__)
SPLITS = ("train", "validation", "test")
# When two rows are duplicates, the one kept is in the split listed first: an official
# test set stays whole and its duplicates leave train instead.
DEDUP_ORDER = ("test", "validation", "train")
WHOLE_SPLITS = {False: ("test",), True: ("test", "validation")}  # by whether validation is the study's draw
# The judged documents of a retrieval task whose validation and test rank against a corpus
# (TaskSpec.judgements); an empty file for every other task.
DOCUMENTS = "documents"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", required=True, help="the task's key under tasks:")
    parser.add_argument("--spec", required=True, help="JSON of its TaskSpec")
    parser.add_argument("--sources", required=True, type=Path, help="results/sources")
    parser.add_argument("--out", required=True, type=Path, help="results/data/tasks/NAME")


def run(args: argparse.Namespace) -> None:
    spec: TaskSpec = strict.parse_json(TaskSpec, args.spec, f"tasks.{args.name}")
    where = f"tasks.{args.name}.data"
    task_type = task_rows(spec)
    declared = declared_names(spec, task_type, where)
    if spec.data.reader == HUB_READER and spec.data.hub is not None:
        missing = unmapped_fields(spec.type, spec.data.hub.fields, spec.templates)
        if missing:
            raise PipelineError(f"{where}.hub.fields: no column mapped to our {missing[0]!r}")
    group_split = GroupSplit(spec.test_fraction, spec.validation_fraction, spec.split_seed)
    rows = read_source(spec.data, args.sources, where, group_split)
    if spec.templates:
        rows = (apply_templates(row, spec.templates, f"{where}: row {row.get('id')!r}") for row in rows)
    examples, num_empty = clean_examples(rows, task_type, where, spec.raw_text)
    if not examples:
        raise PipelineError(f"{where}: the source yields no non-empty rows")
    if spec.judgements is not None:
        judged = read_judgements(spec.judgements, spec.split_seed, f"tasks.{args.name}.judgements", spec.raw_text)
        queries = judged_queries(judged)
        # every pair of the source trains, less (when deduplicating) those that repeat a judged query or document
        train, num_duplicates = {"train": examples, "validation": [], "test": []}, 0
        if spec.deduplicate:
            train, num_duplicates = deduplicate(train, task_type, judged_keys(queries, judged))
        splits, documents = {**train, **queries}, judged.documents
    else:
        drawn = spec.validation_draw == "train_test_split"
        splits, num_duplicates = split_examples(examples, spec, where), 0
        if spec.deduplicate:
            splits, num_duplicates = deduplicate(splits, task_type, whole=WHOLE_SPLITS[drawn])
        documents = []
    if spec.needle is not None:
        splits = build_needle_splits(splits, spec)
    for split, rows_of_split in splits.items():
        if not rows_of_split:
            raise PipelineError(f"{where}: split {split!r} has 0 rows ({sum(map(len, splits.values()))} rows in all)")
    labels = label_names(declared, task_type, splits, where)
    source, inputs = describe_source(spec.data, args.sources)
    test = [e.fields for e in splits["test"]]
    baseline = random_ranking(test, len(documents)) if documents else task_type.baseline([e.fields for e in splits["train"]], test, labels)
    stats = task_stats(args.name, spec, task_type, splits, labels, num_duplicates, baseline, source)
    if spec.judgements is not None:
        stats["num_documents"] = len(documents)
    with atomic_path(args.out) as temporary:
        temporary.mkdir()
        ids = {name: i for i, name in enumerate(labels)}
        for split, rows_of_split in splits.items():
            write_jsonl(temporary / f"{split}.jsonl", ({"id": e.id, **task_type.written(e.fields, ids)} for e in rows_of_split))
        write_jsonl(temporary / f"{DOCUMENTS}.jsonl", documents)
        write_json(temporary / "stats.json", stats)
        outputs = [temporary / f"{name}.jsonl" for name in (*splits, DOCUMENTS)] + [temporary / "stats.json"]
        write_provenance(temporary, strict.to_plain(spec), inputs, outputs=outputs, name=args.name)
    sizes = ", ".join(f"{split} {len(rows_of_split)}" for split, rows_of_split in splits.items())
    logger.info("%s: %s; %d labels; %d empty and %d duplicate rows dropped", args.name, sizes, len(labels), num_empty, num_duplicates)


def declared_names(spec: TaskSpec, task_type: TaskRows, where: str) -> list[str] | None:
    """The label names the source declares (its hub spec's ``class_names`` for the type's label
    field), cleaned as labels are; None where it declares none. A name empty once cleaned, or the
    same as an earlier one, is refused before any row is read."""
    hub = spec.data.hub
    declared = (hub.class_names or {}).get(task_type.label_field) if hub is not None and task_type.label_field else None
    if declared is None:
        return None
    cleaned = [clean_text(name) for name in declared]
    for number, name in enumerate(cleaned):
        if not name or name in cleaned[:number]:
            problem = "empty" if not name else f"the same as name {cleaned.index(name)} ({declared[cleaned.index(name)]!r})"
            raise PipelineError(
                f"{where}.hub.class_names.{task_type.label_field}: name {number} {declared[number]!r} is {problem} once cleaned"
            )
    return cleaned


def label_names(declared: list[str] | None, task_type: TaskRows, splits: dict[str, list[Example]], where: str) -> list[str]:
    """The names prepare_task numbers, in id order: the source's ``declared`` names where it has them
    (every one, seen or not, so ids and the head's width are the source's own, as the study's are),
    else the names the rows hold, sorted. A row's name outside the declared ones is refused, naming the row."""
    seen = {name: e.id for rows in splits.values() for e in rows for name in task_type.names(e.fields)}
    if declared is None:
        return sorted(seen)
    undeclared = sorted(set(seen) - set(declared))
    if undeclared:
        name = undeclared[0]
        raise PipelineError(
            f"{where}: row {seen[name]!r} has {task_type.label_field} {name!r}, not one of hub.class_names.{task_type.label_field}"
        )
    return declared


def clean_examples(rows: Iterable[dict[str, Any]], task_type: TaskRows, where: str, raw: bool = False) -> tuple[list[Example], int]:
    """Checked examples without empty texts, cleaned unless ``raw``, and how many were empty."""
    examples: list[Example] = []
    ids: set[str] = set()
    num_empty = 0
    for row in rows:
        row_where = f"{where}: row {row.get('id')!r}"
        missing = [name for name in ("id", *task_type.fields) if name not in row]
        if missing:
            raise PipelineError(f"{row_where} has no {missing[0]!r}")
        split = row.get("split")
        if split is not None and split not in SPLITS:
            raise PipelineError(f"{row_where} is in split {split!r}; ours are {', '.join(SPLITS)}")
        fields = task_type.prepare(row, row_where, raw)
        if fields is None:
            num_empty += 1
            continue
        if row["id"] in ids:
            raise PipelineError(f"{where}: row id {row['id']!r} occurs twice")
        ids.add(row["id"])
        examples.append(Example(row["id"], row.get("group", row["id"]), split, fields))
    return examples, num_empty


def split_examples(examples: list[Example], spec: TaskSpec, where: str) -> dict[str, list[Example]]:
    """train/validation/test: the source's own test and validation splits where it has
    them; the rest by a seeded hash of the group, carving only the splits it lacks, or
    validation by the study's draw (``validation_draw: train_test_split``)."""
    given = {e.split for e in examples}
    if spec.validation_draw == "train_test_split" and "validation" not in given:
        if "test" not in given:
            raise PipelineError(f"{where}: validation_draw 'train_test_split' needs the source's own test split (splits: {{test: ...}})")
        train = [e for e in examples if e.split not in ("test", "validation")]
        drawn = study_validation_indices(len(train), spec.validation_fraction, spec.split_seed)
        held = set(drawn)
        return {
            "train": [e for i, e in enumerate(train) if i not in held],
            "validation": [train[i] for i in drawn],  # in the draw's order, as datasets gives it
            "test": [e for e in examples if e.split == "test"],
        }
    carve = GroupSplit(
        0.0 if "test" in given else spec.test_fraction,
        0.0 if "validation" in given else spec.validation_fraction,
        spec.split_seed,
    )
    splits: dict[str, list[Example]] = {split: [] for split in SPLITS}
    for example in examples:
        splits[example.split if example.split in ("test", "validation") else carve(example.group)].append(example)
    return splits


def study_validation_indices(num_rows: int, validation_fraction: float, seed: int) -> list[int]:
    """The rows of a train split of ``num_rows`` that EncodEval's
    ``train_test_split(train_size=1 - validation_fraction, seed=seed)`` sends to validation,
    in its order: datasets' own draw, run on the row numbers alone."""
    from datasets import Dataset  # only the study's draw needs it

    rows = Dataset.from_dict({"row": list(range(num_rows))})
    return list(rows.train_test_split(train_size=1 - validation_fraction, seed=seed)["test"]["row"])


def judged_queries(judged: JudgedSplits) -> dict[str, list[Example]]:
    """A judged retrieval task's validation and test: its judged queries (``{query, relevant}``)
    as the source has them, repeats included (the study's sets, example for example)."""
    return {
        split: [Example(row["id"], row["id"], split, {"query": row["query"], "relevant": row["relevant"]}) for row in rows]
        for split, rows in judged.queries.items()
    }


def judged_keys(queries: dict[str, list[Example]], judged: JudgedSplits) -> set[str]:
    """The dedup keys of the judged queries and documents: a training pair with one of them goes."""
    fields = [e.fields for rows in queries.values() for e in rows] + [{"document": d["document"]} for d in judged.documents]
    return {key for field in fields for key in RETRIEVAL_ROWS.dedup_keys(field)}


def deduplicate(
    splits: dict[str, list[Example]], task_type: TaskRows, seen: set[str] | None = None, whole: tuple[str, ...] = ("test",)
) -> tuple[dict[str, list[Example]], int]:
    """Each split without the rows that repeat a key of a row kept before them (test
    first, then validation, then train; source order within a split) or one of ``seen``,
    and how many went. The ``whole`` splits keep every row, repeats included: the test split
    is scored as the source has it (the study scores every row), and the study's drawn
    validation is its own; only their repeats in later splits go, so no test row is trained
    or selected on."""
    seen = set(seen or ())
    kept: dict[str, list[Example]] = {}
    for split in DEDUP_ORDER:
        kept[split] = []
        for example in splits[split]:
            keys = task_type.dedup_keys(example.fields)
            if split not in whole and not seen.isdisjoint(keys):
                continue
            seen.update(keys)
            kept[split].append(example)
    num_duplicates = sum(map(len, splits.values())) - sum(map(len, kept.values()))
    return {split: kept[split] for split in SPLITS}, num_duplicates


def build_needle_splits(splits: dict[str, list[Example]], spec: TaskSpec) -> dict[str, list[Example]]:
    """Each split's needle rows from its own sentences: every (length, depth) cell
    ``examples_per_cell`` times for test, half as often for validation, and
    ``num_train_examples`` random cells for train; seeded by split."""
    assert spec.needle is not None
    needle = spec.needle
    grid = [(length, depth) for length in needle.lengths for depth in needle.depths]
    built = {}
    for split, examples in splits.items():
        rng = random.Random(f"needle:{spec.split_seed}:{split}")
        if split == "train":
            cells = [rng.choice(grid) for _ in range(needle.num_train_examples)]
        else:
            repeats = needle.examples_per_cell if split == "test" else max(1, needle.examples_per_cell // 2)
            cells = [cell for cell in grid for _ in range(repeats)]
        articles: dict[str, list[str]] = {}
        for example in examples:
            articles.setdefault(example.group, []).append(example.fields["text"])
        rows = needle_rows(list(articles.values()), cells, rng) if articles else []
        built[split] = [Example(f"{split}/{number:05d}", split, split, row) for number, row in enumerate(rows)]
    return built


def task_stats(
    name: str,
    spec: TaskSpec,
    task_type: TaskRows,
    splits: dict[str, list[Example]],
    labels: list[str],
    num_duplicates: int,
    baseline: Baseline,
    source: dict[str, Any],
) -> dict[str, Any]:
    """stats.json: what the task is, its sizes and counts, and its trivial baseline."""
    counts = {split: Counter(name for e in rows for name in task_type.counted(e.fields)) for split, rows in splits.items()}
    return {
        "task": name,
        "family": spec.family,
        "type": spec.type,
        "metric": spec.metric,
        "proxy_for": spec.proxy_for,
        "description": spec.description,
        "derived_labels": spec.derived_labels,
        "labels": labels,
        "num_rows": {split: len(rows) for split, rows in splits.items()},
        "label_counts": {split: {key: counts[split][key] for key in task_type.count_keys(labels, counts[split])} for split in splits},
        "duplicates_removed": num_duplicates,
        "majority_label": baseline.label,
        "majority_test_score": baseline.score,
        "majority_baseline": baseline.description,
        "source": source,
    }
