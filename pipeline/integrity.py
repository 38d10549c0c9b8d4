"""Checksums end to end: a file is verified against the sha256 recorded when it was written.

A stage that writes weights, prepared task splits, corpus shards or minimal pairs lists
each file's sha256 under ``outputs`` in its ``provenance.json``
(:func:`pipeline.provenance.write_provenance`); ``pack`` records each token array's in its
``meta.json``, which ``index-tokens`` carries into results/tokens/meta.json. A stage about
to read one verifies it first (:func:`verify_recorded`, :func:`verify_digest`) and refuses
bytes that changed since, in one line naming the file, both hashes and the job to rerun,
instead of training or scoring on them.

What it costs, and when: weights (MBs here, ~5 GB for a 1B model in float32: seconds) and
task splits are verified by every job that loads them, always; corpus shards by
gather_corpus and pack (7.5 GB a shard at paper scale: seconds next to packing it). Token
arrays are verified when ``hardware.verify_token_checksums`` is on (the default): at paper scale
that is 400 GB per corpus, ~15 minutes of hashing at 500 MB/s, so a pretraining job hashes them
on its first rank only and only where no earlier job verified the same bytes
(:func:`verify_digest_once`: a stamp of size, mtime and inode per array); a cluster with
trusted storage can turn it off. The workflow passes the switch
to jobs through the environment (``PIPELINE_VERIFY_TOKEN_CHECKSUMS``), not as a parameter:
turning it on or off reruns nothing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.files import read_json, sha256_file, write_json

PROVENANCE_FILE = "provenance.json"
VERIFY_TOKENS = "PIPELINE_VERIFY_TOKEN_CHECKSUMS"  # "0" turns token-array verification off
SEARCH_LEVELS = 3  # model.safetensors -> model/ -> run dir (checkpoints/step-N/ is two below it)


def recorded_digest(path: Path) -> tuple[Path, str] | None:
    """(the provenance.json that lists ``path`` under outputs, its sha256 there); the nearest
    enclosing one first. None for a file no stage of this version recorded."""
    for directory in list(path.parents)[:SEARCH_LEVELS]:
        record = directory / PROVENANCE_FILE
        if record.is_file():
            digest = read_json(record).get("outputs", {}).get(path.relative_to(directory).as_posix())
            if digest is not None:
                return record, digest
    return None


def verify_recorded(path: str | Path) -> None:
    """Refuse ``path`` if its bytes are not those its stage recorded, or if no stage recorded
    them: a missing provenance.json is a file from outside the workflow (or an older output)
    whose bytes nothing vouches for, never a check skipped."""
    path = Path(path)
    found = recorded_digest(path)
    if found is None:
        raise PipelineError(
            f"{path}: no {PROVENANCE_FILE} in the {SEARCH_LEVELS} folders above it records its sha256, so nothing vouches"
            " for its bytes; rerun the job that writes it (snakemake -f <its output>)"
        )
    record, expected = found
    verify_digest(path, expected, f"{record} recorded", record.parent)


def verify_digest(path: Path, expected: str, where: str, made_by: Path) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise PipelineError(
            f"{path}: sha256 {actual} is not the {expected} {where} when it was written; "
            f"it changed since: rerun the job that made {made_by} (snakemake -f <its output>)"
        )


def verifies_tokens() -> bool:
    return os.environ.get(VERIFY_TOKENS, "1") != "0"


def verify_digest_once(path: Path, expected: str, where: str, made_by: Path, stamps: Path) -> bool:
    """:func:`verify_digest`, unless a job of this workflow already verified these very bytes: a
    stamp in ``stamps`` records the file's size, mtime and inode when its sha256 last matched
    ``expected``, and a file rewritten since (any of them changed) is hashed again. Returns
    whether it hashed. Token arrays are 400 GB at paper scale: without stamps every pretraining
    job (39 of them) would spend ~15 minutes hashing them before its first step."""
    status = path.stat()
    identity = {"sha256": expected, "size": status.st_size, "mtime_ns": status.st_mtime_ns, "inode": status.st_ino}
    stamp = stamps / f"{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]}.json"
    if stamp.is_file() and read_json(stamp) == identity:
        return False
    verify_digest(path, expected, where, made_by)
    stamps.mkdir(parents=True, exist_ok=True)
    write_json(stamp, identity)
    return True
