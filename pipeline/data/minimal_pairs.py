"""``python -m pipeline prepare-minimal-pairs``: the zero-shot family's pairs from held-out text.

Every sentence of the held-out corpus documents (never pretrained on) of ``min_words``
to ``max_words`` words is a candidate; each kind of :mod:`pipeline.data.corruptions`
that can edit it makes one pair, the acceptable sentence against the corrupted one,
until the kind has ``max_pairs_per_kind``. Which of several possible edits a pair gets
is drawn from an RNG seeded by the config seed and the pair's id, so the pairs do not
change when another kind is added or a cap is raised.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from pipeline import strict
from pipeline.config import MinimalPairsSpec
from pipeline.data.corpus_files import read_corpus
from pipeline.data.corruptions import CORRUPTIONS, apply_edit
from pipeline.data.sentences import split_sentences
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, write_json, write_jsonl
from pipeline.provenance import write_provenance

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the minimal_pairs section")
    parser.add_argument("--seed", type=int, required=True, help="the config's seed: picks an edit where a kind has several")
    parser.add_argument("--corpus", required=True, help="the prepared corpus (results/data/corpus), whose held-out documents it reads")
    parser.add_argument("--out", required=True, help="output directory for pairs.jsonl and stats.json")


def candidate_sentences(documents: list[dict], spec: MinimalPairsSpec) -> Iterator[tuple[str, list[str]]]:
    """(sentence id, its words) of every held-out sentence of the right length, in corpus order."""
    for document in documents:
        lines = document["text"].splitlines()
        sentences = (sentence for line in lines for sentence in split_sentences(line))
        for index, sentence in enumerate(sentences):
            words = sentence.split()
            if spec.min_words <= len(words) <= spec.max_words and words[0][:1].isupper():
                yield f"{document['id']}:{index}", words


def edit_rng(seed: int, pair_id: str) -> np.random.Generator:
    return np.random.default_rng([seed, int.from_bytes(hashlib.sha256(pair_id.encode()).digest()[:8], "little")])


def build_pairs(documents: list[dict], spec: MinimalPairsSpec, seed: int) -> list[dict]:
    """Rows {id, kind, good, bad}: at most ``max_pairs_per_kind`` of each kind."""
    pairs, counts = [], Counter()
    for sentence_id, words in candidate_sentences(documents, spec):
        for kind in spec.kinds:
            if counts[kind] >= spec.max_pairs_per_kind:
                continue
            edits = CORRUPTIONS[kind](words)
            if not edits:
                continue
            pair_id = f"{sentence_id}:{kind}"
            edit = edits[int(edit_rng(seed, pair_id).integers(len(edits)))]
            pairs.append({"id": pair_id, "kind": kind, "good": " ".join(words), "bad": " ".join(apply_edit(words, edit))})
            counts[kind] += 1
    return pairs


def run(args: argparse.Namespace) -> None:
    spec = strict.parse_json(MinimalPairsSpec, args.spec, "minimal_pairs")
    pairs = build_pairs(list(read_corpus(args.corpus, "heldout")), spec, args.seed)
    counts = Counter(pair["kind"] for pair in pairs)
    missing = [kind for kind in spec.kinds if counts[kind] == 0]
    if missing:
        raise PipelineError(f"{args.corpus}: no held-out sentence allows minimal_pairs.kinds {missing}")
    with atomic_path(args.out) as out:
        out.mkdir()
        write_jsonl(out / "pairs.jsonl", pairs)
        write_json(out / "stats.json", {"pairs": len(pairs), "by_kind": {kind: counts[kind] for kind in spec.kinds}})
        spec_record = {"minimal_pairs": strict.to_plain(spec), "seed": args.seed}
        write_provenance(out, spec_record, {"corpus_index": Path(args.corpus) / "index.json"}, outputs=[out / "pairs.jsonl"])
    log.info("%d minimal pairs: %s", len(pairs), ", ".join(f"{kind} {counts[kind]}" for kind in spec.kinds))
