"""A prepared task read once, encoded once, and held in memory for the whole LR x seed sweep,
plus the length ordering every task type scores in (its padding: :func:`pipeline.batch.pad_batch`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.files import iter_jsonl, read_json, read_jsonl
from pipeline.integrity import verify_recorded

SPLITS = ("train", "validation", "test")
DOCUMENTS_FILE = "documents.jsonl"  # a judged retrieval task's corpus (empty for any other task)


@dataclass(frozen=True)
class EncodedSplit:
    """One split: its rows (as prepare_task wrote them), what a task type encoded from each
    row, each example's token length (for length-grouped batches) and the metric's references."""

    rows: list[dict]
    examples: list[Any]
    lengths: list[int]
    references: list[Any]

    def __len__(self) -> int:
        return len(self.examples)


def read_task(task_dir: str | Path) -> tuple[dict, dict[str, list[dict]]]:
    """``stats.json`` and the rows of every split of a prepared task directory."""
    task_dir = Path(task_dir)
    for split in SPLITS:
        if (task_dir / f"{split}.jsonl").is_file():  # a missing one is read_jsonl's error to name
            verify_recorded(task_dir / f"{split}.jsonl")
    return read_json(task_dir / "stats.json"), {split: read_jsonl(task_dir / f"{split}.jsonl") for split in SPLITS}


def read_documents(task_dir: str | Path) -> tuple[dict, ...]:
    """A judged retrieval task's corpus (``documents.jsonl``, empty for other tasks)."""
    path = Path(task_dir) / DOCUMENTS_FILE
    verify_recorded(path)
    return tuple(iter_jsonl(path, allow_empty=True))


def in_length_order(lengths: Sequence[int], batch_size: int, predict_batch: Callable[[list[int]], list]) -> list:
    """``predict_batch`` over batches of similar length (less padding), results in example order.

    ``predict_batch(indices)`` returns one result per index; evaluation never depends on the
    order, so sorting by length costs nothing and saves the padded compute.
    """
    results: list = [None] * len(lengths)
    for indices in _length_sorted_batches(lengths, batch_size):
        for index, result in zip(indices, predict_batch(indices), strict=True):
            results[index] = result
    return results


def _length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]
