"""Rows of a dataset read with ``datasets.load_dataset``: the hub at paper scale
(SST-2, FineWeb-Edu), or local files of the same schema (``path: json`` + ``data_files``).

Datasets are streamed, so ``max_rows`` of a multi-terabyte corpus cost only those rows,
and nothing lands in the ``datasets`` cache. Columns are renamed to ours through
``fields``; integer class labels become their names, as artifact readers give them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from pipeline.config import HubSpec
from pipeline.errors import PipelineError

logger = logging.getLogger(__name__)


def load_rows(spec: HubSpec, where: str) -> Iterator[dict[str, str]]:
    """Rows ``{"id", "split", <our fields>}`` of every split in ``spec.splits``, in order.

    ``id`` is ``<hub split>/<value>``, the value being that of the column mapped to our
    ``id`` if any (hub ids may repeat across splits), else the row number.
    """
    for ours, theirs in spec.splits.items():
        count = 0
        for row in _stream(spec, theirs, f"{where}.hub"):
            count += 1
            yield {"split": ours, **row}
        logger.info("%s: %d rows from %s split %r", where, count, spec.path, theirs)
        if count == 0:
            raise PipelineError(f"{where}.hub: {spec.path} split {theirs!r} has no rows")


def _stream(spec: HubSpec, split: str, where: str) -> Iterator[dict[str, str]]:
    import datasets  # late: only hub sources pay for importing it

    try:
        dataset = datasets.load_dataset(spec.path, spec.name, data_files=spec.data_files, split=split, streaming=True)
        if spec.max_rows is not None:
            dataset = dataset.take(spec.max_rows)
        label_names = {
            column: feature.names
            for column, feature in (dataset.features or {}).items()
            if isinstance(feature, datasets.ClassLabel)
        }
        for number, record in enumerate(dataset):
            row = _rename(record, spec.fields, label_names, where)
            yield {**row, "id": f"{split}/{row.get('id', number)}"}
    except PipelineError:
        raise
    except Exception as error:  # datasets raises many types (network, file, split, schema)
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PipelineError(f"{where}: cannot read {spec.path!r} split {split!r}: {message}") from None


def _rename(
    record: dict[str, Any], fields: dict[str, str], label_names: dict[str, list[str]], where: str
) -> dict[str, str]:
    missing = sorted(column for column in fields.values() if column not in record)
    if missing:
        raise PipelineError(f"{where}.fields: no column {missing[0]!r} (columns: {', '.join(sorted(record))})")
    row: dict[str, str] = {}
    for ours, column in fields.items():
        value = record[column]
        if column in label_names and isinstance(value, int) and 0 <= value < len(label_names[column]):
            value = label_names[column][value]
        row[ours] = "" if value is None else str(value)
    return row
