"""Needle in a haystack: generate a fact hidden in distractor text (a generative task).

The model is the whole pretrained LM, LM head included, under its objective's own
generative pattern: causal, or prefix attention over context + question for objectives
pretrained with it (prefix LM, span corruption, UL2). Objectives without a generative
pattern (MLM and friends) and the untrained baseline run causally, like CLM.

Sequence ``<s> context question answer </s>``: the prompt is ``<s> context question``
(cut from the left when too long, so the question survives), the targets
`` answer</s>``; loss only on the targets. Prediction: greedy decoding of at most
``MAX_NEW_TOKENS`` tokens, stopping at ``</s>``; exact match against the answer, overall
and per (length, depth) cell of the haystack.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from transformers import DynamicCache

from pipeline.batch import collate, pad_batch
from pipeline.errors import PipelineError
from pipeline.example import Attention, Example
from pipeline.finetune.framing import leading, tokenize
from pipeline.finetune.plan import generation_attention
from pipeline.finetune.task_data import EncodedSplit, in_length_order
from pipeline.finetune.task_types.base import TaskType, labelled_positions, register
from pipeline.metrics import Metric
from pipeline.model.attention import prefix_attention_mask
from pipeline.model.backbone import language_model_loss, load_language_model
from pipeline.objectives.prefix_lm import prefix_example

MAX_NEW_TOKENS = 8  # generated tokens, </s> included; also the most target tokens an example trains on


@torch.no_grad()
def greedy_decode(
    model: nn.Module, prompts: Sequence[Sequence[int]], attention: Attention, pad_id: int, eos_id: int, max_new_tokens: int
) -> list[list[int]]:
    """Greedy continuations of a batch of prompts, ``</s>`` and what would follow it dropped.

    The prompts are encoded once, right-padded (B, P), exactly as in training (under
    prefix attention the prompt is the prefix), keeping their keys and values; then each
    step feeds every row's last token (B, 1) at its own position and appends the argmax
    of the LM head. The padding between a short prompt and its generated tokens stays
    masked, so a row sees what it would see unpadded. Generated tokens attend causally.
    """
    device = model.device
    lengths = torch.tensor([len(p) for p in prompts], device=device)  # (B,)
    ids, padding = pad_batch(prompts, pad_id, device)  # (B, P) each
    embeds = model.get_input_embeddings()(ids)  # (B, P, H)
    mask = prefix_attention_mask(model.config, embeds, lengths, padding) if attention == "prefix" else padding
    cache = DynamicCache(config=model.config)
    hidden = model.base_model(inputs_embeds=embeds, attention_mask=mask, past_key_values=cache, use_cache=True).last_hidden_state
    last = hidden[torch.arange(len(prompts), device=device), lengths - 1]  # (B, H): each prompt's last real position
    generated: list[list[int]] = [[] for _ in prompts]
    finished = torch.zeros(len(prompts), dtype=torch.bool, device=device)
    for step in range(max_new_tokens):
        next_ids = model.get_output_embeddings()(last).argmax(-1)  # (B,)
        finished |= next_ids == eos_id
        for row in (~finished).nonzero().flatten().tolist():
            generated[row].append(int(next_ids[row]))
        if finished.all() or step == max_new_tokens - 1:
            break
        padding = torch.cat([padding, torch.ones(len(prompts), 1, dtype=torch.long, device=device)], dim=1)  # (B, P + step + 1)
        positions = (lengths + step).unsqueeze(1)  # (B, 1): right after each row's own tokens
        out = model.base_model(
            input_ids=next_ids.unsqueeze(1), attention_mask=padding, position_ids=positions, past_key_values=cache, use_cache=True
        )
        last = out.last_hidden_state[:, -1]
    return generated


def cell(row: dict) -> str:
    return f"length={row['length']},depth={row['depth']}"


@register("needle_in_a_haystack")
class NeedleInAHaystack(TaskType):
    @property
    def attention(self) -> Attention:
        attention = generation_attention(self.context.objective_kind)
        if attention is None:
            raise PipelineError(
                f"needle_in_a_haystack: objective kind {self.context.objective_kind!r} cannot generate (its attention is bidirectional)"
            )
        return attention

    def load_pretrained(self, checkpoint: str) -> nn.Module:
        return load_language_model(checkpoint, self.attention)

    def encode(self, rows: list[dict]) -> list[Example]:
        context = self.context
        prompts = tokenize(context.tokenizer, [f"{row['context']} {row['question']}" for row in rows])
        answers = tokenize(context.tokenizer, [f" {row['answer']}" for row in rows])
        prompt_budget = max(1, context.task.max_length - MAX_NEW_TOKENS - 1)  # <s> and the longest answer fit
        return [
            prefix_example(
                np.asarray([*leading(context.bos_id), *prompt[-prompt_budget:]]),
                np.asarray([*answer[: MAX_NEW_TOKENS - 1], context.eos_id]),
            )
            for prompt, answer in zip(prompts, answers)
        ]

    def references(self, rows: list[dict]) -> list[str]:
        return [row["answer"] for row in rows]

    def build_model(self, pretrained: nn.Module) -> nn.Module:
        return pretrained  # no new head: the LM head writes the answer

    def loss_units(self, examples: Sequence) -> int:
        return labelled_positions(examples)

    def loss(self, model: nn.Module, examples: Sequence[Example]) -> torch.Tensor:
        return language_model_loss(model, collate(examples, self.attention, self.context.pad_id).to(model.device))

    def predict(self, model: nn.Module, split: EncodedSplit, batch_size: int) -> list[str]:
        prompts = [e.input_ids[: e.prefix_length].tolist() for e in split.examples]

        def generate(indices: list[int]) -> list[str]:
            batch = [prompts[i] for i in indices]
            generated = greedy_decode(model, batch, self.attention, self.context.pad_id, self.context.eos_id, MAX_NEW_TOKENS)
            return [self.context.tokenizer.decode(ids, skip_special_tokens=True).strip() for ids in generated]

        return in_length_order([len(p) for p in prompts], batch_size, generate)

    def scores(self, metric: Metric, split: EncodedSplit, predictions: list[str]) -> dict[str, float]:
        """The metric's result plus its headline within each (length, depth) cell."""
        cells: dict[str, list[int]] = {}
        for index, row in enumerate(split.rows):
            cells.setdefault(cell(row), []).append(index)
        per_cell = {
            name: metric.compute([predictions[i] for i in indices], [split.references[i] for i in indices])[metric.headline]
            for name, indices in sorted(cells.items())
        }
        return {**metric.compute(predictions, split.references), **per_cell}
