"""``python -m pipeline prepare-task``: one downstream task's train/validation/test files.

Rows are cleaned, exact duplicates removed *before* splitting (so no sentence sits in
both train and test), then split as the study does: the source's own test split when it
has one, else a seeded ``test_fraction``; validation is a seeded ``validation_fraction``
of train. Every split keeps the source's row order. Labels are numbered in sorted order.
"""

from __future__ import annotations

import argparse
import logging
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import strict
from pipeline.config import TaskSpec
from pipeline.data.readers import HUB_READER, describe_source, read_source
from pipeline.data.text import clean_text, dedup_key
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, write_json, write_jsonl
from pipeline.provenance import write_provenance

logger = logging.getLogger(__name__)
SPLITS = ("train", "validation", "test")
# When two rows are duplicates, the one kept is in the split listed first: an official
# test set stays whole and its duplicates leave train instead.
_KEEP_FIRST = {"test": 0, "validation": 1, "train": 2, None: 3}


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    label: str
    split: str | None  # the source's own split, if it has them


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", required=True, help="the task's key under tasks:")
    parser.add_argument("--spec", required=True, help="JSON of its TaskSpec")
    parser.add_argument("--sources", required=True, type=Path, help="results/sources")
    parser.add_argument("--out", required=True, type=Path, help="results/data/tasks/NAME")


def run(args: argparse.Namespace) -> None:
    spec: TaskSpec = strict.parse_json(TaskSpec, args.spec, f"tasks.{args.name}")
    where = f"tasks.{args.name}.data"
    if spec.data.reader == HUB_READER and spec.data.hub is not None:
        missing = sorted({"text", "label"} - spec.data.hub.fields.keys())
        if missing:
            raise PipelineError(f"{where}.hub.fields: no column mapped to our {missing[0]!r}")
    examples, num_empty = clean_examples(read_source(spec.data, args.sources, where), where)
    examples, num_duplicates = deduplicate(examples)
    if not examples:
        raise PipelineError(f"{where}: the source yields no non-empty rows")
    splits = split_examples(examples, spec)
    for split, rows in splits.items():
        if not rows:
            raise PipelineError(f"{where}: split {split!r} has 0 rows ({len(examples)} rows in all)")
    labels = sorted({e.label for e in examples})
    source, inputs = describe_source(spec.data, args.sources)
    stats = task_stats(args.name, spec, splits, labels, num_duplicates, source)
    with atomic_path(args.out) as temporary:
        temporary.mkdir()
        label_ids = {name: i for i, name in enumerate(labels)}
        for split, rows in splits.items():
            write_jsonl(
                temporary / f"{split}.jsonl", ({"id": e.id, "text": e.text, "label": label_ids[e.label]} for e in rows)
            )
        write_json(temporary / "stats.json", stats)
        write_provenance(temporary, strict.to_plain(spec), inputs, name=args.name)
    sizes = ", ".join(f"{split} {len(rows)}" for split, rows in splits.items())
    logger.info(
        "%s: %s; %d labels; %d empty and %d duplicate rows dropped",
        args.name,
        sizes,
        len(labels),
        num_empty,
        num_duplicates,
    )


def clean_examples(rows: Iterable[dict[str, str]], where: str) -> tuple[list[Example], int]:
    """Cleaned examples without empty texts, and how many were empty."""
    examples: list[Example] = []
    ids: set[str] = set()
    num_empty = 0
    for row in rows:
        missing = sorted({"id", "text", "label"} - row.keys())
        if missing:
            raise PipelineError(f"{where}: row {row.get('id')!r} has no {missing[0]!r}")
        split = row.get("split")
        if split not in _KEEP_FIRST:
            raise PipelineError(f"{where}: row {row['id']!r} is in split {split!r}; ours are {', '.join(SPLITS)}")
        text = clean_text(row["text"])
        if not text:
            num_empty += 1
            continue
        if row["id"] in ids:
            raise PipelineError(f"{where}: row id {row['id']!r} occurs twice")
        ids.add(row["id"])
        examples.append(Example(row["id"], text, row["label"], split))
    return examples, num_empty


def deduplicate(examples: list[Example]) -> tuple[list[Example], int]:
    """One example per normalised text, in source order; and how many were dropped."""
    kept: set[int] = set()
    seen: set[str] = set()
    for i in sorted(range(len(examples)), key=lambda i: _KEEP_FIRST[examples[i].split]):
        key = dedup_key(examples[i].text)
        if key not in seen:
            seen.add(key)
            kept.add(i)
    return [e for i, e in enumerate(examples) if i in kept], len(examples) - len(kept)


def split_examples(examples: list[Example], spec: TaskSpec) -> dict[str, list[Example]]:
    """train/validation/test: the source's own splits where given, seeded samples otherwise."""
    given = {split: [e for e in examples if e.split == split] for split in SPLITS}
    train = [e for e in examples if e.split in (None, "train")]
    test = given["test"]
    if not test:
        test, train = take_fraction(train, spec.test_fraction, spec.split_seed)
    validation = given["validation"]
    if not validation:
        validation, train = take_fraction(train, spec.validation_fraction, spec.split_seed)
    return {"train": train, "validation": validation, "test": test}


def take_fraction(examples: list[Example], fraction: float, seed: int) -> tuple[list[Example], list[Example]]:
    """A seeded random ``fraction`` of the examples and the rest, both in source order."""
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    taken = set(order[: round(len(examples) * fraction)])
    return [e for i, e in enumerate(examples) if i in taken], [e for i, e in enumerate(examples) if i not in taken]


def task_stats(
    name: str,
    spec: TaskSpec,
    splits: dict[str, list[Example]],
    labels: list[str],
    num_duplicates: int,
    source: dict[str, Any],
) -> dict[str, Any]:
    counts = {split: Counter(e.label for e in rows) for split, rows in splits.items()}
    # most frequent in train; ties go to the first label name, for determinism
    majority = min(labels, key=lambda label: (-counts["train"][label], label))
    return {
        "task": name,
        "family": spec.family,
        "type": spec.type,
        "metric": spec.metric,
        "proxy_for": spec.proxy_for,
        "description": spec.description,
        "labels": labels,
        "num_rows": {split: len(rows) for split, rows in splits.items()},
        "label_counts": {split: {label: counts[split][label] for label in labels} for split in splits},
        "duplicates_removed": num_duplicates,
        "majority_label": majority,
        "majority_test_score": round(100 * counts["test"][majority] / len(splits["test"]), 4),
        "source": source,
    }
