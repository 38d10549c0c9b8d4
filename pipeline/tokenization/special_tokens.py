"""The special tokens every objective needs, and where they sit in the vocabulary.

Specials are one block of ids, the lowest (0..num_special-1) in a BPE trained here, the
highest in a ready-made vocabulary such as Llama-3's (text 0..127999, specials above), so
that the text ids are one range too: an MLM never selects a special and never samples one
as a random replacement. After ``<mask>`` come UL2's three mode tokens (Tay et al. 2022, arXiv
2205.05131: ``[NLU]``, ``[NLG]``, ``[S2S]`` announce which denoiser made an example).
Sentinels for span corruption count down from the top of the special block, as T5's
count down from the top of its vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

PAD, BOS, EOS, UNK, MASK = "<pad>", "<s>", "</s>", "<unk>", "<mask>"
NLU, NLG, S2S = "<nlu>", "<nlg>", "<s2s>"  # UL2 modes: regular spans, extreme spans, sequential (prefix LM)
MODE_TOKENS = (NLU, NLG, S2S)
BASE_SPECIALS = (PAD, BOS, EOS, UNK, MASK, *MODE_TOKENS)


# The tokenizer attribute naming each role's token. A BPE trained here leaves them unset
# and names its tokens as above; a ready-made one sets each to a token of its own vocabulary
# (Llama-3's <|begin_of_text|>, a reserved token as <mask>), so its text tokenizes as before.
ROLE_TOKENS = {
    "pad_token": PAD,
    "bos_token": BOS,
    "eos_token": EOS,
    "unk_token": UNK,
    "mask_token": MASK,
    "nlu_token": NLU,
    "nlg_token": NLG,
    "s2s_token": S2S,
}


def sentinel(index: int) -> str:
    return f"<extra_id_{index}>"


def sentinel_role(index: int) -> str:
    return f"extra_id_{index}_token"


def role_id(tokenizer, vocab: dict[str, int], role: str, default: str) -> int | None:
    """The id of the token playing ``role`` (a tokenizer attribute such as ``mask_token``):
    the tokenizer's own if it names one, else ``default``; None if the vocabulary has neither."""
    return vocab.get(getattr(tokenizer, role, None) or default)


def special_token_list(num_sentinel_tokens: int) -> list[str]:
    """Specials in id order: the base ones, then sentinels N-1 .. 0 (so <extra_id_0> is highest)."""
    return [*BASE_SPECIALS, *(sentinel(i) for i in reversed(range(num_sentinel_tokens)))]


@dataclass(frozen=True)
class SpecialIds:
    """Token ids an objective may need; built from a trained tokenizer."""

    pad: int
    bos: int
    eos: int
    mask: int
    num_special: int  # how many ids, from first_special on, are special
    vocab_size: int
    sentinels: tuple[int, ...]  # sentinels[i] is the id of <extra_id_i>
    modes: tuple[int, ...] = ()  # ids of MODE_TOKENS in that order; () for a tokenizer made without them
    first_special: int = 0  # 0, or vocab_size - num_special when the specials sit at the top

    def __post_init__(self) -> None:
        if self.first_special not in (0, self.vocab_size - self.num_special):
            raise ValueError(
                f"special ids {self.first_special}..{self.first_special + self.num_special - 1} are neither the lowest "
                f"nor the highest of a {self.vocab_size}-token vocabulary, so text ids are not one range"
            )

    @property
    def text_ids(self) -> range:
        """Every id that is not special: what an MLM may select, or draw as a random replacement."""
        if self.first_special == 0:
            return range(self.num_special, self.vocab_size)
        return range(0, self.first_special)

    def mode(self, token: str) -> int:
        """The id of mode token ``token`` (one of MODE_TOKENS)."""
        if not self.modes:
            raise ValueError(f"the tokenizer has no UL2 mode tokens {', '.join(MODE_TOKENS)}: retrain it with this version")
        return self.modes[MODE_TOKENS.index(token)]

    @classmethod
    def from_tokenizer(cls, tokenizer) -> "SpecialIds":
        vocab = tokenizer.get_vocab()
        ids = {role: role_id(tokenizer, vocab, role, token) for role, token in ROLE_TOKENS.items()}
        missing = [ROLE_TOKENS[role] for role in ("pad_token", "bos_token", "eos_token", "mask_token") if ids[role] is None]
        if missing:
            raise ValueError(f"the tokenizer has no {', '.join(missing)}: every objective needs them")
        sentinels: list[int] = []
        while (found := role_id(tokenizer, vocab, sentinel_role(len(sentinels)), sentinel(len(sentinels)))) is not None:
            sentinels.append(found)
        # A tokenizer trained before the mode tokens existed has none: count what is there,
        # so its first text id is never mistaken for a special.
        mode_ids = [ids[role] for role in ("nlu_token", "nlg_token", "s2s_token")]
        modes = () if None in mode_ids else tuple(mode_ids)
        named = [ids[role] for role in ("pad_token", "bos_token", "eos_token", "unk_token", "mask_token") if ids[role] is not None]
        # Every token the tokenizer marks special is one too: a ready-made vocabulary's
        # unused reserved tokens are no text either.
        marked = [i for i, token in getattr(tokenizer, "added_tokens_decoder", {}).items() if token.special]
        block = sorted({*named, *modes, *sentinels, *marked})
        if block != list(range(block[0], block[0] + len(block))):
            raise ValueError(f"the tokenizer's special ids are not one block ({block[0]}..{block[-1]} holds text ids)")
        return cls(
            pad=ids["pad_token"],
            bos=ids["bos_token"],
            eos=ids["eos_token"],
            mask=ids["mask_token"],
            num_special=len(block),
            vocab_size=len(vocab),
            sentinels=tuple(sentinels),
            modes=modes,
            first_special=block[0],
        )
