"""prepare_corpus on the paper's own corpus spec, read from a hub mirror: peak RSS at 1x and 10x file size.

    python bench/mirror_corpus_memory.py --work /tmp/mirror-bench                      # 50 MB and 500 MB of text
    python bench/mirror_corpus_memory.py --work /tmp/mirror-bench --shard-mb 20 200    # a quicker look

For each size, one Parquet file of FineWeb-Edu's schema (``bench/data_stage.py``'s writer: real
prose from the embedded default's sources, 1,000-row row groups) laid out as the hub lays out
FineWeb-Edu (``datasets/HuggingFaceFW/fineweb-edu/sample/100BT/000_00000.parquet``, a card whose
``configs`` give ``sample-100BT`` that folder) with the mirror's ``manifest.json``; then
``prepare-corpus`` as the workflow runs it on ``config/paper.yaml``'s corpus spec with
``hub_mirror`` set (one shard), under GNU time for its peak RSS. The job reads the files the card
gives the config through the record-batch Parquet reader and verifies them against the manifest
first. Printed: one line per size, then the table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.data_stage import fetch_sources, paragraphs, run_job, write_corpus, write_task  # noqa: E402
from pipeline import strict  # noqa: E402
from pipeline.workflow.configure import read_configs, resolve  # noqa: E402

CARD = """---
configs:
- config_name: sample-100BT
  data_files:
  - split: train
    path: sample/100BT/*
---
FineWeb-Edu, as the bench lays it out.
"""


def write_mirror(root: Path, parquet: Path) -> Path:
    """A mirror holding FineWeb-Edu's sample-100BT as one file, with its card and manifest."""
    repository = root / "mirror" / "datasets" / "HuggingFaceFW" / "fineweb-edu"
    (repository / "sample" / "100BT").mkdir(parents=True, exist_ok=True)
    staged = repository / "sample" / "100BT" / "000_00000.parquet"
    parquet.replace(staged)
    (repository / "README.md").write_text(CARD)
    files = {
        path.relative_to(repository).as_posix(): {"size": path.stat().st_size, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        for path in (staged, repository / "README.md")
    }
    manifest = {"repositories": {"datasets/HuggingFaceFW/fineweb-edu": {"files": files}}}
    (root / "mirror" / "manifest.json").write_text(json.dumps(manifest))
    return root / "mirror"


def paper_corpus_spec(mirror: Path) -> str:
    """config/paper.yaml's corpus section read through ``mirror`` (as hub_mirror sets it), one shard."""
    corpus = strict.to_plain(resolve(read_configs([str(REPO / "config" / "paper.yaml")]), "paper").config.corpus)
    corpus["documents"][0]["hub"]["mirror"] = str(mirror)
    corpus["num_shards"] = 1
    return json.dumps(corpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="scratch directory")
    parser.add_argument("--shard-mb", type=float, nargs=2, default=[50.0, 500.0], help="text in the 1x and the 10x file, MB")
    args = parser.parse_args()
    sources, documents = fetch_sources(args.work)
    pool, held_out = paragraphs(sources, documents)
    task = write_task(args.work / "task", held_out)
    rows = []
    for shard_mb in args.shard_mb:
        root = args.work / f"{shard_mb:g}mb"
        (parquet,) = write_corpus(root / "written", pool, shard_mb / 1e3, shard_mb, "parquet")
        mirror = write_mirror(root, parquet)
        staged = next(mirror.rglob("*.parquet"))
        argv = ["prepare-corpus", "--spec", paper_corpus_spec(mirror), "--sources", str(root), "--tasks", str(task), "--shard", "0"]
        job = run_job(f"prepare_corpus {shard_mb:g} MB", [*argv, "--out", str(root / "shard")], root / "job.log")
        rows.append((shard_mb, staged.stat().st_size / 1e6, job))
    print("\n| text in the file | Parquet file | wall | peak RSS |\n|---:|---:|---:|---:|")
    for shard_mb, file_mb, job in rows:
        print(f"| {shard_mb:g} MB | {file_mb:.0f} MB | {job.wall_s:.1f} s | {job.max_rss_mb:.0f} MB |")


if __name__ == "__main__":
    main()
