"""``python -m pipeline pack``: tokenize the corpus into flat token arrays read by memmap.

Each document becomes its tokens followed by ``</s>``; documents are concatenated in
corpus order (nanoGPT / OLMo style). Batched encoding through the Rust tokenizer keeps
it to seconds. ``meta.json`` records counts, dtype and the sha256 of each array: the
fingerprint that resumed training checks.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np
from transformers import AutoTokenizer

from pipeline.errors import PipelineError
from pipeline.files import atomic_path, read_jsonl, sha256_file, write_json
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


def encode_documents(texts: list[str], tokenizer, dtype: np.dtype) -> np.ndarray:
    """Concatenate ``tokens(doc) + [eos]`` for every document, as one flat array."""
    backend = tokenizer.backend_tokenizer
    pieces = []
    for start in range(0, len(texts), ENCODE_BATCH_DOCUMENTS):
        for encoding in backend.encode_batch(texts[start : start + ENCODE_BATCH_DOCUMENTS], add_special_tokens=False):
            pieces.append(np.asarray(encoding.ids + [tokenizer.eos_token_id], dtype=dtype))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)


def run(args: argparse.Namespace) -> None:
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    dtype = token_dtype(len(tokenizer))
    meta = {"dtype": dtype.name, "vocab_size": len(tokenizer), "splits": {}}
    with atomic_path(args.out) as out:
        out.mkdir()
        for split in SPLITS:
            texts = [row["text"] for row in read_jsonl(Path(args.corpus) / f"{split}.jsonl")]
            tokens = encode_documents(texts, tokenizer, dtype)
            if tokens.size == 0:
                raise PipelineError(f"{Path(args.corpus) / f'{split}.jsonl'}: no tokens after encoding")
            tokens.tofile(out / f"{split}.bin")
            meta["splits"][split] = {
                "num_documents": len(texts),
                "num_tokens": int(tokens.size),
                "sha256": sha256_file(out / f"{split}.bin"),
            }
            log.info("%s: %d documents -> %d tokens", split, len(texts), tokens.size)
        write_json(out / "meta.json", meta)
        write_provenance(out, {}, {"corpus": args.corpus, "tokenizer": args.tokenizer})
