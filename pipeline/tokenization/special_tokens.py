"""The special tokens every objective needs, and where they sit in the vocabulary.

Specials take the lowest ids (0..num_special-1) so objectives can tell them apart from
text with one comparison: an MLM never selects them and never samples them as random
replacements. Sentinels for span corruption count down from the top of the special
block, as T5's count down from the top of its vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

PAD, BOS, EOS, UNK, MASK = "<pad>", "<s>", "</s>", "<unk>", "<mask>"
BASE_SPECIALS = (PAD, BOS, EOS, UNK, MASK)


def sentinel(index: int) -> str:
    return f"<extra_id_{index}>"


def special_token_list(num_sentinel_tokens: int) -> list[str]:
    """Specials in id order: the base five, then sentinels N-1 .. 0 (so <extra_id_0> is highest)."""
    return [*BASE_SPECIALS, *(sentinel(i) for i in reversed(range(num_sentinel_tokens)))]


@dataclass(frozen=True)
class SpecialIds:
    """Token ids an objective may need; built from a trained tokenizer."""

    pad: int
    bos: int
    eos: int
    mask: int
    num_special: int  # ids below this are special
    vocab_size: int
    sentinels: tuple[int, ...]  # sentinels[i] is the id of <extra_id_i>

    @classmethod
    def from_tokenizer(cls, tokenizer) -> "SpecialIds":
        vocab = tokenizer.get_vocab()
        sentinels = []
        while sentinel(len(sentinels)) in vocab:
            sentinels.append(vocab[sentinel(len(sentinels))])
        return cls(
            pad=vocab[PAD],
            bos=vocab[BOS],
            eos=vocab[EOS],
            mask=vocab[MASK],
            num_special=len(BASE_SPECIALS) + len(sentinels),
            vocab_size=len(vocab),
            sentinels=tuple(sentinels),
        )
