"""``python -m pipeline pack``: tokenize the corpus into flat token arrays read by memmap.

Each document becomes its tokens followed by ``</s>``; documents are concatenated in
corpus order (nanoGPT / OLMo style). The corpus is read and written a batch of documents
at a time (batched encoding through the Rust tokenizer), so memory does not grow with
it. ``meta.json`` records counts, dtype and the sha256 of each array: the fingerprint
that resumed training checks.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from transformers import AutoTokenizer

from pipeline.errors import PipelineError
from pipeline.files import atomic_path, iter_jsonl, write_json
from pipeline.provenance import write_provenance

log = logging.getLogger(__name__)
SPLITS = ("train", "heldout")
ENCODE_BATCH_DOCUMENTS = 512


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", required=True, help="directory with train.jsonl and heldout.jsonl")
    parser.add_argument("--tokenizer", required=True, help="tokenizer directory")
    parser.add_argument("--out", required=True, help="output directory for {split}.bin and meta.json")


def token_dtype(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16) if vocab_size <= np.iinfo(np.uint16).max + 1 else np.dtype(np.uint32)


def write_tokens(texts: Iterable[str], tokenizer, dtype: np.dtype, path: Path) -> tuple[int, int, str]:
    """Append ``tokens(doc) + [eos]`` of every document to ``path``, one batch of
    ``ENCODE_BATCH_DOCUMENTS`` at a time: memory holds one batch whatever the corpus size.
    Returns (documents, tokens, sha256 of the file)."""
    backend, eos = tokenizer.backend_tokenizer, tokenizer.eos_token_id
    digest, num_documents, num_tokens = hashlib.sha256(), 0, 0
    texts = iter(texts)
    with open(path, "wb") as handle:
        while batch := list(itertools.islice(texts, ENCODE_BATCH_DOCUMENTS)):
            encodings = backend.encode_batch(batch, add_special_tokens=False)
            # (sum of len(ids) + 1,): the batch's documents back to back, each closed by </s>
            tokens = np.concatenate([np.asarray([*encoding.ids, eos], dtype=dtype) for encoding in encodings]).tobytes()
            handle.write(tokens)
            digest.update(tokens)
            num_documents, num_tokens = num_documents + len(batch), num_tokens + len(tokens) // dtype.itemsize
    return num_documents, num_tokens, digest.hexdigest()


def run(args: argparse.Namespace) -> None:
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    dtype = token_dtype(len(tokenizer))
    meta = {"dtype": dtype.name, "vocab_size": len(tokenizer), "splits": {}}
    with atomic_path(args.out) as out:
        out.mkdir()
        for split in SPLITS:
            source = Path(args.corpus) / f"{split}.jsonl"
            num_documents, num_tokens, sha256 = write_tokens((row["text"] for row in iter_jsonl(source)), tokenizer, dtype, out / f"{split}.bin")
            if num_tokens == 0:
                raise PipelineError(f"{source}: no tokens after encoding")
            meta["splits"][split] = {"num_documents": num_documents, "num_tokens": num_tokens, "sha256": sha256}
            log.info("%s: %d documents -> %d tokens", split, num_documents, num_tokens)
        write_json(out / "meta.json", meta)
        write_provenance(out, {}, {"corpus": args.corpus, "tokenizer": args.tokenizer})
