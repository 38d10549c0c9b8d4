"""Data sources: the one index of readers, each turning a fetched artifact (or a hub
dataset) into rows. One module per source; a module is imported only when one of its
readers is used, so reading BBC articles does not import mwparserfromhell.

A reader takes the artifact's ``extracted/`` directory and yields dicts with a stable
``id``, optionally a ``group`` (rows of one group always land in one split: the BBC
readers give the article) and the fields of the task type they serve (``text`` and a
``label`` name for classification; see :mod:`pipeline.data.task_rows`); corpus readers
give ``text``. Readers that combine two groups in one row (a sentence with another
article's) also take the task's group split, so both come from one split. The reader
named ``hf`` is not an artifact reader: it streams a dataset through :mod:`.hub`.
Readers only locate, decode and assemble; cleaning and deduplication belong to the
stages (:mod:`pipeline.data.prepare_task`, :mod:`pipeline.data.prepare_corpus`), so every
source is cleaned the same way.

To add a source: write ``pipeline/data/sources/<source>.py`` with its reader function and
name it in :data:`READERS`; a config then uses it as ``data: {reader: <name>, artifact: ...}``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline import strict
from pipeline.config import DataSourceSpec
from pipeline.data.contiguous import contiguous_range
from pipeline.data.sources.hub import load_rows
from pipeline.data.sources.mirror import local_source
from pipeline.data.splits import SplitOf
from pipeline.errors import PipelineError
from pipeline.files import read_json

Row = dict[str, Any]
HUB_READER = "hf"


@dataclass(frozen=True)
class Reader:
    module: str  # under pipeline.data.sources
    function: str  # (extracted artifact directory) -> rows; with pairs_across_groups, (directory, split_of) -> rows
    pairs_across_groups: bool = False  # builds rows from two groups, so it needs the task's group split


READERS = {
    "vader_movie_snippets": Reader("vader", "read_movie_snippets"),
    "bbc_news_topics": Reader("bbc", "read_news_topics"),
    "bbc_news": Reader("bbc", "read_news"),
    # Proxies of the study's other tasks, derived from the same articles.
    "bbc_proper_noun_tags": Reader("bbc_tasks", "read_proper_noun_tags"),
    "bbc_titles": Reader("bbc_tasks", "read_titles"),
    "bbc_sentences": Reader("bbc_tasks", "read_sentences"),
    "bbc_sentence_pairs": Reader("bbc_tasks", "read_sentence_pairs", pairs_across_groups=True),
    "bbc_cloze": Reader("bbc_tasks", "read_cloze", pairs_across_groups=True),
    "bbc_cloze_answerable": Reader("bbc_tasks", "read_answerable_cloze", pairs_across_groups=True),
    "rotten_tomatoes_reviews": Reader("rotten_tomatoes", "read_reviews"),
    "wikipedia_dump": Reader("wikipedia", "read_dump"),
}


def known_readers() -> list[str]:
    return sorted([*READERS, HUB_READER])


def reader_function(name: str) -> Callable[..., Iterator[Row]]:
    """The function behind a reader name, its module imported now."""
    reader = READERS[name]
    return getattr(importlib.import_module(f"{__name__}.{reader.module}"), reader.function)


def read_source(source: DataSourceSpec, sources_dir: Path, where: str, split_of: SplitOf | None = None) -> Iterator[Row]:
    """The rows of one configured source; an unknown reader or unfetched artifact fails at once.

    ``split_of`` is the task's group split, which the readers that pair rows across groups
    need; without it (a corpus source) they are an error.
    """
    if source.reader == HUB_READER:
        assert source.hub is not None  # DataSourceSpec.validate guarantees it
        return load_rows(source.hub, where)
    if source.reader not in READERS:
        raise PipelineError(f"{where}.reader: unknown reader {source.reader!r} (known: {', '.join(known_readers())})")
    if READERS[source.reader].pairs_across_groups:
        if split_of is None:
            raise PipelineError(f"{where}.reader: {source.reader!r} builds task rows across articles; it is no corpus reader")
        return reader_function(source.reader)(artifact_dir(source, sources_dir), split_of)
    return reader_function(source.reader)(artifact_dir(source, sources_dir))


def artifact_dir(source: DataSourceSpec, sources_dir: Path) -> Path:
    root = Path(sources_dir) / str(source.artifact) / "extracted"
    if not root.is_dir():
        raise PipelineError(f"{root}: artifact {source.artifact!r} has not been fetched (no such directory); fetch it: snakemake -f {root}")
    return root


def describe_source(
    source: DataSourceSpec, sources_dir: Path, shard: tuple[int, int] | None = None
) -> tuple[dict[str, Any], dict[str, Path]]:
    """What a stage records about a source: (its manifest or hub spec, input files by role).
    A shard job (``shard`` = (N, i)) of a hub source records only the local data files it
    reads (its contiguous slice of each split's files), not every shard's."""
    if source.reader == HUB_READER:
        assert source.hub is not None
        files = []
        for listed in local_source(source.hub)[1].values():
            if shard is not None and len(listed) >= shard[0] and all(Path(file).is_file() for file in listed):
                listed = [listed[i] for i in contiguous_range(len(listed), *shard)]
            files += listed
        local = {f"data_files:{file}": Path(file) for file in files if Path(file).is_file()}
        return {"hub": strict.to_plain(source.hub)}, local
    manifest = Path(sources_dir) / str(source.artifact) / "manifest.json"
    return read_json(manifest), {f"manifest:{source.artifact}": manifest}
