"""``python -m pipeline pack``: tokenize one shard of the corpus into flat token arrays.

Each document becomes its tokens followed by ``</s>``; documents are concatenated in
corpus order (nanoGPT / OLMo style), one array per (split, source) of the shard
(``{split}-source-<k>.bin``), so that ``index-tokens`` can lay the shards' arrays out in
corpus order, source by source (:mod:`pipeline.data.corpus_files`). The shard is read and
written a batch of documents at a time (batched encoding through the Rust tokenizer), so
memory does not grow with it. ``meta.json`` records each array's counts and sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from pipeline.data.corpus_files import SPLITS, corpus_index, read_entry, shard_dir
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, read_json, write_json
from pipeline.integrity import verify_recorded
from pipeline.provenance import write_provenance

log = logging.getLogger(__name__)
ENCODE_BATCH_DOCUMENTS = 512


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", required=True, help="results/data/corpus (its index.json and shards)")
    parser.add_argument("--shard", required=True, type=int, help="which shard of the corpus to tokenize")
    parser.add_argument("--tokenizer", required=True, help="tokenizer directory")
    parser.add_argument("--out", required=True, help="output directory for the shard's arrays and meta.json")


def token_dtype(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16) if vocab_size <= np.iinfo(np.uint16).max + 1 else np.dtype(np.uint32)


def segment_name(split: str, source: int) -> str:
    return f"{split}-source-{source}.bin"


def write_tokens(texts: Iterable[str], backend: Tokenizer, eos: int, dtype: np.dtype, path: Path) -> tuple[int, int, str]:
    """Append ``tokens(doc) + [eos]`` of every document to ``path``, one batch of
    ``ENCODE_BATCH_DOCUMENTS`` at a time: memory holds one batch whatever the corpus size.
    Returns (documents, tokens, sha256 of the file)."""
    digest, num_documents, num_tokens = hashlib.sha256(), 0, 0
    texts = iter(texts)
    with open(path, "wb") as handle:
        while batch := list(itertools.islice(texts, ENCODE_BATCH_DOCUMENTS)):
            ids: list[int] = []
            for encoding in backend.encode_batch(batch, add_special_tokens=False):
                ids += encoding.ids
                ids.append(eos)
            # (sum of len(ids) + 1,): the batch's documents back to back, each closed by </s>
            tokens = np.array(ids, dtype=dtype).tobytes()
            handle.write(tokens)
            digest.update(tokens)
            num_documents, num_tokens = num_documents + len(batch), num_tokens + len(ids)
    return num_documents, num_tokens, digest.hexdigest()


def load_for_packing(tokenizer_dir: str | Path) -> tuple[Tokenizer, int]:
    """The saved tokenizer's Rust core and its end-of-document id (``eos_token`` of
    ``tokenizer_config.json``: ours ``</s>``, Llama-3's ``<|end_of_text|>``), read without
    importing transformers, whose import costs a shard job seconds of CPU."""
    directory = Path(tokenizer_dir)
    backend = Tokenizer.from_file(str(directory / "tokenizer.json"))
    eos = read_json(directory / "tokenizer_config.json")["eos_token"]
    eos = eos["content"] if isinstance(eos, dict) else eos  # some versions save an AddedToken's fields
    eos_id = backend.token_to_id(eos)
    if eos_id is None:
        raise PipelineError(f"{directory / 'tokenizer_config.json'}: eos_token {eos!r} is not in the vocabulary")
    return backend, eos_id


def run(args: argparse.Namespace) -> None:
    backend, eos = load_for_packing(args.tokenizer)
    vocab_size = backend.get_vocab_size(with_added_tokens=True)
    dtype = token_dtype(vocab_size)
    entries = [entry for entry in corpus_index(args.corpus)["files"] if entry["shard"] == args.shard]
    if not entries:
        raise PipelineError(f"--shard {args.shard}: {args.corpus}/index.json lists no files of that shard")
    for entry in entries:
        verify_recorded(Path(args.corpus) / entry["path"])
    meta = {"dtype": dtype.name, "vocab_size": vocab_size, "shard": args.shard, "segments": []}
    with atomic_path(args.out) as out:
        out.mkdir()
        for split in SPLITS:
            for entry in entries:
                name = segment_name(split, entry["source"])
                texts = (row["text"] for row in read_entry(args.corpus, entry, split))
                num_documents, num_tokens, sha256 = write_tokens(texts, backend, eos, dtype, out / name)
                meta["segments"].append(
                    {
                        "split": split,
                        "source": entry["source"],
                        "file": name,
                        "num_documents": num_documents,
                        "num_tokens": num_tokens,
                        "sha256": sha256,
                    }
                )
                log.info(
                    "shard %d, %s, source %d: %d documents -> %d tokens", args.shard, split, entry["source"], num_documents, num_tokens
                )
        write_json(out / "meta.json", meta)
        inputs = {
            "corpus_index": Path(args.corpus) / "index.json",
            "corpus_shard": shard_dir(args.corpus, args.shard),
            "tokenizer": args.tokenizer,
        }
        write_provenance(out, {"shard": args.shard}, inputs)
