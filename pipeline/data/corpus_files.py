"""The prepared corpus on disk, and reading it back as one stream.

``prepare-corpus`` writes one directory per shard (``shards/<i>/``): per source ``k``, the
documents that survived cleaning, the length filter and decontamination
(``source-<k>.jsonl``: id, source, text, split) and one fixed-size record per document
(``source-<k>.keys``, :data:`KEY`): hashes of its text and id, its words and characters, its
split. ``gather-corpus`` reads only the keys of every shard, drops exact duplicates across
the whole corpus and writes ``index.json``: the files in corpus order (source by source,
shard by shard within a source) with the rows each must skip. :func:`read_corpus` follows
it, so every reader sees the corpus a single shard would have produced.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.errors import PipelineError
from pipeline.files import iter_jsonl, read_json

# One record per kept document, aligned with its row of source-<k>.jsonl (45 bytes, packed).
KEY = np.dtype([("text", "V16"), ("id", "V16"), ("words", "<u4"), ("characters", "<u8"), ("heldout", "u1")])
INDEX = "index.json"
SPLITS = ("train", "heldout")


def shard_dir(corpus_dir: str | Path, shard: int) -> Path:
    return Path(corpus_dir) / "shards" / str(shard)


def documents_file(directory: Path, source: int) -> Path:
    return directory / f"source-{source}.jsonl"


def keys_file(directory: Path, source: int) -> Path:
    return directory / f"source-{source}.keys"


def count_keys(path: Path) -> int:
    """How many key records one (shard, source) file holds; a truncated file is an error naming it."""
    size = path.stat().st_size if path.is_file() else -1
    if size < 0 or size % KEY.itemsize:
        raise PipelineError(
            f"{path}: {'missing' if size < 0 else f'{size} bytes, not whole {KEY.itemsize}-byte records'}; rerun prepare_corpus"
        )
    return size // KEY.itemsize


def corpus_index(corpus_dir: str | Path) -> dict[str, Any]:
    path = Path(corpus_dir) / INDEX
    if not path.is_file():
        raise PipelineError(f"{path}: no corpus index (run the gather_corpus rule)")
    return read_json(path)


def read_corpus(corpus_dir: str | Path, split: str, shard: int | None = None) -> Iterator[dict[str, str]]:
    """The documents of ``split`` in corpus order (of one shard only, if given), each once."""
    for entry in corpus_index(corpus_dir)["files"]:
        if shard is None or entry["shard"] == shard:
            yield from read_entry(corpus_dir, entry, split)


def read_entry(corpus_dir: str | Path, entry: dict[str, Any], split: str) -> Iterator[dict[str, str]]:
    """The documents of ``split`` in one (shard, source) file of the index, duplicates skipped."""
    if split not in SPLITS:
        raise PipelineError(f"{corpus_dir}: no split {split!r} (splits: {', '.join(SPLITS)})")
    skipped = set(entry["duplicates"])
    for number, row in enumerate(iter_jsonl(Path(corpus_dir) / entry["path"], allow_empty=True)):
        if number not in skipped and row["split"] == split:
            yield row
