"""``python -m pipeline gather-corpus``: the shards of the corpus as one corpus.

Reads only the shards' fixed-size keys and counts (:mod:`.corpus_files`), never their text.
Orders every kept document as one shard would have (source by source, shard by shard), keeps
the first of each set of exact duplicates (same text, case and spacing aside), refuses a
document id that occurs twice, and writes ``index.json`` (the files in that order, each with
the rows to skip) and ``stats.json`` (what was read, dropped and kept, per source).

Its memory is bounded whatever the corpus: duplicates are found one hash partition at a time
(``--max-documents-in-memory`` documents' hashes and positions per pass, each pass reading the
keys files a chunk at a time), so 97M documents (FineWeb-Edu's sample-100BT) take as many
passes as they need rather than 16 GiB at once; what stays is the positions of the duplicates.
Each pass reads every keys file (45 bytes a document: 4.4 GB at 97M), from the page cache
where the node has room for them.
"""

from __future__ import annotations

import argparse
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.data.corpus_files import INDEX, KEY, count_keys, documents_file, keys_file
from pipeline.data.prepare_corpus import SHARD_COUNTS
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, read_json, write_json
from pipeline.integrity import verify_recorded
from pipeline.provenance import write_provenance

logger = logging.getLogger(__name__)
# Hashes and positions of this many documents per pass (24 bytes each, a few times that while
# sorting): about 0.5 GB, whatever the number of documents (bench/gather_memory.py).
MAX_DOCUMENTS_IN_MEMORY = 4_000_000
CHUNK = 1 << 20  # rows of a keys file looked at at once


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shards", required=True, nargs="+", type=Path, help="results/data/corpus/shards/<i>, in shard order")
    parser.add_argument("--out", required=True, type=Path, help="results/data/corpus: index.json and stats.json are written there")
    parser.add_argument("--max-documents-in-memory", type=int, default=MAX_DOCUMENTS_IN_MEMORY, help=argparse.SUPPRESS)


@dataclass(frozen=True)
class KeysFile:
    source: int
    shard: int
    directory: Path
    start: int  # its first document's position in corpus order
    rows: int

    def chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, key records) of each ``CHUNK`` rows, read from disk as they come."""
        path = keys_file(self.directory, self.source)
        for begin in range(0, self.rows, CHUNK):
            yield begin, np.fromfile(path, dtype=KEY, count=min(CHUNK, self.rows - begin), offset=begin * KEY.itemsize)


def run(args: argparse.Namespace) -> None:
    shards = [read_json(shard / "counts.json") for shard in args.shards]
    names = shards[0]["sources"]
    if any(shard["sources"] != names for shard in shards):
        raise PipelineError(f"{args.shards[0]}: the shards were prepared from different source lists; rerun prepare_corpus")
    files = corpus_files(args.shards, len(names))
    total = sum(file.rows for file in files)
    if total == 0:
        raise PipelineError(f"corpus: no document left in any shard before deduplication; {dropped_because(shards)}")
    passes = max(1, math.ceil(total / args.max_documents_in_memory))
    duplicate = first_seen_elsewhere(files, "text", passes)
    repeated = first_seen_elsewhere(files, "id", passes, skip=duplicate)
    if len(repeated):
        raise PipelineError(f"{locate(files, int(repeated[0]))}: document id occurs twice in the corpus")
    dropped = [duplicate[(duplicate >= f.start) & (duplicate < f.start + f.rows)] - f.start for f in files]
    stats = corpus_stats(names, shards, files, dropped)
    entries = [
        {
            "source": f.source,
            "shard": f.shard,
            "path": str(documents_file(f.directory, f.source).relative_to(args.out)),
            "rows": f.rows,
            "duplicates": rows.tolist(),
        }
        for f, rows in zip(files, dropped)
    ]
    with atomic_path(args.out / INDEX) as index:
        write_json(index, {"num_shards": len(args.shards), "sources": names, "files": entries})
    write_json(args.out / "stats.json", stats)
    inputs = {f"shard:{i}/counts.json": d / "counts.json" for i, d in enumerate(args.shards)}
    inputs |= {f"shard:{f.shard}/{keys_file(f.directory, f.source).name}": keys_file(f.directory, f.source) for f in files}
    write_provenance(args.out, {"num_shards": len(args.shards)}, inputs)
    totals = stats["totals"]
    logger.info(
        "corpus: %d train + %d held-out documents, %s words, %d duplicates dropped (%d pass(es) over the keys)",
        totals["train_documents"],
        totals["heldout_documents"],
        f"{totals['words']:,}",
        len(duplicate),
        passes,
    )


def dropped_because(shards: list[dict[str, Any]]) -> str:
    """Why prepare_corpus dropped what it read, summed over shards ("1,831 read: 1,831 shorter
    than corpus.min_characters, 0 contaminated"), from each shard's counts.json."""
    totals: dict[str, int] = {}
    for shard in shards:
        for counts in shard["counts"].values():
            for key in ("documents_read", "too_short", "contaminated"):
                totals[key] = totals.get(key, 0) + counts.get(key, 0)
    return (
        f"{totals.get('documents_read', 0):,} read: {totals.get('too_short', 0):,} shorter than corpus.min_characters,"
        f" {totals.get('contaminated', 0):,} sharing an n-gram with a task's validation or test text (corpus.decontamination_ngram)"
    )


def corpus_files(shard_dirs: list[Path], num_sources: int) -> list[KeysFile]:
    """Every (source, shard) keys file in corpus order: source by source, shard by shard
    within a source (pipeline/data/shards.py), each verified against its shard's provenance."""
    files, start = [], 0
    for source in range(num_sources):
        for shard, directory in enumerate(shard_dirs):
            path = keys_file(directory, source)
            verify_recorded(path)
            rows = count_keys(path)
            files.append(KeysFile(source, shard, directory, start, rows))
            start += rows
    return files


def first_seen_elsewhere(files: list[KeysFile], field: str, passes: int, skip: np.ndarray | None = None) -> np.ndarray:
    """Sorted corpus positions of the documents whose ``field`` hash occurred at an earlier
    position (the first of each set is kept), leaving out the positions in ``skip``. One pass
    per hash partition (the hash's first 8 bytes modulo ``passes``), so a pass holds about
    1/passes of the corpus."""
    found = []
    for partition in range(passes):
        hashes, positions = [], []
        for file in files:
            for begin, keys in file.chunks():
                words = np.ascontiguousarray(keys[field]).view(np.uint64).reshape(-1, 2)  # (rows, 2)
                rows = np.arange(file.start + begin, file.start + begin + len(words))
                mine = words[:, 0] % passes == partition
                if skip is not None and len(skip):
                    mine &= ~np.isin(rows, skip, assume_unique=True)
                hashes.append(words[mine])
                positions.append(rows[mine])
        pairs, where = np.concatenate(hashes), np.concatenate(positions)
        later = np.ones(len(pairs), dtype=bool)
        if len(pairs):
            _, first = np.unique(pairs, axis=0, return_index=True)  # the earliest of each hash: positions ascend
            later[first] = False
        found.append(where[later])
    return np.sort(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)


def locate(files: list[KeysFile], position: int) -> str:
    """``file:line`` of the document at ``position`` of the corpus order."""
    for file in files:
        if position < file.start + file.rows:
            return f"{documents_file(file.directory, file.source)}:{position - file.start + 1}"
    raise AssertionError("position beyond the corpus")


def corpus_stats(names: list[str], shards: list[dict[str, Any]], files: list[KeysFile], dropped: list[np.ndarray]) -> dict[str, Any]:
    """stats.json; a corpus with an empty split is an error, not a statistic."""
    counts = {name: {key: sum(shard["counts"][name][key] for shard in shards) for key in SHARD_COUNTS if key != "kept"} for name in names}
    for source in counts.values():
        source.update(duplicates=0, heldout=0, train=0, words=0)
    characters = 0
    for file, rows in zip(files, dropped):
        source = counts[names[file.source]]
        kept = np.ones(file.rows, dtype=bool)
        kept[rows] = False
        for begin, chunk in file.chunks():
            keep = kept[begin : begin + len(chunk)]
            heldout = int(chunk["heldout"][keep].sum())
            source["heldout"] += heldout
            source["train"] += int(keep.sum()) - heldout
            source["words"] += int(chunk["words"][keep].sum())
            characters += int(chunk["characters"][keep].sum())
        source["duplicates"] += len(rows)
    totals = {
        "train_documents": sum(c["train"] for c in counts.values()),
        "heldout_documents": sum(c["heldout"] for c in counts.values()),
        "words": sum(c["words"] for c in counts.values()),
        "characters": characters,
    }
    for split in ("train", "heldout"):
        if not totals[f"{split}_documents"]:
            raise PipelineError(f"corpus: 0 {split} documents left after deduplication")
    contaminated = {task: sum(shard["contaminated_by_task"][task] for shard in shards) for task in shards[0]["contaminated_by_task"]}
    return {
        "sources": counts,
        "contaminated_by_task": contaminated,
        "decontamination_ngram": shards[0]["decontamination_ngram"],
        "totals": totals,
        "num_shards": len(shards),
    }
