"""The part of a pretraining run's resume fingerprint a configuration alone decides: its spec less
``compute`` (how a run is computed does not make it another run). The job mixes it with its data's
and initial weights' checksums (:func:`pipeline.pretrain.run.run_fingerprint`) and writes it beside
its resume state, where ``python -m pipeline progress`` compares it with the config's own spec
(:func:`pipeline.workflow.jobs.pretrain_spec`) without loading torch or the data."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def spec_digest(plain_spec: dict[str, Any]) -> str:
    """sha256 of a run spec as plain data (a parsed PretrainRunSpec's ``strict.to_plain``), less its compute."""
    plain = json.loads(json.dumps(plain_spec))  # a copy: the caller's spec keeps its compute
    del plain["pretraining"]["compute"]
    return hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()
