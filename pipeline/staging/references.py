"""Every place a configuration reads the Hugging Face hub: datasets (a repository id as a
source's ``path``, or ``hf://datasets/...`` data files) and models (a ready-made tokenizer, the
outside models), each with the config key that reads it.

One traversal serves both sides of staging: the ``stage`` command (:mod:`pipeline.workflow.stage`) lists and
downloads what it finds, :mod:`.mirror` points every one of them at the mirror.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pipeline.config import Config, HubSpec

# datasets' packaged builders: a `path` naming one reads data_files, not a repository.
LOCAL_BUILDERS = frozenset({"json", "csv", "parquet", "text", "arrow", "webdataset"})
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
HF_URL = re.compile(r"^hf://datasets/(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<revision>[^/]+))?/(?P<pattern>.+)$")
# What AutoTokenizer reads of a model repository (a ready-made tokenizer needs no weights).
TOKENIZER_FILES = ("tokenizer*", "special_tokens_map.json", "config.json", "README.md")

Kind = Literal["dataset", "model"]


@dataclass(frozen=True)
class HubReference:
    """One repository (at one revision) a config reads, and which of its files."""

    kind: Kind
    repo: str
    revision: str | None
    config_name: str | None  # a dataset config (its card's `configs`) whose files are read; None: see patterns
    patterns: tuple[str, ...]  # files within the repository (globs); () with no config_name: all of them
    where: tuple[str, ...]  # the config keys that read it

    @property
    def label(self) -> str:
        return (
            f"{self.kind} {self.repo}"
            + (f"@{self.revision}" if self.revision else "")
            + (f" ({self.config_name})" if self.config_name else "")
        )


def is_hub_id(path: str) -> bool:
    """Whether a dataset or model ``path`` names a hub repository, not a builder or a local directory."""
    return path not in LOCAL_BUILDERS and bool(HUB_ID.match(path)) and not Path(path).exists()


def hub_specs(config: Config) -> Iterator[tuple[str, HubSpec]]:
    """(config key, spec) of every dataset source the workflow reads: the corpus's and each
    fine-tuning task's (its training data and a judged retrieval task's three sources)."""
    for number, source in enumerate(config.corpus.documents):
        if source.hub is not None:
            yield f"corpus.documents[{number}].hub", source.hub
    for name in config.finetuning.tasks:
        task = config.tasks[name]
        if task.data.hub is not None:
            yield f"tasks.{name}.data.hub", task.data.hub
        if task.judgements is not None:
            for part in ("qrels", "queries", "corpus"):
                spec = getattr(task.judgements, part)
                if spec is not None:
                    yield f"tasks.{name}.judgements.{part}", spec


def model_paths(config: Config) -> Iterator[tuple[str, str, str | None, tuple[str, ...]]]:
    """(config key, path, revision, the files it reads; () for all) of every model a job loads."""
    ready_made = config.tokenizer.ready_made
    if ready_made is not None and ready_made.artifact is None:  # an artifact's comes from its registry, not the hub
        yield "tokenizer.ready_made.path", ready_made.path, ready_made.revision, TOKENIZER_FILES
    for number, outside in enumerate(config.outside_models):
        yield f"outside_models[{number}].path", outside.path, outside.revision, ()


def hf_files(spec: HubSpec) -> Iterator[tuple[str, re.Match[str]]]:
    """(split, match: repo, revision, pattern) of every ``hf://datasets/...`` data file of ``spec``."""
    for split, files in spec.file_lists().items():
        for file in files:
            if matched := HF_URL.match(file):
                yield split, matched


def references(config: Config) -> list[HubReference]:
    """Every hub repository the config reads, once each (its keys and patterns merged)."""
    found: dict[tuple, HubReference] = {}

    def add(reference: HubReference) -> None:
        key = (reference.kind, reference.repo, reference.revision, reference.config_name)
        earlier = found.get(key)
        if earlier is not None:
            patterns = () if not earlier.patterns or not reference.patterns else tuple(dict.fromkeys(earlier.patterns + reference.patterns))
            reference = dataclasses.replace(earlier, patterns=patterns, where=earlier.where + reference.where)
        found[key] = reference

    for where, spec in hub_specs(config):
        if is_hub_id(spec.path):
            add(HubReference("dataset", spec.path, None, spec.name, (), (f"{where}.path",)))
        for split, matched in hf_files(spec):
            add(
                HubReference("dataset", matched["repo"], matched["revision"], None, (matched["pattern"],), (f"{where}.data_files.{split}",))
            )
    for where, path, revision, patterns in model_paths(config):
        if is_hub_id(path):
            add(HubReference("model", path, revision, None, patterns, (where,)))
    return list(found.values())


def with_hub_paths(
    config: Config, dataset: Callable[[str, HubSpec], HubSpec], model: Callable[[str, str, str | None], tuple[str, str | None]]
) -> Config:
    """The config with every dataset source replaced by ``dataset(key, spec)`` and every model's
    path and revision by ``model(key, path, revision)`` (the mirror's rewrite)."""

    def relocated(where: str, spec: Any) -> Any:  # a ReadyMadeTokenizer or an OutsideModelSpec
        path, revision = model(where, spec.path, spec.revision)
        return dataclasses.replace(spec, path=path, revision=revision)

    corpus = config.corpus
    documents = tuple(
        dataclasses.replace(source, hub=dataset(f"corpus.documents[{number}].hub", source.hub)) if source.hub is not None else source
        for number, source in enumerate(corpus.documents)
    )
    tasks = dict(config.tasks)
    for name in config.finetuning.tasks:
        task = tasks[name]
        data = (
            dataclasses.replace(task.data, hub=dataset(f"tasks.{name}.data.hub", task.data.hub)) if task.data.hub is not None else task.data
        )
        judgements = task.judgements
        if judgements is not None:
            parts = {part: getattr(judgements, part) for part in ("qrels", "queries", "corpus")}
            judgements = dataclasses.replace(
                judgements, **{part: dataset(f"tasks.{name}.judgements.{part}", spec) for part, spec in parts.items() if spec is not None}
            )
        tasks[name] = dataclasses.replace(task, data=data, judgements=judgements)
    tokenizer = config.tokenizer
    if tokenizer.ready_made is not None and tokenizer.ready_made.artifact is None:
        tokenizer = dataclasses.replace(tokenizer, ready_made=relocated("tokenizer.ready_made.path", tokenizer.ready_made))
    outside = tuple(
        dataclasses.replace(relocated(f"outside_models[{number}].path", spec), hub_id=spec.path if is_hub_id(spec.path) else None)
        for number, spec in enumerate(config.outside_models)
    )
    return dataclasses.replace(
        config, corpus=dataclasses.replace(corpus, documents=documents), tasks=tasks, tokenizer=tokenizer, outside_models=outside
    )
