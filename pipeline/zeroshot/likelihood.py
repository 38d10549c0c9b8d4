"""How much a language model likes a sentence, under the attention it was trained with.

- :func:`sentence_log_likelihood`: sum over tokens of log p(token | tokens before it),
  from ``<s>`` to ``</s>`` inclusive (the causal chain rule; BLiMP's score).
- :func:`pseudo_log_likelihood`: Salazar et al. (2020) for bidirectional models: each
  token is masked in turn and scored from both sides. ``within_word_l2r`` (Kauf & Ivanova,
  2023) also masks the tokens of the same word to the token's right, so a word split
  into several tokens is not scored from its own other pieces; the original variant
  (``original``) over-rewards multi-token words. Special tokens are never scored.

Both return one float per sentence; a sentence of T tokens costs one forward pass for
the causal score and T - 2 (one per scored token) for the pseudo score, batched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerFast

from pipeline.batch import pad_batch
from pipeline.tokenization.special_tokens import SpecialIds

PLLVariant = Literal["within_word_l2r", "original"]


def encode_sentences(tokenizer: PreTrainedTokenizerFast, sentences: Sequence[str]) -> tuple[list[list[int]], list[list[int | None]]]:
    """Each sentence framed ``<s> ... </s>``: its ids, and its word index per token (None for specials)."""
    encoded = tokenizer(list(sentences), add_special_tokens=True)
    return encoded["input_ids"], [encoded.word_ids(i) for i in range(len(sentences))]


@torch.no_grad()
def sentence_log_likelihood(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast, sentences: Sequence[str], batch_size: int = 64
) -> np.ndarray:
    """(N,) float64: log p(sentence) under a causal LM, ``<s>`` given."""
    special = SpecialIds.from_tokenizer(tokenizer)
    ids_per_sentence, _ = encode_sentences(tokenizer, sentences)
    scores = np.zeros(len(sentences))
    for start in range(0, len(sentences), batch_size):
        ids, mask = pad_batch(ids_per_sentence[start : start + batch_size], special.pad, model.device)  # (B, L)
        log_probs = model(input_ids=ids, attention_mask=mask).logits.float().log_softmax(-1)  # (B, L, V)
        # position t predicts token t+1: (B, L-1)
        next_token = log_probs[:, :-1].gather(-1, ids[:, 1:, None]).squeeze(-1)
        scores[start : start + len(ids)] = (next_token * mask[:, 1:]).sum(-1).double().cpu().numpy()
    return scores


def masked_copies(ids: Sequence[int], word_ids: Sequence[int | None], mask_id: int, variant: PLLVariant) -> list[tuple[list[int], int]]:
    """One (input with masks, scored position) per non-special token of one sentence.

    ``within_word_l2r``: scoring the token at t also masks every later token of its word,
    so the piece "ing" of "walk|ing" is predicted from "walk" but "walk" is not predicted
    from "ing".
    """
    copies = []
    for position, word in enumerate(word_ids):
        if word is None:
            continue
        masked = list(ids)
        masked[position] = mask_id
        if variant == "within_word_l2r":
            for later in range(position + 1, len(ids)):
                if word_ids[later] != word:
                    break
                masked[later] = mask_id
        copies.append((masked, position))
    return copies


@torch.no_grad()
def pseudo_log_likelihood(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerFast,
    sentences: Sequence[str],
    variant: PLLVariant = "within_word_l2r",
    batch_size: int = 256,
) -> np.ndarray:
    """(N,) float64: sum over tokens of log p(token | the sentence with it masked), bidirectional LM."""
    special = SpecialIds.from_tokenizer(tokenizer)
    ids_per_sentence, word_ids_per_sentence = encode_sentences(tokenizer, sentences)
    # Every masked copy of every sentence, flattened so batches cut across sentences, and
    # sorted by length (stably, so the sums stay deterministic) so a batch pads little.
    copies = [
        (sentence, masked, position, ids[position])
        for sentence, (ids, word_ids) in enumerate(zip(ids_per_sentence, word_ids_per_sentence))
        for masked, position in masked_copies(ids, word_ids, special.mask, variant)
    ]
    copies.sort(key=lambda copy: len(copy[1]))
    scores = np.zeros(len(sentences))
    for start in range(0, len(copies), batch_size):
        chunk = copies[start : start + batch_size]
        ids, mask = pad_batch([masked for _, masked, _, _ in chunk], special.pad, model.device)  # (B, L)
        hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state  # (B, L, H)
        positions = torch.tensor([position for _, _, position, _ in chunk], device=model.device)  # (B,)
        # The LM head on the one scored position per copy: (B, H) -> (B, V).
        log_probs = model.get_output_embeddings()(hidden[torch.arange(len(chunk), device=model.device), positions]).float().log_softmax(-1)
        targets = torch.tensor([token for _, _, _, token in chunk], device=model.device)  # (B,)
        token_scores = log_probs.gather(-1, targets[:, None]).squeeze(-1).double().cpu().numpy()
        np.add.at(scores, [sentence for sentence, _, _, _ in chunk], token_scores)
    return scores
