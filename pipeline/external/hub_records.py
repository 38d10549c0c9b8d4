"""What the hub publishes of each repository the paper configuration reads, recorded once
(``published/hub_records.yaml``) with the public source each field was read from: repositories,
configs, data files, split row counts, features, label names, tagging scheme, first rows, and the
token lengths the cost estimate needs for a task not yet prepared.

Three readers hold the hub to these records: the fake hub (``tests/paper_hub.py``) is built from
them, so a stand-in cannot drift from what the hub publishes; staging compares what it staged from
the real hub with them (:func:`differences`); ``python -m pipeline cost`` costs an unprepared task
from their lengths (:mod:`pipeline.workflow.record_lengths`).

A feature type is written as a short text: ``string``, ``int32``, ``int64``, ``float64``, ``bool``,
``class_label`` (its names under ``label_names``) and ``list<type>``; a mapping is a struct and a
one-item list a list of it (MLDR's passages), as ``datasets`` prints features.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from pipeline import strict
from pipeline.errors import PipelineError

RECORDS = Path(__file__).parent / "published" / "hub_records.yaml"
SCALARS = ("string", "int32", "int64", "float64", "bool")
CLASS_LABEL = "class_label"
_LIST = re.compile(r"^list<(?P<item>\w+)>$")


@dataclass(frozen=True)
class FieldLengths:
    """Tokens of one field under the study's tokenizer (no special tokens)."""

    mean: float
    how: Literal["measured", "published", "words"]  # words: a source's mean words x words_to_tokens
    p50: float | None = None
    p95: float | None = None
    max: int | None = None


@dataclass(frozen=True)
class FirstRow:
    split: str
    row: dict[str, Any]


@dataclass(frozen=True)
class HubPart:
    """One repository (and config) a dataset is read from."""

    repo: str
    files: str | dict[str, str]  # a glob with {split}, or the hub split -> its one file
    splits: dict[str, int | None]  # the hub's split -> rows, as published
    features: dict[str, Any]  # column -> type (module docstring); split -> that, where each file has its own
    config: str | None = None
    revision: str | None = None
    label_names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    first_row: FirstRow | None = None

    def validate(self) -> None:
        for column in self.label_names:
            if column not in self.features:
                raise ValueError(f"label_names.{column}: no such column in features")
        for split, features in self.split_features().items():
            for column, kind in features.items():
                check_type(kind, f"features.{column}", column in self.label_names)
        if self.first_row is not None:
            columns = set(self.split_features().get(self.first_row.split, {}))
            if set(self.first_row.row) != columns:
                raise ValueError(f"first_row: columns {sorted(self.first_row.row)} are not the features' {sorted(columns)}")

    def split_features(self) -> dict[str, dict[str, Any]]:
        """Split -> its columns' types: one file per split with its own columns (BEIR's corpus and
        queries), else every split with the same."""
        if set(self.features) <= set(self.splits) and all(isinstance(kind, dict) for kind in self.features.values()):
            return dict(self.features)
        return {split: dict(self.features) for split in self.splits}

    def pattern(self, split: str) -> str:
        """The glob of the split's data files within the repository."""
        return self.files[split] if isinstance(self.files, dict) else self.files.format(split=split)


@dataclass(frozen=True)
class Judged:
    """A judged retrieval task's scored queries per split and the documents judged (at most)."""

    queries: dict[str, int]
    documents: int


@dataclass(frozen=True)
class DatasetRecord:
    parts: tuple[HubPart, ...]
    sources: dict[str, str]  # field -> the public source it was read from
    task: str | None = None  # the harness's task (config/tasks/paper/)
    tagging_scheme: Literal["IOB1", "IOB2"] | None = None
    lengths: dict[str, FieldLengths] | None = None
    judged: Judged | None = None
    unverified: tuple[str, ...] = ()  # fields no public source printed: assumed, as written


@dataclass(frozen=True)
class CheckpointsRecord:
    """The study's released checkpoints as EncodEval reads them."""

    models: tuple[str, ...]
    model_config: dict[str, Any]  # config.json's fixed entries
    size_keys: dict[str, str]  # config.json key -> the config size field it holds
    weights: str
    sources: dict[str, str]
    unverified: tuple[str, ...] = ()


@dataclass(frozen=True)
class HubRecords:
    words_to_tokens: float
    datasets: dict[str, DatasetRecord]
    released_checkpoints: CheckpointsRecord

    def for_task(self, task: str) -> DatasetRecord | None:
        return next((record for record in self.datasets.values() if record.task == task), None)


def check_type(kind: Any, where: str, has_names: bool) -> None:
    """A feature type as the module docstring spells it; a class label only with its names."""
    if isinstance(kind, dict):
        for name, inner in kind.items():
            check_type(inner, f"{where}.{name}", False)
    elif isinstance(kind, (list, tuple)):
        if len(kind) != 1:
            raise ValueError(f"{where}: a list type holds one item type, got {len(kind)}")
        check_type(kind[0], f"{where}[0]", has_names)
    elif isinstance(kind, str):
        item = _LIST.match(kind)["item"] if _LIST.match(kind) else kind
        if item == CLASS_LABEL and not has_names:
            raise ValueError(f"{where}: a class_label needs its names under label_names")
        if item not in (*SCALARS, CLASS_LABEL):
            raise ValueError(f"{where}: {kind!r} is not a feature type ({', '.join(SCALARS)}, {CLASS_LABEL}, list<...>)")
    else:
        raise ValueError(f"{where}: {kind!r} is not a feature type")


@functools.cache
def hub_records(path: Path = RECORDS) -> HubRecords:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise PipelineError(f"{path}: cannot read: {str(error).splitlines()[0]}") from None
    return strict.parse(HubRecords, data, path.name)


def datasets_features(kind: Any, names: tuple[str, ...] = ()) -> Any:
    """The ``datasets`` feature of a recorded type (``names``: a class label's)."""
    import datasets

    if isinstance(kind, dict):
        return {name: datasets_features(inner) for name, inner in kind.items()}
    if isinstance(kind, (list, tuple)):
        return datasets.List(datasets_features(kind[0], names))
    if matched := _LIST.match(kind):
        return datasets.List(datasets_features(matched["item"], names))
    if kind == CLASS_LABEL:
        return datasets.ClassLabel(names=list(names))
    return datasets.Value(kind)


def described(feature: Any) -> tuple[Any, tuple[str, ...]]:
    """A ``datasets`` feature as a recorded type, with its class names (() if none): the inverse of
    :func:`datasets_features`, for comparing what the hub serves with its record."""
    import datasets

    if isinstance(feature, dict):
        return {name: described(inner)[0] for name, inner in feature.items()}, ()
    if isinstance(feature, (datasets.List, datasets.Sequence, list)):
        inner = feature[0] if isinstance(feature, list) else feature.feature
        kind, names = described(inner)
        return (f"list<{kind}>" if isinstance(kind, str) else [kind]), names
    if isinstance(feature, datasets.ClassLabel):
        return CLASS_LABEL, tuple(feature.names)
    if isinstance(feature, datasets.Value):
        return feature.dtype, ()
    return type(feature).__name__, ()


def differences(part: HubPart, split: str, features: Any, num_rows: int | None) -> list[str]:
    """How a split as staged (its ``datasets`` features, and its rows where counted) differs from
    its record, one phrase each; [] where it does not."""
    found = []
    recorded = part.split_features().get(split)
    if recorded is None:
        return [f"split {split!r} is not in its record ({', '.join(part.splits)})"]
    served = {column: described(feature) for column, feature in features.items()}
    for column in sorted(set(recorded) | set(served)):
        if column not in served:
            found.append(f"column {column!r} recorded, not served")
        elif column not in recorded:
            found.append(f"column {column!r} served, not recorded")
        elif served[column][0] != recorded[column]:
            found.append(f"column {column!r} is {served[column][0]}, recorded {recorded[column]}")
        elif served[column][1] and served[column][1] != tuple(part.label_names.get(column, ())):
            found.append(f"column {column!r}'s names are {list(served[column][1])}, recorded {list(part.label_names.get(column, ()))}")
    expected = part.splits.get(split)
    if num_rows is not None and expected is not None and num_rows != expected:
        found.append(f"split {split!r} has {num_rows:,} rows, recorded {expected:,}")
    return found
