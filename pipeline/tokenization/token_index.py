"""``python -m pipeline index-tokens``: the token arrays of every shard as one stream per split.

``results/tokens/meta.json`` lists, per split, the shards' arrays in corpus order (source by
source, shard by shard within a source: the order one shard would have written them in), with
their counts and sha256, and a fingerprint of that list, which resumed training checks.
:class:`pipeline.pretrain.token_blocks.TokenBlocks` reads the list as one flat array.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
from pathlib import Path

from pipeline.data.corpus_files import SPLITS
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, read_json, write_json
from pipeline.provenance import write_provenance

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shards", required=True, nargs="+", type=Path, help="results/tokens/shards/<i>, in shard order")
    parser.add_argument("--out", required=True, type=Path, help="results/tokens: meta.json is written there")


def fingerprint(segments: list[dict]) -> str:
    """sha256 of the (file, tokens, sha256) list: it changes when any array or the order does."""
    return hashlib.sha256("".join(f"{s['file']}\0{s['num_tokens']}\0{s['sha256']}\n" for s in segments).encode()).hexdigest()


def run(args: argparse.Namespace) -> None:
    metas = [read_json(shard / "meta.json") for shard in args.shards]
    for shard, meta in zip(args.shards, metas):
        if (meta["dtype"], meta["vocab_size"]) != (metas[0]["dtype"], metas[0]["vocab_size"]):
            raise PipelineError(f"{shard / 'meta.json'}: tokenized with another tokenizer than {args.shards[0]}; rerun pack")
    sources = sorted({segment["source"] for meta in metas for segment in meta["segments"]})
    splits = {}
    for split in SPLITS:
        segments = [
            {**segment, "file": str((shard / segment["file"]).relative_to(args.out))}
            for source in sources
            for shard, meta in zip(args.shards, metas)
            for segment in meta["segments"]
            if segment["split"] == split and segment["source"] == source and segment["num_tokens"]
        ]
        num_tokens = sum(s["num_tokens"] for s in segments)
        if not num_tokens:
            raise PipelineError(f"{args.out}: no {split} tokens in any shard")
        splits[split] = {
            "num_documents": sum(s["num_documents"] for s in segments),
            "num_tokens": num_tokens,
            "fingerprint": fingerprint(segments),
            "segments": segments,
        }
        log.info("%s: %d tokens in %d arrays", split, num_tokens, len(segments))
    with atomic_path(args.out / "meta.json") as meta_path:
        write_json(meta_path, {"dtype": metas[0]["dtype"], "vocab_size": metas[0]["vocab_size"], "splits": splits})
    write_provenance(args.out, {"num_shards": len(args.shards)}, {f"shard:{i}": shard / "meta.json" for i, shard in enumerate(args.shards)})
