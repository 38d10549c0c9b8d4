"""A pretraining job's start-up cost of verifying its token arrays, measured here and scaled to
the paper's corpus (400 GB of uint32 tokens: 1e11 tokens).

    python bench/token_integrity.py --work /tmp/token-integrity            # 2 GB of tokens
    python bench/token_integrity.py --work /tmp/token-integrity --gb 0.5   # a quicker look

One array of ``--gb`` GB is written and its sha256 recorded (it is then hashed from the page
cache: the rate is an upper bound, a shared file system's is lower); then :func:`verify_digest_once`
as the first job to start would run it (hashes), and as every later job does (reads its stamp).
The paper's start-up is scaled from the measured rate: before verification was once per
corpus, every rank of every pretraining job hashed every array (8 ranks x 39 jobs); now the
first rank of the first job does, and the other jobs read stamps.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.files import sha256_file  # noqa: E402
from pipeline.integrity import verify_digest_once  # noqa: E402

PAPER_TOKEN_GB = 400  # config/paper.yaml: corpus.expected_tokens 1e11 as uint32
PAPER_PRETRAIN_JOBS, PAPER_RANKS = 39, 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    array = args.work / "tokens-000.bin"
    rng = np.random.default_rng(0)
    with array.open("wb") as out:  # in 64 MB pieces, so the bench itself stays small in memory
        for _ in range(round(args.gb * 1e9 / 64e6)):
            rng.integers(0, 128_256, 16_000_000, dtype=np.uint32).tofile(out)
    expected = sha256_file(array)
    hashed, stamped = [], []
    for repeat in range(args.repeats):
        stamps = args.work / f"stamps-{repeat}"
        # Each job is a new process that has hashed nothing yet: a new mtime is a new file version to
        # sha256_file's per-process cache and to the stamps, so the first verify below hashes again.
        os.utime(array, ns=(time.time_ns(), time.time_ns()))
        start = time.perf_counter()
        assert verify_digest_once(array, expected, "bench", args.work, stamps)  # the first job: hashes
        hashed.append(time.perf_counter() - start)
        start = time.perf_counter()
        assert not verify_digest_once(array, expected, "bench", args.work, stamps)  # every later job: its stamp
        stamped.append(time.perf_counter() - start)
    size_gb = array.stat().st_size / 1e9
    rate = size_gb / statistics.median(hashed)
    paper_hash_minutes = PAPER_TOKEN_GB / rate / 60
    print(
        f"{size_gb:.2f} GB array: hash {statistics.median(hashed):.2f} s ({rate:.2f} GB/s, median of {args.repeats});"
        f" stamp read {1e3 * statistics.median(stamped):.2f} ms"
    )
    print(f"paper corpus ({PAPER_TOKEN_GB} GB) at this rate: {paper_hash_minutes:.1f} min of hashing per hash")
    idle_before = PAPER_PRETRAIN_JOBS * PAPER_RANKS * paper_hash_minutes / 60
    print(
        f"  before: every rank at each of the {PAPER_PRETRAIN_JOBS} pretraining jobs' starts, >= {paper_hash_minutes:.1f} min each"
        f" (one core per rank, the {PAPER_RANKS} ranks sharing the disk): >= {idle_before:.1f} GPU-hours idle over the plan"
    )
    print(
        f"  after: the first job's rank 0 only: {PAPER_RANKS * paper_hash_minutes / 60:.1f} GPU-hours idle once; other starts read stamps"
    )


if __name__ == "__main__":
    main()
