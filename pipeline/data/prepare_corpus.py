"""``python -m pipeline prepare-corpus``: the pretraining corpus, clean and decontaminated.

Each configured source is read in order and cleaned like task text; stubs shorter than
``min_characters`` and exact duplicates (across sources) are dropped; so is every
document containing any text of a downstream task's validation or test rows (see
:mod:`pipeline.data.decontaminate`), so that no objective is scored on text it was
pretrained on. A hash of each document's id sends ``heldout_fraction`` of documents to
the held-out file: the split of a document never changes when others come or go.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pipeline import strict
from pipeline.config import CorpusSpec, DataSourceSpec
from pipeline.data.decontaminate import ContaminationIndex
from pipeline.data.sources import HUB_READER, describe_source, read_source
from pipeline.data.splits import uniform
from pipeline.data.text import clean_text, count_words, dedup_key
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, read_jsonl, write_json, write_jsonl
from pipeline.provenance import write_provenance

logger = logging.getLogger(__name__)
EVALUATION_SPLITS = ("validation", "test")
# The text fields of every task type's rows (token_classification's "tokens" aside).
TEXT_FIELDS = ("text", "text_pair", "question", "context", "query", "document")
SOURCE_COUNTS = (
    "documents_read", "too_short", "duplicates", "contaminated", "contaminated_lines", "train", "heldout", "words",
)  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the CorpusSpec")
    parser.add_argument("--sources", required=True, type=Path, help="results/sources")
    parser.add_argument(
        "--tasks", nargs="*", default=[], type=Path, help="prepared task directories to decontaminate against"
    )
    parser.add_argument("--out", required=True, type=Path, help="results/data/corpus")


def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    spec: CorpusSpec = strict.parse_json(CorpusSpec, args.spec, "corpus")
    index, inputs = build_index(args.tasks, spec.decontamination_ngram)
    logger.info("%s evaluation %d-grams from %d tasks", f"{index.num_ngrams:,}", index.n, len(index.tasks))
    corpus = Corpus(spec, index)
    source_records: dict[str, Any] = {}
    for number, source in enumerate(spec.documents):
        name, where = source_name(source), f"corpus.documents[{number}]"
        if name in source_records:
            raise PipelineError(f"{where}: source {name!r} is listed twice")
        rows = read_source(source, args.sources, where)
        source_records[name], source_inputs = describe_source(source, args.sources)
        inputs.update(source_inputs)
        corpus.add(name, rows, where, source.decontaminate_by)
    stats = corpus.stats()
    with atomic_path(args.out) as temporary:
        temporary.mkdir()
        for split, rows in corpus.documents.items():
            write_jsonl(temporary / f"{split}.jsonl", rows)
        write_json(temporary / "stats.json", stats)
        write_provenance(temporary, strict.to_plain(spec), inputs, sources=source_records)
    totals = stats["totals"]
    logger.info(
        "corpus: %d train + %d held-out documents, %s words, in %.1f s",
        totals["train_documents"],
        totals["heldout_documents"],
        f"{totals['words']:,}",
        time.perf_counter() - started,
    )


class Corpus:
    """The documents kept so far, split, with per-source counts of what was dropped and why."""

    def __init__(self, spec: CorpusSpec, index: ContaminationIndex) -> None:
        self.spec = spec
        self.index = index
        self.documents: dict[str, list[dict[str, str]]] = {"train": [], "heldout": []}
        self.counts: dict[str, dict[str, int]] = {}
        self.contaminated_by_task = dict.fromkeys(index.tasks, 0)
        self._seen_texts: set[bytes] = set()  # digests of dedup keys: memory stays flat at scale
        self._seen_ids: set[str] = set()

    def add(self, source: str, rows: Iterable[dict[str, str]], where: str, decontaminate_by: str) -> None:
        counts = self.counts[source] = dict.fromkeys(SOURCE_COUNTS, 0)
        for row in rows:
            counts["documents_read"] += 1
            text = clean_text(row["text"])
            if len(text) < self.spec.min_characters:
                counts["too_short"] += 1
                continue
            digest = hashlib.blake2b(dedup_key(text).encode(), digest_size=16).digest()
            if digest in self._seen_texts:
                counts["duplicates"] += 1
                continue
            self._seen_texts.add(digest)
            if decontaminate_by == "line":
                text = self._remove_contaminated_lines(text, counts)
            elif self._contaminating_tasks(text):
                text = ""
            if len(text) < self.spec.min_characters:
                counts["contaminated"] += 1
                continue
            document_id = f"{source}/{row['id']}"
            if document_id in self._seen_ids:
                raise PipelineError(f"{where}: document id {document_id!r} occurs twice")
            self._seen_ids.add(document_id)
            split = "heldout" if is_heldout(document_id, self.spec.heldout_fraction, self.spec.split_seed) else "train"
            self.documents[split].append({"id": document_id, "source": source, "text": text})
            counts[split] += 1
            counts["words"] += count_words(text)
        logger.info("%s: %s", source, ", ".join(f"{key} {value:,}" for key, value in counts.items()))

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

    def stats(self) -> dict[str, Any]:
        """stats.json; a corpus with an empty split is an error, not a statistic."""
        for split, rows in self.documents.items():
            if not rows:
                raise PipelineError(f"corpus: 0 {split} documents left (heldout_fraction {self.spec.heldout_fraction})")
        return {
            "sources": self.counts,
            "contaminated_by_task": self.contaminated_by_task,
            "decontamination_ngram": self.spec.decontamination_ngram,
            "totals": {
                "train_documents": len(self.documents["train"]),
                "heldout_documents": len(self.documents["heldout"]),
                "words": sum(counts["words"] for counts in self.counts.values()),
                "characters": sum(len(d["text"]) for rows in self.documents.values() for d in rows),
            },
        }


def build_index(task_dirs: list[Path], n: int) -> tuple[ContaminationIndex, dict[str, Path]]:
    """The n-gram index of every text of every task's validation and test rows (a task is
    named by its directory), and those files by role."""
    index = ContaminationIndex(n)
    inputs: dict[str, Path] = {}
    for task_dir in map(Path, task_dirs):
        if task_dir.name in index.tasks:
            raise PipelineError(f"--tasks: two task directories are named {task_dir.name!r}")
        texts = []
        for split in EVALUATION_SPLITS:
            path = task_dir / f"{split}.jsonl"
            for number, row in enumerate(read_jsonl(path), 1):
                row_texts = evaluation_texts(row)
                if not row_texts:
                    raise PipelineError(f"{path}:{number}: row has none of the text fields {', '.join(TEXT_FIELDS)}")
                texts += row_texts
            inputs[f"task:{task_dir.name}/{split}"] = path
        index.add_task(task_dir.name, texts)
    return index, inputs


def evaluation_texts(row: dict[str, Any]) -> list[str]:
    """Every text of a prepared task row, whatever its type: a pair's two texts, a
    tagged sentence's tokens (joined by spaces: the same words), a question and its
    passage, a query and its document, a haystack with its needle."""
    texts = [row[name] for name in TEXT_FIELDS if isinstance(row.get(name), str)]
    if isinstance(row.get("tokens"), list):
        texts.append(" ".join(map(str, row["tokens"])))
    return texts


def source_name(source: DataSourceSpec) -> str:
    """The reader's name; for the hub, which dataset (two hub sources must not clash)."""
    if source.reader == HUB_READER and source.hub is not None:
        return f"hf:{source.hub.path}" + (f"/{source.hub.name}" if source.hub.name else "")
    return source.reader


def is_heldout(document_id: str, fraction: float, seed: int) -> bool:
    """Whether a document is held out: a seeded hash of its id, uniform on [0, 1), < fraction."""
    return uniform(seed, document_id) < fraction
