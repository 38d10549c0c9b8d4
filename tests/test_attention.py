"""Attention patterns: what transformers builds (and runs) equals the pattern written by hand.

The objectives only say "causal", "bidirectional" or "prefix"; the backbone turns that
into masks through transformers' own code paths (Llama's causal mask, EuroBERT's
bidirectional mask, our ``prefix_attention_mask``), some of which never materialise a
mask at all (sdpa ``is_causal=True``, or no bias for full attention). So we check twice:
(a) every mask transformers materialises equals the explicit boolean matrix below;
(b) the real micro model under ``encode`` computes the same hidden states as the same
weights run through eager attention with the explicit matrix as an additive mask.
``visibility`` is also the reference the objective leakage tests use.
"""

from __future__ import annotations

import copy

import pytest
import torch
from transformers.masking_utils import create_bidirectional_mask, create_causal_mask

from pipeline.batch import Batch
from pipeline.example import IGNORE
from pipeline.model.attention import prefix_attention_mask, split_sample_mask
from pipeline.model.backbone import BackboneSpec, build_language_model, encode
from pipeline.tokenization.special_tokens import SpecialIds
from tests.conftest import MICRO

SPECIAL = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=9, vocab_size=100, sentinels=(8, 7, 6, 5))
ATTENTIONS = ("causal", "bidirectional", "prefix")


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """The micro model's matmuls are tiny: handing them to worker threads costs more than it
    saves (10x slower on a busy 2-core machine). Restored afterwards for other modules."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def visibility(
    attention: str, length: int, padding_mask: torch.Tensor | None, prefix_lengths: torch.Tensor | None, batch_size: int
) -> torch.Tensor:
    """(B, L, L) bool, ``[b, q, k]`` = query position q may read key position k.

    causal: k <= q; bidirectional: every k; prefix: k <= q or k < prefix_lengths[b];
    in every case a padded key is invisible (padded queries still see real keys; their
    outputs are never used). A position always sees itself unless it is padding.
    """
    q = torch.arange(length)[:, None]
    k = torch.arange(length)[None, :]
    if attention == "causal":
        pattern = (k <= q).expand(batch_size, length, length)
    elif attention == "bidirectional":
        pattern = torch.ones(batch_size, length, length, dtype=torch.bool)
    elif attention == "prefix":
        pattern = (k <= q)[None] | (k[None] < prefix_lengths[:, None, None])
    else:
        raise ValueError(attention)
    if padding_mask is not None:
        pattern = pattern & padding_mask.bool()[:, None, :]
    return pattern


def batch_visibility(batch: Batch) -> torch.Tensor:
    batch_size, length = batch.input_ids.shape
    return visibility(batch.attention, length, batch.padding_mask, batch.prefix_lengths, batch_size)


# ------------------------------------------------------------------ fixtures

LENGTHS = [10, 7, 4]  # three rows, right-padded to 10 when `padded`
PREFIXES = [3, 7, 1]  # row 1's prefix is the whole example: fully bidirectional


def make_batch(attention: str, padded: bool) -> Batch:
    generator = torch.Generator().manual_seed(0)
    width = max(LENGTHS)
    input_ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (len(LENGTHS), width), generator=generator)
    padding_mask = None
    if padded:
        padding_mask = (torch.arange(width)[None, :] < torch.tensor(LENGTHS)[:, None]).long()
        input_ids = input_ids.masked_fill(padding_mask == 0, SPECIAL.pad)
    prefix_lengths = torch.tensor(PREFIXES) if attention == "prefix" else None
    labels = torch.full_like(input_ids, IGNORE)
    return Batch(input_ids, labels, attention, padding_mask, prefix_lengths)


def micro_model(attention: str):
    """The real backbone class for ``attention`` (Llama or EuroBERT), as ``build_language_model`` makes it: sdpa."""
    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    return build_language_model(spec, attention, seed=0).eval()


def real_queries(batch: Batch) -> torch.Tensor:
    """(B, L) bool: positions whose outputs anything downstream reads."""
    return torch.ones_like(batch.input_ids, dtype=torch.bool) if batch.padding_mask is None else batch.padding_mask.bool()


# ------------------------------------------------------------------ (a) masks


def test_visibility_reference_by_hand():
    """The reference itself, on one tiny case drawn out cell by cell."""
    vis = visibility("prefix", 5, torch.tensor([[1, 1, 1, 1, 0]]), torch.tensor([2]), batch_size=1)[0].int()
    assert vis.tolist() == [
        [1, 1, 0, 0, 0],  # q=0 sees the whole prefix {0, 1}
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],  # after the prefix: causal
        [1, 1, 1, 1, 0],
        [1, 1, 1, 1, 0],  # padded key 4 is invisible, even to itself
    ]


@pytest.mark.parametrize("padded", [False, True], ids=["unpadded", "padded"])
@pytest.mark.parametrize("attention", ATTENTIONS)
def test_transformers_mask_equals_explicit(attention, padded):
    """The 4-D boolean mask transformers builds for each pattern equals the explicit one.

    Prefix: exactly the call ``encode`` makes. Causal/bidirectional: ``LlamaModel`` /
    ``EuroBertModel`` call create_causal_mask / create_bidirectional_mask and may skip
    materialising; forcing materialisation shows which pattern they stand for (what the
    skip actually runs is covered by the model-level test below).
    """
    batch = make_batch(attention, padded)
    model = micro_model(attention)
    embeds = model.model.embed_tokens(batch.input_ids)  # (B, L, H)
    position_ids = torch.arange(batch.input_ids.shape[1])[None]
    if attention == "prefix":
        mask = prefix_attention_mask(model.config, embeds, batch.prefix_lengths, batch.padding_mask)
    elif attention == "causal":
        mask = create_causal_mask(model.config, embeds, batch.padding_mask, None, position_ids, allow_is_causal_skip=False)
    else:
        mask = create_bidirectional_mask(model.config, embeds, batch.padding_mask, allow_is_bidirectional_skip=False)
    assert mask.dtype == torch.bool and mask.shape == (len(LENGTHS), 1, max(LENGTHS), max(LENGTHS))
    assert torch.equal(mask[:, 0], batch_visibility(batch))


def test_what_llama_and_eurobert_skip_is_what_we_think():
    """Without padding the skips fire: Llama relies on sdpa's is_causal, EuroBERT on no mask at all."""
    for attention, build in (("causal", create_causal_mask), ("bidirectional", create_bidirectional_mask)):
        model = micro_model(attention)
        embeds = model.model.embed_tokens(make_batch(attention, padded=False).input_ids)
        if build is create_causal_mask:
            assert build(model.config, embeds, None, None, torch.arange(embeds.shape[1])[None]) is None
        else:
            assert build(model.config, embeds, None) is None


# ------------------------------------------------------------------ (b) the real model


def explicit_hidden(model, batch: Batch) -> torch.Tensor:
    """``model``'s weights through eager attention with the explicit mask added: 0 where visible, -inf elsewhere."""
    eager = copy.deepcopy(model)
    eager.config._attn_implementation = "eager"  # read at every forward: this switches the attention kernel
    visible = batch_visibility(batch)  # (B, L, L)
    additive = torch.zeros(visible.shape).masked_fill(~visible, float("-inf"))[:, None]  # (B, 1, L, L)
    # Every row sees at least key 0 (always real), so no softmax row is all -inf.
    with torch.no_grad():
        return eager.model(input_ids=batch.input_ids, attention_mask=additive).last_hidden_state  # a 4-D mask is used as-is


@pytest.mark.parametrize("padded", [False, True], ids=["unpadded", "padded"])
@pytest.mark.parametrize("attention", ATTENTIONS)
def test_encode_runs_the_explicit_pattern(attention, padded):
    """``encode`` (sdpa; transformers' own masks, or its mask skips) = eager + explicit mask, at real positions."""
    batch = make_batch(attention, padded)
    model = micro_model(attention)
    with torch.no_grad():
        hidden = encode(model, batch)
    real = real_queries(batch)
    torch.testing.assert_close(hidden[real], explicit_hidden(model, batch)[real])

    # The comparison can tell patterns apart: under any other pattern some real position differs.
    for other in ATTENTIONS:
        if other == attention:
            continue
        wrong = Batch(batch.input_ids, batch.labels, other, batch.padding_mask, torch.tensor(PREFIXES) if other == "prefix" else None)
        assert not torch.allclose(hidden[real], explicit_hidden(model, wrong)[real], atol=1e-4), other


@pytest.mark.parametrize("attention", ["causal", "bidirectional"])
def test_a_row_cut_in_two_samples_is_those_samples_encoded_alone(attention: str) -> None:
    """The study's samples (pipeline.pretrain.samples): a row cut at s encodes as its two pieces
    would, each alone from position 0, for both backbone classes."""
    model = micro_model(attention)
    generator = torch.Generator().manual_seed(1)
    input_ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 32), generator=generator)
    starts = torch.tensor([12, 20])
    labels = torch.full_like(input_ids, IGNORE)
    with torch.no_grad():
        cut = encode(model, Batch(input_ids, labels, attention, segment_starts=starts))
        for row, start in enumerate(starts.tolist()):
            for piece in (slice(0, start), slice(start, 32)):
                alone = encode(model, Batch(input_ids[row : row + 1, piece], labels[row : row + 1, piece], attention))
                torch.testing.assert_close(cut[row : row + 1, piece], alone, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attention", ["causal", "bidirectional"])
def test_flex_attention_encodes_split_samples_as_sdpa_does(attention: str) -> None:
    """pretraining.compute.attention: flex. The block mask, through transformers' FlexAttention
    path, gives the dense mask's hidden states (forward only: FlexAttention has no backward on
    the CPU, which is why flex is a GPU setting)."""
    model = micro_model(attention)
    generator = torch.Generator().manual_seed(2)
    input_ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 32), generator=generator)
    batch = Batch(input_ids, torch.full_like(input_ids, IGNORE), attention, segment_starts=torch.tensor([12, 20]))
    with torch.no_grad():
        dense = encode(model, batch)
        model.set_attn_implementation("flex_attention")
        flex = encode(model, batch)
    torch.testing.assert_close(flex, dense, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_the_block_mask_skips_the_tiles_between_two_samples(causal: bool) -> None:
    """A 256-token row cut at 128: of FlexAttention's four 128 x 128 tiles, the two that pair one
    sample's queries with the other's keys are never computed (the work SDPA's dense mask does)."""
    block_mask = split_sample_mask(torch.tensor([128]), 256, causal=causal, flex=True)
    assert block_mask.to_dense()[0, 0].tolist() == [[1, 0], [0, 1]]  # (query tile, key tile): computed or not
    full = block_mask.full_kv_num_blocks[0, 0].tolist()  # tiles needing no mask at all: both, bidirectionally
    assert full == ([0, 0] if causal else [1, 1])
