"""gather-corpus's peak memory against the number of documents: bounded by its pass size.

    python bench/gather_memory.py --work /tmp/gather-bench                      # 4M, 16M and 32M documents
    python bench/gather_memory.py --work /tmp/gather-bench --documents 1000000  # a quick look

Writes, for each count, the shards gather-corpus reads (``--shards`` of them, one source each):
every document's fixed-size key record (:data:`pipeline.data.corpus_files.KEY`, 45 bytes: random
text and id hashes, one text in 200 repeating an earlier one), an empty documents file (gather
never reads text) and the shard's counts and provenance. Then runs ``gather-corpus`` through the
CLI under GNU time, at its default pass size and, beside it in the same run, with every document
in one pass (the memory the stage took before it worked by hash partition). Printed: a table
row per (count, pass size) for BENCHMARKS.md: passes, wall time, peak RSS, bytes per document.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pipeline.data.corpus_files import KEY, documents_file, keys_file  # noqa: E402
from pipeline.data.gather_corpus import MAX_DOCUMENTS_IN_MEMORY  # noqa: E402
from pipeline.provenance import write_provenance  # noqa: E402

DUPLICATE_EVERY = 200


def write_shards(root: Path, documents: int, num_shards: int, seed: int = 0) -> list[Path]:
    rng = np.random.default_rng(seed)
    shards = []
    for shard, rows in enumerate(np.array_split(np.arange(documents), num_shards)):
        directory = root / "shards" / str(shard)
        directory.mkdir(parents=True, exist_ok=True)
        keys = np.zeros(len(rows), dtype=KEY)
        keys["text"] = np.frombuffer(rng.bytes(16 * len(rows)), dtype="V16")
        keys["id"] = np.frombuffer(rng.bytes(16 * len(rows)), dtype="V16")
        repeated = np.flatnonzero(rows % DUPLICATE_EVERY == DUPLICATE_EVERY - 1)
        keys["text"][repeated] = keys["text"][repeated // 2]  # an earlier document of the same shard
        keys["words"], keys["characters"] = 500, 3000
        keys["heldout"] = rows % 1000 == 0
        keys.tofile(keys_file(directory, 0))
        documents_file(directory, 0).write_text("")
        kept = len(rows)
        counts = {"documents_read": kept, "too_short": 0, "contaminated": 0, "contaminated_lines": 0, "kept": kept}
        (directory / "counts.json").write_text(
            json.dumps(
                {
                    "sources": ["bench"],
                    "counts": {"bench": counts},
                    "contaminated_by_task": {},
                    "decontamination_ngram": 8,
                }
            )
        )
        write_provenance(directory, {"bench": True}, {}, outputs=[keys_file(directory, 0), documents_file(directory, 0)])
        shards.append(directory)
    return shards


def gather(shards: list[Path], out: Path, max_documents: int) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one gather-corpus run in its own process (``out`` holds
    the shards, as a corpus directory does; each run rewrites its index)."""
    usage = out / f"usage-{max_documents}.txt"
    argv = ["gather-corpus", "--shards", *map(str, shards), "--out", str(out), "--max-documents-in-memory", str(max_documents)]
    started = time.perf_counter()
    command = ["/usr/bin/time", "-f", "%M", "-o", str(usage), sys.executable, "-m", "pipeline", *argv]
    subprocess.run(command, check=True, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, int(usage.read_text().split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="scratch directory (created if absent)")
    parser.add_argument("--documents", type=int, nargs="+", default=[4_000_000, 16_000_000, 32_000_000])
    parser.add_argument("--shards", type=int, default=8)
    args = parser.parse_args()
    print("| documents | pass size | passes | wall | peak RSS | bytes per document |")
    print("|---|---|---|---|---|---|")
    for documents in args.documents:
        root = args.work / f"{documents}"
        shards = write_shards(root, documents, args.shards)
        for label, size in (("default", MAX_DOCUMENTS_IN_MEMORY), ("one pass", documents)):
            wall, rss = gather(shards, root, size)
            passes = -(-documents // size)
            print(
                f"| {documents:,} | {label} ({size:,}) | {passes} | {wall:,.1f} s | {rss:,.0f} MB | {rss * 2**20 / documents:,.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
