"""How fine-tuning inputs are laid out: ``<s> a </s>`` and ``<s> a </s> b </s>``, or, in the
study's format (``finetuning.input_format: eos``, EncodEval's ``text + eos``), the same without
the leading ``<s>``.

The tokenizer's post-processor frames single texts only (pretraining packs raw text), so
pairs (sentence pairs, question + context) are framed here from segments tokenized
without special tokens; single texts go the same way, so every task type shares one layout.
"""

from __future__ import annotations

from collections.abc import Sequence


def tokenize(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Token ids of each text, no special tokens (one batched call to the fast tokenizer)."""
    return tokenizer(list(texts), add_special_tokens=False)["input_ids"] if texts else []


def frame(segments: Sequence[Sequence[int]], bos: int | None, eos: int) -> list[int]:
    """``<s> seg_1 </s> seg_2 </s> ...``, without the ``<s>`` when ``bos`` is None."""
    ids = leading(bos)
    for segment in segments:
        ids += [*segment, eos]
    return ids


def truncate_longest_first(segments: Sequence[Sequence[int]], budget: int) -> list[list[int]]:
    """Cut tokens off the ends of the longest segments until all fit in ``budget`` tokens
    (the "longest_first" strategy of transformers), so a short segment of a pair survives
    whole when the other is long.

    Water-filling: shortest first, each segment keeps at most an equal share of what is
    left, which is what removing one token at a time from the longest one ends at.
    """
    keep = [len(s) for s in segments]
    remaining = budget
    by_length = sorted(range(len(segments)), key=lambda i: keep[i])
    for position, index in enumerate(by_length):
        keep[index] = min(keep[index], remaining // (len(segments) - position))
        remaining -= keep[index]
    return [list(s[:n]) for s, n in zip(segments, keep)]


def leading(bos: int | None) -> list[int]:
    """What goes before the first segment: ``[bos]``, or nothing in the study's format."""
    return [] if bos is None else [bos]


def frame_truncated(segments: Sequence[Sequence[int]], bos: int | None, eos: int, max_length: int) -> list[int]:
    """The framed segments, at most ``max_length`` tokens with the special tokens."""
    return frame(truncate_longest_first(segments, max_length - len(segments) - len(leading(bos))), bos, eos)
