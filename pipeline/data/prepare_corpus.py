"""``python -m pipeline prepare-corpus``: one shard of the pretraining corpus, clean and decontaminated.

Shard ``i`` of ``corpus.num_shards`` reads its contiguous slice of every configured source
(:mod:`pipeline.data.shards`), in order, and cleans it like task text; stubs shorter than
``min_characters`` are dropped, and so is every document containing any text of a
downstream task's validation or test rows (see :mod:`pipeline.data.decontaminate`), so that
no objective is scored on text it was pretrained on. A hash of each document's id sends
``heldout_fraction`` of documents to the held-out split: the split of a document never
changes when others come or go. Exact duplicates (across sources and shards) are left to
``gather-corpus``, which needs every shard's text hashes and nothing else. The job writes
as it reads: its memory does not grow with its shard (:mod:`pipeline.data.corpus_files`).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import strict
from pipeline.config import CorpusSpec, DataSourceSpec
from pipeline.data.corpus_files import KEY, documents_file, keys_file
from pipeline.data.decontaminate import ContaminationIndex
from pipeline.data.shards import shard_rows
from pipeline.data.sources import HUB_READER, describe_source
from pipeline.data.splits import uniform
from pipeline.data.task_rows import TASK_TYPES
from pipeline.data.text import clean_text, count_words, dedup_key
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, iter_jsonl, json_line, write_json
from pipeline.provenance import write_provenance

logger = logging.getLogger(__name__)
# What decontamination keeps out of pretraining: every text a model is evaluated on.
EVALUATION_FILES = ("validation", "test", "documents")
SHARD_COUNTS = ("documents_read", "too_short", "contaminated", "contaminated_lines", "kept")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the CorpusSpec")
    parser.add_argument("--sources", required=True, type=Path, help="results/sources")
    parser.add_argument("--tasks", nargs="*", default=[], type=Path, help="prepared task directories to decontaminate against")
    parser.add_argument("--shard", required=True, type=int, help="which of corpus.num_shards this job prepares")
    parser.add_argument("--out", required=True, type=Path, help="results/data/corpus/shards/<shard>")


def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    spec: CorpusSpec = strict.parse_json(CorpusSpec, args.spec, "corpus")
    if not 0 <= args.shard < spec.num_shards:
        raise PipelineError(f"--shard {args.shard}: corpus.num_shards is {spec.num_shards}")
    index, inputs = build_index(args.tasks, spec.decontamination_ngram)
    logger.info("%s evaluation %d-grams from %d tasks", f"{index.num_ngrams:,}", index.n, len(index.tasks))
    names = [source_name(source) for source in spec.documents]
    for number, name in enumerate(names):
        if name in names[:number]:
            raise PipelineError(f"corpus.documents[{number}]: source {name!r} is listed twice")
    with atomic_path(args.out) as out:
        out.mkdir()
        shard = CorpusShard(spec, index)
        source_records: dict[str, Any] = {}
        for number, (source, name) in enumerate(zip(spec.documents, names)):
            where = f"corpus.documents[{number}]"
            rows = shard_rows(source, args.sources, where, spec.num_shards, args.shard)
            source_records[name], source_inputs = describe_source(source, args.sources, (spec.num_shards, args.shard))
            inputs.update(source_inputs)
            shard.write_source(out, number, name, rows, source.decontaminate_by)
        if not any(counts["documents_read"] for counts in shard.counts.values()):
            raise PipelineError(
                f"corpus shard {args.shard} of {spec.num_shards}: no rows in any source; corpus.num_shards is larger than the sources allow"
            )
        shard.write_counts(out)
        outputs = sorted(out.glob("source-*.jsonl")) + sorted(out.glob("source-*.keys"))  # what gather_corpus and pack verify
        write_provenance(out, strict.to_plain(spec), inputs, outputs=outputs, shard=args.shard, sources=source_records)
    kept = sum(counts["kept"] for counts in shard.counts.values())
    logger.info(
        "shard %d of %d: %d documents kept before deduplication, in %.1f s",
        args.shard,
        spec.num_shards,
        kept,
        time.perf_counter() - started,
    )


class CorpusShard:
    """One shard's documents, written as they pass, with per-source counts of what was dropped and why."""

    def __init__(self, spec: CorpusSpec, index: ContaminationIndex) -> None:
        self.spec = spec
        self.index = index
        self.counts: dict[str, dict[str, int]] = {}
        self.contaminated_by_task = dict.fromkeys(index.tasks, 0)

    def write_source(self, out: Path, number: int, source: str, rows: Iterable[dict[str, str]], decontaminate_by: str) -> None:
        """Append the source's kept documents to source-<number>.jsonl and their keys to .keys."""
        counts = self.counts[source] = dict.fromkeys(SHARD_COUNTS, 0)
        with open(documents_file(out, number), "w", encoding="utf-8") as documents, open(keys_file(out, number), "wb") as keys:
            for row in rows:
                counts["documents_read"] += 1
                text = clean_text(row["text"])
                if len(text) < self.spec.min_characters:
                    counts["too_short"] += 1
                    continue
                text_hash = hash_of(dedup_key(text))  # before line removal: what "the same document" means
                if decontaminate_by == "line":
                    text = self._remove_contaminated_lines(text, counts)
                elif self._contaminating_tasks(text):
                    text = ""
                if len(text) < self.spec.min_characters:
                    counts["contaminated"] += 1
                    continue
                document_id = f"{source}/{row['id']}"
                heldout = is_heldout(document_id, self.spec.heldout_fraction, self.spec.split_seed)
                documents.write(json_line({"id": document_id, "source": source, "text": text, "split": "heldout" if heldout else "train"}))
                record = np.array([(text_hash, hash_of(document_id), count_words(text), len(text), heldout)], dtype=KEY)
                keys.write(record.tobytes())
                counts["kept"] += 1
        logger.info("%s: %s", source, ", ".join(f"{key} {value:,}" for key, value in counts.items()))

    def write_counts(self, out: Path) -> None:
        """counts.json: the sources in order, what each lost to which filter, what decontamination removed."""
        write_json(
            out / "counts.json",
            {
                "sources": list(self.counts),
                "counts": self.counts,
                "contaminated_by_task": self.contaminated_by_task,
                "decontamination_ngram": self.spec.decontamination_ngram,
            },
        )

    def _contaminating_tasks(self, text: str) -> list[str]:
        tasks = self.index.tasks_in(text)
        for task in tasks:
            self.contaminated_by_task[task] += 1
        return tasks

    def _remove_contaminated_lines(self, text: str, counts: dict[str, int]) -> str:
        """Drop each line holding evaluation text; what is left may still be a document."""
        kept = []
        for line in text.split("\n"):
            if self._contaminating_tasks(line):
                counts["contaminated_lines"] += 1
            else:
                kept.append(line)
        return "\n".join(kept).strip()


def hash_of(text: str) -> bytes:
    """16 bytes of BLAKE2b: what two documents share when they are the same (memory stays flat at scale)."""
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def build_index(task_dirs: list[Path], n: int) -> tuple[ContaminationIndex, dict[str, Path]]:
    """The n-gram index of every text of every task's validation and test rows (a task is
    named by its directory), and those files by role."""
    index = ContaminationIndex(n)
    inputs: dict[str, Path] = {}
    for task_dir in map(Path, task_dirs):
        if task_dir.name in index.tasks:
            raise PipelineError(f"--tasks: two task directories are named {task_dir.name!r}")
        texts = []
        for split in EVALUATION_FILES:
            path = task_dir / f"{split}.jsonl"
            for number, row in enumerate(iter_jsonl(path, allow_empty=split == "documents"), 1):
                row_texts = evaluation_texts(row)
                if not row_texts:
                    raise PipelineError(f"{path}:{number}: row has none of the text fields {', '.join(text_fields())}")
                texts += row_texts
            inputs[f"task:{task_dir.name}/{split}"] = path
        index.add_task(task_dir.name, texts)
    return index, inputs


def text_fields() -> list[str]:
    """Every field that holds text in a written row of any task type (each type declares its
    own), in the types' order."""
    return list(dict.fromkeys(field for task_type in TASK_TYPES.values() for field in task_type.text_fields))


def evaluation_texts(row: dict[str, Any]) -> list[str]:
    """Every text of a prepared task row, whatever its type: a pair's two texts, a
    tagged sentence's tokens (joined by spaces: the same words), a question and its
    passage, a query and its document, a haystack with its needle."""
    texts = []
    for name in text_fields():
        value = row.get(name)
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list) and all(isinstance(word, str) for word in value):
            texts.append(" ".join(value))
    return texts


def source_name(source: DataSourceSpec) -> str:
    """The reader's name; for the hub, which dataset (two hub sources must not clash)."""
    if source.reader == HUB_READER and source.hub is not None:
        return f"hf:{source.hub.dataset_name}"
    return source.reader


def is_heldout(document_id: str, fraction: float, seed: int) -> bool:
    """Whether a document is held out: a seeded hash of its id, uniform on [0, 1), < fraction."""
    return uniform(seed, document_id) < fraction
