"""Rows of a dataset read with ``datasets.load_dataset``: the hub at paper scale
(SST-2, MNLI, CoNLL-2003, SQuAD v2, MS MARCO, FineWeb-Edu), or local files of the same
schema (``path: json`` + ``data_files``).

Datasets are streamed, so ``max_rows`` of a multi-terabyte corpus cost only those rows,
and nothing lands in the ``datasets`` cache. Columns are renamed to ours through
``fields``. Integer classes become their names, as artifact readers give them: from the
dataset's ClassLabel features (a label, or a sequence of them such as CoNLL-2003's
``ner``), or from ``class_names`` for files without features (OntoNotes' bare int32 tags);
where both exist they must agree, and an id outside the names is refused, naming the row. Lists and mappings
(tokens, tags, SQuAD's ``answers``) keep their structure; other values become strings.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.config import HubSpec
from pipeline.data.contiguous import contiguous_range
from pipeline.data.sources.mirror import local_source, verify_read
from pipeline.errors import PipelineError, first_line

logger = logging.getLogger(__name__)


def load_rows(spec: HubSpec, where: str, shard: tuple[int, int] | None = None) -> Iterator[dict[str, Any]]:
    """Rows ``{"id", "split", <our fields>}`` of every split in ``spec.splits``, in order.

    ``id`` is ``<hub split>/<value>``, the value being that of the column mapped to our
    ``id`` if any (hub ids may repeat across splits), else the row's number in its data
    file (after the file's number when the split has several): the same for any number of
    shards. ``shard`` = (N, i) streams only the i-th of N contiguous slices of each split's
    data files; ``max_rows`` then caps each shard.
    """
    for ours, theirs in spec.splits.items():
        count = 0
        for row in _stream(spec, theirs, f"{where}.hub", shard):
            count += 1
            yield {"split": ours, **row}
        logger.info("%s: %d rows from %s split %r", where, count, spec.path, theirs)
        if count == 0:
            raise PipelineError(f"{where}.hub: {spec.path} split {theirs!r} has no rows")


def _stream(spec: HubSpec, split: str, where: str, shard: tuple[int, int] | None) -> Iterator[dict[str, Any]]:
    import datasets  # late: only hub sources pay for importing it

    path, data_files = local_source(spec)  # under the hub mirror, where the config has one
    listed = data_files.get(split, [])
    # Read from the mirror by its card, the config name is spent: the files are that config's.
    name = spec.name if path == spec.path else None
    for file in listed:  # datasets would fail on an empty one with a bare StopIteration
        if Path(file).is_file() and Path(file).stat().st_size == 0:
            raise PipelineError(f"{where}: {file}: file is empty (data of split {split!r})")
    try:
        if path == "parquet" and listed and all(Path(file).is_file() for file in listed):
            source: _Files = _ParquetFiles(listed)
        else:
            source = _Streamed(
                datasets.load_dataset(path, name, data_files=data_files or None, split=split, streaming=True, **_options(spec))
            )
        files = range(source.num_files)
        if shard is not None:
            num_shards, index = shard
            if source.num_files < num_shards:
                raise PipelineError(
                    f"{where}: corpus.num_shards is {num_shards} but {spec.path!r} split {split!r} has {source.num_files} data "
                    f"file(s), the unit a shard reads; set corpus.num_shards to at most {source.num_files}"
                )
            files = contiguous_range(source.num_files, num_shards, index)
        if len(listed) == source.num_files:  # a data file is a shard: verify the ones this job reads
            verify_read(spec, [listed[file] for file in files])
        else:
            verify_read(spec, listed)
        names = _class_names(spec, source.features, datasets.ClassLabel, where)
        labels = _file_labels(spec, split, source.num_files)
        records = itertools.chain.from_iterable(_numbered(source, file, f"{where}: {labels[file]}") for file in files)
        for name, location, record in itertools.islice(records, spec.max_rows):
            row = _rename(record, spec.fields, names, where, location)
            yield {**row, "id": f"{split}/{row.get('id', name)}"}
    except PipelineError:
        raise
    except Exception as error:  # datasets raises many types (network, file, split, schema)
        raise PipelineError(f"{where}: cannot read {spec.path!r} split {split!r}: {first_line(error)}") from None


def _options(spec: HubSpec) -> dict[str, str]:
    return {} if spec.delimiter is None else {"delimiter": spec.delimiter}


class _Files:
    """A split as numbered data files: how many, their features, and one file's records."""

    num_files: int
    features: Any

    def records(self, file: int) -> Iterator[dict[str, Any]]:
        raise NotImplementedError


class _Streamed(_Files):
    """Whatever ``datasets`` streams (the hub, json, csv, remote files), a data file being one of its shards."""

    def __init__(self, dataset: Any):
        self.dataset, self.num_files, self.features = dataset, dataset.num_shards, dataset.features or {}

    def records(self, file: int) -> Iterator[dict[str, Any]]:
        return iter(self.dataset.shard(self.num_files, file, contiguous=True))


class _ParquetFiles(_Files):
    """Local Parquet files read one record batch at a time with pyarrow, without pre-buffering:
    memory stays flat whatever the file's size (``datasets``' streaming holds far more of a
    large file), the rows and features (ClassLabel names from the file's metadata) the same."""

    BATCH_ROWS = 1024

    def __init__(self, paths: list[str]):
        import datasets
        import pyarrow.parquet as pq

        self.paths, self.num_files = paths, len(paths)
        self.features = datasets.Features.from_arrow_schema(pq.read_schema(paths[0]))

    def records(self, file: int) -> Iterator[dict[str, Any]]:
        import pyarrow.parquet as pq

        with pq.ParquetFile(self.paths[file], pre_buffer=False) as parquet:
            for batch in parquet.iter_batches(batch_size=self.BATCH_ROWS):
                yield from batch.to_pylist()


def _file_labels(spec: HubSpec, split: str, num_files: int) -> list[str]:
    """How errors name each data file of ``split``: its path where the config lists its files, else its number."""
    listed = spec.file_lists().get(split, [])
    return listed if len(listed) == num_files else [f"{spec.path!r} split {split!r} data file {file}" for file in range(num_files)]


def _numbered(source: _Files, file: int, label: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(name, location, record) for every record of one data file. The name is the row's
    number in the file, after the file's (``3-41``) when the split has several: the name of a
    row without an id of its own, which no number of shards changes. The location
    (``file:row``) is what an error about the row names; a file that cannot be read (not
    UTF-8, not JSON) is an error naming the file."""
    prefix = f"{file}-" if source.num_files > 1 else ""
    try:
        for number, record in enumerate(source.records(file)):
            yield f"{prefix}{number}", f"{label}:{number + 1}", record
    except PipelineError:
        raise
    except Exception as error:  # the reader's own (UnicodeDecodeError, pyarrow's ArrowInvalid, ...)
        raise PipelineError(f"{label}: cannot read: {first_line(error)}") from None


def _class_names(spec: HubSpec, features: dict[str, Any], class_label: type, where: str) -> dict[str, tuple[str, ...]]:
    """Our field -> its class names: from ``class_names``, else from the column's ClassLabel
    feature or that of a sequence of them. Both given and different: the file's ids would be read
    with names they do not mean, so it is refused."""
    names: dict[str, tuple[str, ...]] = {}
    for ours, column in spec.fields.items():
        feature = features.get(column)
        feature = getattr(feature, "feature", feature)  # a Sequence/List feature's item
        if isinstance(feature, class_label):
            names[ours] = tuple(feature.names)
    for ours, declared in (spec.class_names or {}).items():
        if ours in names and names[ours] != tuple(declared):
            raise PipelineError(f"{where}.class_names.{ours}: {list(declared)} differ from the data's ClassLabel names {list(names[ours])}")
    return {**names, **(spec.class_names or {})}


def _rename(record: dict[str, Any], fields: dict[str, str], names: dict[str, tuple[str, ...]], where: str, location: str) -> dict[str, Any]:
    missing = sorted(column for column in fields.values() if column not in record)
    if missing:
        raise PipelineError(f"{where}.fields: no column {missing[0]!r} (columns: {', '.join(sorted(record))})")
    empty = sorted(column for column in fields.values() if record[column] is None)
    if empty:  # a row without the field, in a file whose other rows have it
        raise PipelineError(f"{location}: no value in column {empty[0]!r}")
    return {ours: _value(record[column], names.get(ours, ()), f"{location}: column {column!r}") for ours, column in fields.items()}


def _value(value: Any, names: tuple[str, ...], where: str) -> Any:
    """A class number as its name (a number outside the names is refused), lists item by item,
    mappings as they are, anything else as a string."""
    if isinstance(value, list):
        return [_value(item, names, where) for item in value]
    if isinstance(value, dict):
        return value
    if names and isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < len(names):
            raise PipelineError(f"{where}: class id {value} is outside its {len(names)} names (0-{len(names) - 1})")
        return names[value]
    return "" if value is None else str(value)
