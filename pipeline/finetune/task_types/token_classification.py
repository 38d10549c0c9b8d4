"""Token classification (CoNLL-2003 NER and its proxy): one IOB2 tag per word.

Rows give words, our tokenizer sees text: the words are joined with single spaces and
tokenized once (a cased byte-level BPE without a prefix space, so a word's first
sub-token usually carries the space before it). The fast tokenizer's character offsets
tie each sub-token to the word its first non-space character lies in; the first
sub-token of every word carries the word's tag, the rest carry no loss (as BERT did).
Predictions are word-level: the argmax tag at each word's first sub-token, and "O" for
words truncated away (the metric still counts their gold spans as missed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.finetune.task_data import EncodedSplit, in_length_order, pad_batch, pad_sequences
from pipeline.finetune.task_types.base import TaskType, hidden_states, register
from pipeline.objectives.base import IGNORE

OUTSIDE = "O"


@dataclass(frozen=True)
class TaggingExample:
    input_ids: list[int]  # <s> sub-tokens </s>
    labels: list[int]  # per sub-token: the word's tag id on its first sub-token, IGNORE elsewhere
    first_tokens: list[int]  # per word: the position of its first sub-token, -1 when truncated away


def first_subtokens(words: Sequence[str], offsets: Sequence[tuple[int, int]], special: Sequence[int]) -> list[int]:
    """Position of each word's first sub-token in the tokenized ``" ".join(words)``, -1 if none.

    offsets: (start, end) character span of each token; special: 1 for <s>, </s>. A
    token's span may start on the space before its word (byte-level BPE puts it there),
    so the word is the one its first non-space character belongs to.
    """
    text = " ".join(words)
    word_of_char = [-1] * len(text)  # -1: a separating space
    start = 0
    for index, word in enumerate(words):
        word_of_char[start : start + len(word)] = [index] * len(word)
        start += len(word) + 1
    first = [-1] * len(words)
    for position, ((begin, end), is_special) in enumerate(zip(offsets, special)):
        while begin < end and text[begin].isspace():
            begin += 1
        if is_special or begin >= end or word_of_char[begin] < 0:
            continue
        word = word_of_char[begin]
        if first[word] < 0:
            first[word] = position
    return first


class TokenClassifier(nn.Module):
    def __init__(self, encoder: nn.Module, hidden_size: int, num_tags: int):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden_size, num_tags)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """ids, mask (B, T) -> per-token tag logits (B, T, num_tags)."""
        return self.head(hidden_states(self.encoder, input_ids, attention_mask))


@register("token_classification")
class TokenClassification(TaskType):
    def encode(self, rows: list[dict]) -> list[TaggingExample]:
        encoded = self.context.tokenizer(
            [" ".join(row["tokens"]) for row in rows],
            truncation=True,
            max_length=self.context.task.max_length,
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
        )
        examples = []
        for index, row in enumerate(rows):
            ids = encoded["input_ids"][index]
            first = first_subtokens(row["tokens"], encoded["offset_mapping"][index], encoded["special_tokens_mask"][index])
            labels = [IGNORE] * len(ids)
            for position, tag in zip(first, row["tags"]):
                if position >= 0:
                    labels[position] = tag
            examples.append(TaggingExample(ids, labels, first))
        return examples

    def references(self, rows: list[dict]) -> list[list[str]]:
        names = self.context.label_names
        return [[names[tag] for tag in row["tags"]] for row in rows]

    def build_model(self, pretrained: nn.Module) -> TokenClassifier:
        return TokenClassifier(pretrained, pretrained.config.hidden_size, len(self.context.label_names))

    def loss(self, model: TokenClassifier, examples: Sequence[TaggingExample]) -> torch.Tensor:
        logits = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id))  # (B, T, C)
        labels = pad_sequences([e.labels for e in examples], IGNORE)  # (B, T)
        return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE)

    def predict(self, model: TokenClassifier, split: EncodedSplit, batch_size: int) -> list[list[str]]:
        names = self.context.label_names

        def word_tags(indices: list[int]) -> list[list[str]]:
            examples = [split.examples[i] for i in indices]
            best = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id)).argmax(-1).tolist()  # (B, T)
            return [[names[row[p]] if p >= 0 else OUTSIDE for p in e.first_tokens] for row, e in zip(best, examples)]

        return in_length_order(split.lengths, batch_size, word_tags)
