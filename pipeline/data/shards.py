"""Which rows of a corpus source a shard job reads.

Shard ``i`` of ``N`` takes a contiguous slice of every source, so that the shards of a
source, read in shard order, are the source in its own order: the corpus a run of N shards
produces, read source by source and shard by shard (:mod:`.corpus_files`), is the corpus of
one shard. A hub dataset is sliced by its data files (``datasets``' ``IterableDataset.shard``,
contiguous), so a shard job streams only its own files; a registry artifact, small by
construction, by its rows, after counting them in a first pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pipeline.config import DataSourceSpec
from pipeline.data.contiguous import contiguous_range
from pipeline.data.sources import HUB_READER, Row, read_source
from pipeline.data.sources.hub import load_rows


def shard_rows(source: DataSourceSpec, sources_dir: Path, where: str, num_shards: int, index: int) -> Iterator[Row]:
    """The rows of ``source`` that shard ``index`` of ``num_shards`` prepares, in source order."""
    if num_shards == 1:
        return read_source(source, sources_dir, where)
    if source.reader == HUB_READER:
        assert source.hub is not None  # DataSourceSpec.validate guarantees it
        return load_rows(source.hub, where, shard=(num_shards, index))
    length = sum(1 for _ in read_source(source, sources_dir, where))
    kept = contiguous_range(length, num_shards, index)
    return (row for position, row in enumerate(read_source(source, sources_dir, where)) if position in kept)
