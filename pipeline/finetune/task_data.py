"""A prepared task, tokenized once and held in memory for the whole LR x seed sweep."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from pipeline.files import read_json, read_jsonl

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class EncodedSplit:
    input_ids: list[list[int]]  # one token list per example, framed <s> ... </s>, truncated
    labels: torch.Tensor  # (N,) long

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass(frozen=True)
class TaskData:
    name: str
    stats: dict
    splits: dict[str, EncodedSplit]

    @property
    def num_labels(self) -> int:
        return len(self.stats["labels"])


def load_task(task_dir: str | Path, tokenizer, max_length: int) -> TaskData:
    task_dir = Path(task_dir)
    stats = read_json(task_dir / "stats.json")
    splits = {}
    for split in SPLITS:
        rows = read_jsonl(task_dir / f"{split}.jsonl")
        encoded = tokenizer([row["text"] for row in rows], truncation=True, max_length=max_length)["input_ids"]
        splits[split] = EncodedSplit(encoded, torch.tensor([row["label"] for row in rows], dtype=torch.long))
    return TaskData(task_dir.name, stats, splits)


def pad_batch(sequences: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad to the longest sequence: ids (B, T) and attention mask (B, T) of 0/1."""
    length = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), length), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        mask[row, : len(sequence)] = 1
    return ids, mask
