"""``python -m pipeline gather-corpus``: the shards of the corpus as one corpus.

Reads only the shards' fixed-size keys and counts (:mod:`.corpus_files`), never their text:
its memory grows with the number of documents (45 bytes each), not with their length.
Orders every kept document as one shard would have (source by source, shard by shard), keeps
the first of each set of exact duplicates (same text, case and spacing aside), refuses a
document id that occurs twice, and writes ``index.json`` (the files in that order, each with
the rows to skip) and ``stats.json`` (what was read, dropped and kept, per source).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.data.corpus_files import INDEX, documents_file, keys_file, read_keys
from pipeline.data.prepare_corpus import SHARD_COUNTS
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, read_json, write_json
from pipeline.integrity import verify_recorded
from pipeline.provenance import write_provenance

logger = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shards", required=True, nargs="+", type=Path, help="results/data/corpus/shards/<i>, in shard order")
    parser.add_argument("--out", required=True, type=Path, help="results/data/corpus: index.json and stats.json are written there")


def run(args: argparse.Namespace) -> None:
    shards = [read_json(shard / "counts.json") for shard in args.shards]
    names = shards[0]["sources"]
    if any(shard["sources"] != names for shard in shards):
        raise PipelineError(f"{args.shards[0]}: the shards were prepared from different source lists; rerun prepare_corpus")
    # Corpus order: source by source, shard by shard within a source (pipeline/data/shards.py).
    files = [(number, shard, directory) for number in range(len(names)) for shard, directory in enumerate(args.shards)]
    for number, _, directory in files:
        verify_recorded(keys_file(directory, number))
    keys = [read_keys(keys_file(directory, number)) for number, _, directory in files]
    everything = np.concatenate(keys)
    duplicate = repeats(everything["text"])
    repeated_ids = repeats(everything["id"][~duplicate])
    if repeated_ids.any():
        raise PipelineError(f"{locate(files, keys, np.flatnonzero(~duplicate)[repeated_ids][0])}: document id occurs twice in the corpus")
    duplicate_by_file = np.split(duplicate, np.cumsum([len(records) for records in keys])[:-1])  # one mask per file of `files`
    stats = corpus_stats(names, shards, files, keys, duplicate_by_file)
    entries = [
        {
            "source": number,
            "shard": shard,
            "path": str(documents_file(directory, number).relative_to(args.out)),
            "rows": len(records),
            "duplicates": np.flatnonzero(dropped).tolist(),
        }
        for (number, shard, directory), records, dropped in zip(files, keys, duplicate_by_file)
    ]
    with atomic_path(args.out / INDEX) as index:
        write_json(index, {"num_shards": len(args.shards), "sources": names, "files": entries})
    write_json(args.out / "stats.json", stats)
    write_provenance(args.out, {"num_shards": len(args.shards)}, {f"shard:{i}": d for i, d in enumerate(args.shards)})
    totals = stats["totals"]
    logger.info(
        "corpus: %d train + %d held-out documents, %s words, %d duplicates dropped",
        totals["train_documents"],
        totals["heldout_documents"],
        f"{totals['words']:,}",
        int(duplicate.sum()),
    )


def repeats(hashes: np.ndarray) -> np.ndarray:
    """True where a 16-byte hash already occurred earlier in the array (the first stays False)."""
    pairs = np.ascontiguousarray(hashes).view(np.uint64).reshape(-1, 2)  # (documents, 2): each hash as two 64-bit words
    later = np.ones(len(pairs), dtype=bool)
    if len(pairs):
        _, first = np.unique(pairs, axis=0, return_index=True)
        later[first] = False
    return later


def locate(files: list[tuple[int, int, Path]], keys: list[np.ndarray], position: int) -> str:
    """``file:line`` of the document at ``position`` of the corpus order."""
    for (number, _, directory), records in zip(files, keys):
        if position < len(records):
            return f"{documents_file(directory, number)}:{position + 1}"
        position -= len(records)
    raise AssertionError("position beyond the corpus")


def corpus_stats(
    names: list[str],
    shards: list[dict[str, Any]],
    files: list[tuple[int, int, Path]],
    keys: list[np.ndarray],
    duplicate_by_file: list[np.ndarray],
) -> dict[str, Any]:
    """stats.json; a corpus with an empty split is an error, not a statistic."""
    counts = {name: {key: sum(shard["counts"][name][key] for shard in shards) for key in SHARD_COUNTS if key != "kept"} for name in names}
    characters = 0
    for (number, _, _), records, duplicate in zip(files, keys, duplicate_by_file):
        kept = records[~duplicate]
        source = counts[names[number]]
        source["duplicates"] = source.get("duplicates", 0) + int(len(records) - len(kept))
        source["heldout"] = source.get("heldout", 0) + int(kept["heldout"].sum())
        source["train"] = source.get("train", 0) + int(len(kept) - kept["heldout"].sum())
        source["words"] = source.get("words", 0) + int(kept["words"].sum())
        characters += int(kept["characters"].sum())
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
        "sources": counts, "contaminated_by_task": contaminated, "decontamination_ngram": shards[0]["decontamination_ngram"],
        "totals": totals, "num_shards": len(shards),
    }  # fmt: skip
