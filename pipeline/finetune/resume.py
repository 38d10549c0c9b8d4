"""A fine-tuning job's finished grid points, kept across attempts, so that a job killed at its
time limit (or preempted) resumes at its next point instead of its first.

At paper scale one job's grid is 30 points of up to ~25 minutes each; SLURM's retry of a job
cut at its limit would otherwise start the grid over and hit the same limit again. Every grid
point is independent (the pretrained weights restored, its head, data order and schedule
drawn from its seed), so a point's result does not depend on which points ran before it in
the same process: a resumed grid's scores equal an uninterrupted one's (on a CPU bit for bit).

The state lives in the job's ``--work-dir`` (outside the Snakemake outputs, which Snakemake
deletes when a job fails): one JSON file per finished point, written atomically, under a
fingerprint of everything the results depend on (the run's spec and the recorded sha256 of
the model's weights and of each task's files). A state of another fingerprint is discarded
whole, never mixed in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.files import read_json, write_json
from pipeline.finetune.grid_result import GridResult, Point
from pipeline.integrity import recorded_digest

log = logging.getLogger(__name__)

FINGERPRINT_FILE = "fingerprint"


def grid_fingerprint(spec_json: str, recorded_files: Sequence[Path]) -> str:
    """sha256 over the job's spec and the sha256 each of ``recorded_files`` (already verified
    by the stage that reads it) has in the provenance.json of the stage that wrote it."""
    digest = hashlib.sha256(json.dumps(json.loads(spec_json), sort_keys=True).encode())
    for path in recorded_files:
        found = recorded_digest(path)
        if found is None:
            raise PipelineError(f"{path}: no provenance.json records its sha256; the grid's resume state cannot be tied to it")
        digest.update(f"{path.name}:{found[1]}".encode())
    return digest.hexdigest()


class PointStore:
    """The finished points of one job in ``work_dir``, for inputs of ``fingerprint``."""

    def __init__(self, work_dir: Path, fingerprint: str):
        self.points = work_dir / "points"
        self.work_dir = work_dir
        marker = work_dir / FINGERPRINT_FILE
        if marker.is_file() and marker.read_text().strip() != fingerprint:
            log.info("%s: resume state of other inputs or spec, discarded", work_dir)
            shutil.rmtree(work_dir)
        self.points.mkdir(parents=True, exist_ok=True)
        marker.write_text(fingerprint + "\n")

    def path(self, learning_rate: float, seed: int) -> Path:
        return self.points / f"lr{learning_rate!r}_seed{seed}.json"

    def get(self, learning_rate: float, seed: int) -> Point | None:
        path = self.path(learning_rate, seed)
        if not path.is_file():
            return None
        record = read_json(path)
        evaluated = {name: GridResult(**result) for name, result in record["evaluated"].items()}
        return GridResult(**record["result"]), evaluated

    def put(self, learning_rate: float, seed: int, point: Point) -> None:
        result, evaluated = point
        record = {"result": dataclasses.asdict(result), "evaluated": {name: dataclasses.asdict(r) for name, r in evaluated.items()}}
        write_json(self.path(learning_rate, seed), record)

    def __len__(self) -> int:
        return len(list(self.points.glob("*.json")))

    def remove(self) -> None:
        """The job's outputs are written: its state is no longer needed."""
        shutil.rmtree(self.work_dir, ignore_errors=True)
