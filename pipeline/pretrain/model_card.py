"""The model card written beside every exported model (``model/README.md``), in the hub's card format:
a YAML header a hub reads (library, task, tags) with this run's facts under ``pretraining:``, then
prose saying what the model is, what it saw, how it was trained and how to load it.

Every number comes from the run's own ``summary.json`` record (the test holds the header to it), the
schedule from its plan, the data from the sha256 of the token arrays it read and the code from
:func:`pipeline.provenance.code_version`. Fine-tuning happens after pretraining, so the card written
here points to where its scores will be (the report's run_scores.csv) rather than guessing them.
"""

from __future__ import annotations

from typing import Any

import yaml

from pipeline import strict
from pipeline.pretrain.plan import RunPlan

CARD_FILE = "README.md"
# The summary.json keys the header repeats, as they are there
SUMMARY_KEYS = (
    "run",
    "objective",
    "objective_kind",
    "objective_params",
    "attention",
    "size",
    "num_parameters",
    "num_non_embedding_parameters",
    "num_study_parameters",
    "first_step",
    "trained_steps",
    "schedule_steps",
    "stopped_before_decay",
    "num_tokens",
    "final_train_loss",
    "heldout_loss",
)
# What a hub lists the model under, by the attention it was trained with
PIPELINE_TAGS = {"causal": "text-generation", "prefix": "text-generation", "bidirectional": "fill-mask"}


def model_card(summary: dict[str, Any], plan: RunPlan, sequence_length: int, batch_size: int, tokens_sha256: str, code: dict) -> str:
    """The card's text: the YAML header, then the prose."""
    header = {
        "library_name": "transformers",
        "pipeline_tag": PIPELINE_TAGS[summary["attention"]],
        "tags": ["pretraining-objectives-replication", summary["objective_kind"], summary["attention"]],
        "pretraining": {
            **{key: summary[key] for key in SUMMARY_KEYS},
            "heldout_metric": summary["heldout_metric"],
            "schedule": strict.to_plain(plan.schedule),
            "sequence_length": sequence_length,
            "batch_size": batch_size,
            "tokens_sha256": tokens_sha256,
            "code": code,
        },
    }
    metric = summary["heldout_metric"]
    measured = "not measured (its loss never trains the LM head)" if metric["value"] is None else f"{metric['value']:.4f}"
    stopped = (
        " It stopped before its schedule's decay: an undecayed checkpoint, as the study's 1k-40k models are."
        if (summary["stopped_before_decay"])
        else ""
    )
    dirty = " with uncommitted changes" if code.get("git_dirty") else ""
    prose = f"""# {summary["run"]}

A backbone of this harness (Llama / EuroBERT layout) pretrained with the **{summary["objective"]}** objective
(kind `{summary["objective_kind"]}`, {summary["attention"]} attention) at size `{summary["size"]}`: {summary["num_parameters"]:,}
parameters, {summary["num_non_embedding_parameters"]:,} outside the embeddings. {plan.description}.

## Training

- steps {summary["first_step"]:,} to {summary["trained_steps"]:,} of a {plan.schedule.kind} schedule ending at step
  {summary["schedule_steps"]:,} (peak learning rate {plan.schedule.peak_lr:g}, {plan.schedule.num_warmup_steps:,} warm-up steps), batches
  of {batch_size} sequences of {sequence_length} tokens: {summary["num_tokens"]:,} tokens seen.{stopped}
- objective parameters: {", ".join(f"{k} {v}" for k, v in summary["objective_params"].items()) or "none"}
- final training loss {summary["final_train_loss"]:.4f}, held-out loss {summary["heldout_loss"]:.4f}, held-out
  {metric["name"]} {measured}

## Data and code

The packed token arrays it read have the sha256 `{tokens_sha256}` (their `meta.json`); their own provenance.json
names the corpus, its sources and the tokenizer. Code: commit `{code.get("git_commit") or "unknown"}`{dirty}, source
sha256 `{code["source_sha256"]}`.

## Fine-tuning scores

Measured after pretraining, by the harness's fine-tuning jobs: the report's `run_scores.csv` (results/tables/)
holds each task's test score at the learning rate chosen on validation, with its interval.

## How to load it

```python
from transformers import AutoTokenizer, EuroBertForMaskedLM, LlamaForCausalLM

tokenizer = AutoTokenizer.from_pretrained(path)
causal = LlamaForCausalLM.from_pretrained(path)  # attends causally
bidirectional = EuroBertForMaskedLM.from_pretrained(path)  # the same weights, attending both ways
```

A stock client does not rebuild a prefix LM's bidirectional prefix; ELECTRA's export is its discriminator.
"""
    return f"---\n{yaml.safe_dump(header, sort_keys=False)}---\n\n{prose}"


def read_card_header(text: str) -> dict[str, Any]:
    """The YAML header of a card's text (between its two ``---`` lines)."""
    _, header, _ = text.split("---\n", 2)
    return yaml.safe_load(header)
