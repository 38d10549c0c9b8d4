"""What staging brought from the hub held to its record (:mod:`pipeline.external.hub_records`):
each staged Parquet split's features (its file's own metadata) and, where the source is the hub
itself, its row count. A difference is reported, not refused: the record may be the stale side,
and every reader checks what it reads (columns, class names, ids) on its own."""

from __future__ import annotations

from pathlib import Path

from pipeline.external.hub_records import HubPart, differences, hub_records
from pipeline.staging.references import HubReference


def record_parts(reference: HubReference) -> list[HubPart]:
    """The recorded parts of the repository ``reference`` stages (those of its config, where it names one)."""
    if reference.kind != "dataset":
        return []
    return [
        part
        for record in hub_records().datasets.values()
        for part in record.parts
        if (part.repo, part.revision) == (reference.repo, reference.revision)
        and (reference.config_name is None or part.config == reference.config_name)
    ]


def staged_differences(repository: Path, part: HubPart, count_rows: bool) -> list[str]:
    """How the Parquet splits of ``part`` staged under ``repository`` differ from the record; a
    split not staged (a config reads only some) or not Parquet (BEIR's JSON Lines) is not compared."""
    import datasets
    import pyarrow.parquet as pq

    found = []
    for split in part.splits:
        files = sorted(path for path in repository.glob(part.pattern(split)) if path.suffix == ".parquet")
        if files:
            features = datasets.Features.from_arrow_schema(pq.read_schema(files[0]))
            rows = sum(pq.ParquetFile(path).metadata.num_rows for path in files) if count_rows else None
            found += differences(part, split, features, rows)
    return found
