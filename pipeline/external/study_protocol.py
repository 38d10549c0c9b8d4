"""How EncodEval fine-tuned every number of the study, as the facts a fine-tuning
``scores.json`` records, and how a grid run here differs from it.

One list serves both comparisons with the study: its published tables
(:mod:`.study_cells`, a cell measured otherwise is "not comparable") and its released
per-example results (:mod:`.study_versus`, a pairing refused).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The head (this harness's task type) of each family in EncodEval: QA's token positions are a
# tagging head's output, a span pointer's positions score the same metric on another task.
STUDY_TASK_TYPES = {"SC": "sequence_classification", "TC": "token_classification", "QA": "qa_token_tagging", "IR": "retrieval"}
# Settings every grid of the study ran with: text + eos inputs, the model cast to bf16 before
# AdamW, the hub's strings unnormalised, every row of every split kept (EncodEval de-duplicates
# nothing), a random sampler's batches (transformers' Trainer, sentence-transformers), and the
# learning rate chosen on the validation mean of all 5 seeds, each run at every rate.
STUDY_PROTOCOL = {
    "input_format": "eos",
    "precision": "bf16_weights",
    "text": "raw",
    "rows": "all",
    "batches": "random",
    "lr_warmup": "transformers",
    "learning_rate_chosen_on": "every seed",
}
# The study's dataset whose pairs fine-tune every IR model; nq and mldr_en are scored on those.
STUDY_IR_TRAINING = "msmarco"
# What scores.json records of how a grid was fine-tuned (pipeline.finetune.run).
PROTOCOL_KEYS = ("task_type", "input_format", "precision", "text", "rows", "batches", "lr_warmup", "learning_rate_chosen_on", "trained_on")


def protocol_differences(family: str, protocol: Mapping[str, Any], trained_on_dataset: str | None) -> list[str]:
    """Each way a grid of ``family`` fine-tuned under ``protocol`` (a scores.json's
    :data:`PROTOCOL_KEYS`) is not EncodEval's, one phrase each; ``trained_on_dataset``: the
    study's dataset the grid's models were fine-tuned on (None: not one of its datasets)."""
    differences = []
    study_type, ours = STUDY_TASK_TYPES.get(family), protocol.get("task_type")
    if study_type is not None and ours != study_type:
        differences.append(f"{family} head differs: {ours or 'not recorded'} here, {study_type} in the study")
    for key, study_value in STUDY_PROTOCOL.items():
        if protocol.get(key) != study_value:
            differences.append(f"{key} {protocol.get(key) or '(not recorded)'} here, {study_value} in the study")
    if family == "IR" and trained_on_dataset != STUDY_IR_TRAINING:
        trained_on = protocol.get("trained_on") or "(not recorded)"
        differences.append(f"IR models fine-tuned by task {trained_on} here; the study scores those it fine-tuned on {STUDY_IR_TRAINING}")
    return differences
