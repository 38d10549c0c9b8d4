"""Token classification (CoNLL-2003 NER and its proxy): one IOB tag per word, as the source gives it.

Rows give words, our tokenizer sees text: the words are joined with single spaces and
tokenized once, framed as every task's input is (:mod:`pipeline.finetune.framing`:
``<s> text </s>``, or the study's ``text </s>``). The fast tokenizer's character offsets tie
each sub-token to the word of its first non-space character (``token_words``). A token of spaces
alone (Llama-3 splits digits from their space: "Bowl 50" is " Bowl", " ", "50"; a small BPE
leaves " " before punctuation it never merged) has none of its own. Two labellings:

- ``bos_eos`` (BERT's): the first sub-token of every word carries the word's tag, the rest
  no loss; a word's prediction is the argmax tag at its first sub-token; a space token belongs
  to no word (BERT's tokenizers have none);
- ``eos``, the study's (EncodEval's): every sub-token carries its word's tag, a space token the
  tag of the word after it, by EncodEval's offset walk (a token belongs to the first word that
  ends after the token's first character); a word's prediction is the majority vote of its
  sub-tokens' argmax tags, the space token's included, ties broken as EncodEval's
  ``max(set(votes), key=votes.count)`` breaks them: the first of the tied tags in CPython's
  iteration order of a set of ints (by value modulo the set's table size; the smaller tag for
  tags below 8). Both read in a fork of EncodEval (``Theodb/EncodEval`` at 320bad0,
  ``encodeval/eval_tasks/token_classification_eval.py``: the walk in
  ``eurobert_tokenization_fn``, ``while offset[0] >= char_pos + len(current_word)``; the vote in
  ``sanitize_predictions_labels``).

Words truncated away are predicted "O" (the metric still counts their gold spans as missed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.batch import device_of, pad_batch, pad_sequences
from pipeline.example import IGNORE
from pipeline.finetune.framing import leading
from pipeline.finetune.task_data import EncodedSplit, in_length_order
from pipeline.finetune.task_types.base import TaskType, hidden_states, labelled_positions, register

OUTSIDE = "O"


@dataclass(frozen=True)
class TaggingExample:
    input_ids: list[int]  # [<s>] sub-tokens </s>
    labels: list[int]  # per position: its word's tag id where it carries loss, IGNORE elsewhere
    word_positions: list[list[int]]  # per word: the positions of its sub-tokens, [] when truncated away


def token_words(words: Sequence[str], offsets: Sequence[tuple[int, int]], spaces_to_next_word: bool = True) -> list[int]:
    """The word each token of the tokenized ``" ".join(words)`` belongs to, -1 for none: the word
    of its first non-space character. A token of spaces alone belongs, with
    ``spaces_to_next_word``, to the word after it (EncodEval's walk: the first word whose end lies
    after the token's first character), else to none; -1 past the last word, and for a (0, 0)
    span (a special token's), as in EncodEval.

    offsets: (start, end) character span of each token; byte-level BPE puts the space before a
    word at the start of the word's first token.
    """
    text = " ".join(words)
    word_of_char = [-1] * len(text)  # -1: a separating space
    start = 0
    for index, word in enumerate(words):
        word_of_char[start : start + len(word)] = [index] * len(word)
        start += len(word) + 1
    owners = []
    for begin, end in offsets:
        limit = len(text) if spaces_to_next_word else end
        while begin < limit and text[begin].isspace():
            begin += 1
        owners.append(word_of_char[begin] if (begin, end) != (0, 0) and begin < min(limit, len(text)) else -1)
    return owners


def majority_tag(votes: Sequence[int]) -> int:
    """The tag most sub-tokens of a word voted for, a tie broken exactly as EncodEval's expression:
    the first tied tag in the set's iteration order (so [0, 1] and [1, 0] both give 0)."""
    votes = list(votes)
    return max(set(votes), key=votes.count)


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
    @property
    def every_subtoken(self) -> bool:
        """The study's labelling (its input format): every sub-token tagged, words by majority vote."""
        return self.context.input_format == "eos"

    def encode(self, rows: list[dict]) -> list[TaggingExample]:
        context = self.context
        lead = leading(context.bos_id)
        encoded = context.tokenizer(
            [" ".join(row["tokens"]) for row in rows],
            add_special_tokens=False,
            truncation=True,
            max_length=context.task.max_length - len(lead) - 1,
            return_offsets_mapping=True,
        )
        examples = []
        for index, row in enumerate(rows):
            ids = [*lead, *encoded["input_ids"][index], context.eos_id]
            positions: list[list[int]] = [[] for _ in row["tokens"]]
            owners = token_words(row["tokens"], encoded["offset_mapping"][index], spaces_to_next_word=self.every_subtoken)
            for position, word in enumerate(owners, start=len(lead)):
                if word >= 0:
                    positions[word].append(position)
            labels = [IGNORE] * len(ids)
            for word_positions, tag in zip(positions, row["tags"]):
                for position in word_positions if self.every_subtoken else word_positions[:1]:
                    labels[position] = tag
            examples.append(TaggingExample(ids, labels, positions))
        return examples

    def references(self, rows: list[dict]) -> list[list[str]]:
        names = self.context.label_names
        return [[names[tag] for tag in row["tags"]] for row in rows]

    def build_model(self, pretrained: nn.Module) -> TokenClassifier:
        return TokenClassifier(pretrained, pretrained.config.hidden_size, len(self.context.label_names))

    def loss_units(self, examples: Sequence) -> int:
        return labelled_positions(examples)

    def loss(self, model: TokenClassifier, examples: Sequence[TaggingExample]) -> torch.Tensor:
        logits = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id, device_of(model)))  # (B, T, C)
        labels = pad_sequences([e.labels for e in examples], IGNORE, logits.device)  # (B, T)
        return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE)

    def predict(self, model: TokenClassifier, split: EncodedSplit, batch_size: int) -> list[list[str]]:
        names = self.context.label_names

        def word_tags(indices: list[int]) -> list[list[str]]:
            examples = [split.examples[i] for i in indices]
            best = model(*pad_batch([e.input_ids for e in examples], self.context.pad_id, device_of(model))).argmax(-1).tolist()  # (B, T)
            return [[self.word_tag(row, word, names) for word in e.word_positions] for row, e in zip(best, examples)]

        return in_length_order(split.lengths, batch_size, word_tags)

    def word_tag(self, best: Sequence[int], positions: Sequence[int], names: Sequence[str]) -> str:
        """A word's predicted tag from the argmax tags ``best`` (T,) of its row: its first sub-token's,
        or under the study's labelling its sub-tokens' majority; "O" for a word truncated away."""
        if not positions:
            return OUTSIDE
        if self.every_subtoken:
            return names[majority_tag([best[p] for p in positions])]
        return names[best[positions[0]]]
