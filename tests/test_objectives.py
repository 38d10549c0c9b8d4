"""Objectives: hand-computed cases, then generic suites over every registered objective.

The generic suites (conformance, no leakage) are parametrized over ``registered_kinds()``
at each objective's canonical parameters, so a new objective file is tested by them with
no change here.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.batch import Batch, make_batch
from pipeline.example import IGNORE
from pipeline.model.backbone import BackboneSpec, build_language_model, encode
from pipeline.objectives import example_rng, parse_objective, registered_kinds
from pipeline.tokenization.special_tokens import SpecialIds, special_token_list
from tests.conftest import MICRO
from tests.test_attention import batch_visibility, one_torch_thread  # noqa: F401 (autouse fixture: one torch thread here too)

# Hand-computed cases use a small fixed layout: ids 0-8 special, text from 9.
HAND = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=9, vocab_size=100, sentinels=(8, 7, 6, 5))
M = HAND.mask


class _Vocabulary:
    """Just enough of a tokenizer for ``SpecialIds.from_tokenizer``."""

    def __init__(self, tokens: list[str]):
        self._vocab = {token: i for i, token in enumerate(tokens)}

    def get_vocab(self) -> dict[str, int]:
        return self._vocab


def tokenizer_special_ids(num_sentinel_tokens: int = 16, vocab_size: int = 100) -> SpecialIds:
    """The special ids a trained tokenizer would give.

    Built through the same ``special_token_list`` / ``from_tokenizer`` pair the real
    tokenizer uses, so every special an objective needs (sentinels, UL2 mode tokens, ...)
    is laid out exactly as in a run. 16 sentinels cover every objective at T=64 (the
    most, 11, is UL2's X-denoiser with mean span 3 at rate 0.5).
    """
    specials = special_token_list(num_sentinel_tokens)
    return SpecialIds.from_tokenizer(_Vocabulary([*specials, *(f"text{i}" for i in range(vocab_size - len(specials)))]))


SPECIAL = tokenizer_special_ids()


class ScriptedRng:
    """Stands in for np.random.Generator with fixed draws, so expectations are hand-computed."""

    def __init__(self, uniforms: list[list[float]], integers: list[int]):
        self._uniforms = [np.array(u) for u in uniforms]
        self._integers = np.array(integers)

    def random(self, shape):
        value = self._uniforms.pop(0)
        assert value.shape == shape
        return value

    def integers(self, low, high, size):
        assert (low, high) == (HAND.num_special, HAND.vocab_size)
        return self._integers


def test_clm_hand_computed():
    block = np.array([10, 11, 12, 13, 14, 15])
    example = parse_objective({"kind": "clm"}).example(block, np.random.default_rng(0), HAND)
    assert example.input_ids.tolist() == [10, 11, 12, 13, 14, 15]
    assert example.labels.tolist() == [11, 12, 13, 14, 15, IGNORE]


def test_mlm_hand_computed_80_10_10():
    block = np.array([10, 11, 12, 13, 14, 15, 16, 2])  # ends with </s>, which is never selected
    select = [0.1, 0.9, 0.3, 0.5, 0.05, 0.8, 0.2, 0.1]  # < 0.4 at positions 0, 2, 4, 6 (and 7: special)
    action = [0.5, 0.0, 0.85, 0.0, 0.95, 0.0, 0.1, 0.0]  # mask, -, random, -, keep, -, mask, -
    rng = ScriptedRng([select, action], integers=[50, 51, 52, 53, 54, 55, 56, 57])
    objective = parse_objective({"kind": "mlm", "mask_ratio": 0.4, "mask_token_fraction": 0.8, "random_token_fraction": 0.1})
    example = objective.example(block, rng, HAND)
    assert example.input_ids.tolist() == [M, 11, 52, 13, 14, 15, M, 2]
    assert example.labels.tolist() == [10, IGNORE, 12, IGNORE, 14, IGNORE, 16, IGNORE]


def test_mlm_all_mask_variant():
    block = np.array([10, 11, 12, 13])
    rng = ScriptedRng([[0.1, 0.9, 0.1, 0.1], [0.95, 0.0, 0.5, 0.99]], integers=[60, 61, 62, 63])
    objective = parse_objective({"kind": "mlm", "mask_ratio": 0.3, "mask_token_fraction": 1.0, "random_token_fraction": 0.0})
    example = objective.example(block, rng, HAND)
    assert example.input_ids.tolist() == [M, 11, M, M]
    assert example.labels.tolist() == [10, IGNORE, 12, 13]


# ------------------------------------------------------------------ generic suites

# Every registered objective at its canonical parameters (the params' defaults).
KINDS = registered_kinds()


def text_blocks(count: int, length: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(SPECIAL.num_special, SPECIAL.vocab_size, size=length) for _ in range(count)]


def rngs(seed: int, count: int, step: int = 0) -> list[np.random.Generator]:
    return [example_rng(seed, step, i) for i in range(count)]


def example_lengths(batch: Batch) -> torch.Tensor:
    """(B,) length of each example before right-padding."""
    if batch.padding_mask is None:
        return torch.full((batch.input_ids.shape[0],), batch.input_ids.shape[1])
    return batch.padding_mask.sum(1)


def loss_fractions(batch: Batch) -> torch.Tensor:
    """(B,) labelled positions / example length, padding excluded."""
    lengths = example_lengths(batch)
    real = torch.arange(batch.input_ids.shape[1])[None, :] < lengths[:, None]  # (B, L)
    return ((batch.labels != IGNORE) & real).sum(1) / lengths


def same_batch(a: Batch, b: Batch) -> bool:
    def same(x, y):
        return (x is None and y is None) or (x is not None and y is not None and x.shape == y.shape and torch.equal(x, y))

    return (
        a.attention == b.attention
        and same(a.input_ids, b.input_ids)
        and same(a.labels, b.labels)
        and same(a.padding_mask, b.padding_mask)
        and same(a.prefix_lengths, b.prefix_lengths)
        and a.extras.keys() == b.extras.keys()
        and all(same(a.extras[key], b.extras[key]) for key in a.extras)
    )


@pytest.mark.parametrize("kind", KINDS)
def test_conformance(kind):
    objective = parse_objective({"kind": kind})
    T, B = 64, 200
    blocks = text_blocks(B, T)
    generators = rngs(0, B)
    states = [g.bit_generator.state for g in generators]
    batch = make_batch(objective, blocks, generators, SPECIAL)
    # An objective is random iff it draws from the RNG it is given (the only source of
    # randomness it may use); this is observed, not declared, so it cannot drift from the code.
    draws = any(g.bit_generator.state != s for g, s in zip(generators, states))

    # Shapes and dtypes: (B, L); an example may be longer than its block (appended targets).
    width = batch.input_ids.shape[1]
    assert batch.input_ids.shape == batch.labels.shape == (B, width) and width >= T
    assert batch.input_ids.dtype == batch.labels.dtype == torch.long
    assert batch.attention == objective.attention

    # Padding: absent when every example has the same length; otherwise right padding
    # (ones then zeros) carrying <pad> and no loss.
    lengths = example_lengths(batch)
    real = torch.arange(width)[None, :] < lengths[:, None]  # (B, L)
    if batch.padding_mask is not None:
        assert batch.padding_mask.dtype == torch.long and batch.padding_mask.shape == (B, width)
        assert torch.equal(batch.padding_mask.bool(), real), "padding mask is not right padding"
        assert int(lengths.min()) > 0 and int(lengths.min()) < width
        assert bool((batch.input_ids[~real] == SPECIAL.pad).all())
        assert bool((batch.labels[~real] == IGNORE).all())

    # Token ranges.
    assert bool(((batch.input_ids >= 0) & (batch.input_ids < SPECIAL.vocab_size)).all())
    valid = batch.labels[batch.labels != IGNORE]
    assert bool(((valid >= 0) & (valid < SPECIAL.vocab_size)).all())

    # Prefix lengths: present iff prefix attention, and a non-empty part of the example.
    if objective.attention == "prefix":
        assert batch.prefix_lengths is not None and batch.prefix_lengths.dtype == torch.long
        assert batch.prefix_lengths.shape == (B,)
        assert bool(((batch.prefix_lengths > 0) & (batch.prefix_lengths <= lengths)).all())
    else:
        assert batch.prefix_lengths is None

    for key, value in batch.extras.items():
        assert value.shape[0] == B, key

    # Loss fraction: per example, labelled positions / example length (padding excluded),
    # averaged over examples; for fixed-length objectives this is simply labelled / all.
    # The average must be known well inside the 0.01 tolerance, and the spread between
    # examples differs a lot (0 for CLM; ~0.29 for prefix LM, whose cut is uniform, so
    # 200 examples give a standard error of 0.02): draw more examples, from other blocks
    # and RNGs, until the standard error is at most 0.002, i.e. 5 of them inside 0.01.
    fractions = loss_fractions(batch)
    needed = int(np.ceil((float(fractions.std()) / 0.002) ** 2))
    if needed > B:
        more = make_batch(objective, text_blocks(needed - B, T, seed=1), rngs(0, needed - B, step=1), SPECIAL)
        fractions = torch.cat([fractions, loss_fractions(more)])
    assert float(fractions.mean()) == pytest.approx(objective.params.expected_loss_fraction(T), abs=0.01)

    # A pure function of (blocks, rngs): same seeds, same batch; other seeds, another
    # batch exactly when the objective draws at all (CLM does not).
    assert same_batch(batch, make_batch(objective, blocks, rngs(0, B), SPECIAL))
    assert same_batch(batch, make_batch(objective, blocks, rngs(1, B), SPECIAL)) is not draws

    # Built on the CPU whatever the default device: a GPU fine-tuning job sets one (NIAH
    # trains on collated batches), and Batch.to moves CPU batches only ("meta" stands in).
    with torch.device("meta"):
        assert same_batch(batch, make_batch(objective, blocks, rngs(0, B), SPECIAL))


def logits_of(model, batch: Batch) -> torch.Tensor:
    with torch.no_grad():
        return model.lm_head(encode(model, batch))  # (B, L, V), under the batch's own attention


def other_text_token(token: int) -> int:
    text = SPECIAL.vocab_size - SPECIAL.num_special
    return SPECIAL.num_special + (int(token) - SPECIAL.num_special + 1) % text


LEAK_KINDS = [k for k in KINDS if parse_objective({"kind": k}).attention in ("causal", "prefix")]
# Example RNG seeds the leakage test runs under: each fixes one set of mask/span/prefix
# choices. Nine, because that is how many it takes for UL2 to draw each of its seven
# denoisers at least once (seed 8 is the first to draw S); for the others it is more cover.
LEAK_SEEDS = range(9)


@pytest.mark.parametrize("kind", LEAK_KINDS)
def test_no_leakage(kind):
    """No position can read a token that its own label depends on.

    For each block position k, block[k] is swapped for another text token and the batch
    rebuilt with the same RNG seed (so the mask/span/prefix choices are identical). I_k:
    input positions whose token changed; L_k: positions whose label changed. Objective
    level: nothing in L_k sees anything in I_k (a position sees itself). Model level (the
    real micro backbone through ``encode``): logits that cannot see I_k are bit-identical,
    and some logit that can see I_k moves, so the equality is not vacuous.
    """
    objective = parse_objective({"kind": kind})
    T = 20
    block = text_blocks(1, T, seed=1)[0]
    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=4 * T)
    model = build_language_model(spec, objective.attention, seed=0).eval()
    for seed in LEAK_SEEDS:
        check_no_leakage(objective, model, block, seed)


def check_no_leakage(objective, model, block: np.ndarray, seed: int) -> None:
    """One seed of :func:`test_no_leakage`."""
    kind = objective.kind

    def build(tokens: np.ndarray) -> Batch:
        return make_batch(objective, [tokens], [example_rng(seed, 0, 0)], SPECIAL)

    base = build(block)
    visible = batch_visibility(base)[0]  # (L, L): [q, k] = q reads k
    base_logits = logits_of(model, base)[0]  # (L, V)
    some_input_changed = False
    for k in range(len(block)):
        changed = block.copy()
        changed[k] = other_text_token(block[k])
        new = build(changed)
        where = f"{kind}, seed {seed}, block[{k}] changed"
        # The example's structure depends only on T and the RNG, never on token values.
        assert new.input_ids.shape == base.input_ids.shape, where
        for a, b in ((new.padding_mask, base.padding_mask), (new.prefix_lengths, base.prefix_lengths)):
            assert (a is None and b is None) or torch.equal(a, b), where

        inputs_changed = (new.input_ids != base.input_ids)[0]  # I_k, (L,)
        labels_changed = (new.labels != base.labels)[0]  # L_k, (L,)
        sees_change = (visible & inputs_changed[None, :]).any(1)  # (L,): q reads some position of I_k
        leaking = (labels_changed & sees_change).nonzero().flatten().tolist()
        assert not leaking, (
            f"{where}: the labels at {leaking} change, and they can read the changed "
            f"input positions {inputs_changed.nonzero().flatten().tolist()}"
        )

        some_input_changed |= bool(inputs_changed.any())
        new_logits = logits_of(model, new)[0]
        assert torch.equal(new_logits[~sees_change], base_logits[~sees_change]), where
        if inputs_changed.any():
            assert not torch.equal(new_logits[sees_change], base_logits[sees_change]), where
    # Not vacuous: some change reached the inputs. (A token may legitimately reach neither
    # inputs nor labels: MEAP can mask block[0], which no position predicts.)
    assert some_input_changed, f"{kind}, seed {seed}: no change to the block reached the inputs"


# ------------------------------------------------------------------ bidirectional

# Bidirectional objectives have no leakage to test (every position sees every input); what
# keeps MLM honest is that it only hides, and only scores, the positions it selected.


def test_mlm_labels_only_selected_positions():
    """Bidirectional sanity check over real RNG draws: MLM may only corrupt what it labels.

    A labelled (selected) position's label is its original token; an unlabelled position
    is passed through unchanged; specials are never selected.
    """
    objective = parse_objective({"kind": "mlm"})
    blocks = text_blocks(200, 64)
    for block in blocks:
        block[::16] = SPECIAL.eos  # some specials to be left alone
    batch = make_batch(objective, blocks, rngs(0, len(blocks)), SPECIAL)
    original = torch.from_numpy(np.stack(blocks))
    labelled = batch.labels != IGNORE
    assert torch.equal(batch.labels[labelled], original[labelled])
    assert torch.equal(batch.input_ids[~labelled], original[~labelled])
    assert not labelled[original < SPECIAL.num_special].any()
    # Of the selected, 80% masked, 10% random, 10% kept; a random token is the original by chance.
    kept_by_chance = 0.1 / (SPECIAL.vocab_size - SPECIAL.num_special)
    assert (batch.input_ids[labelled] == SPECIAL.mask).float().mean() == pytest.approx(0.8, abs=0.03)
    assert (batch.input_ids[labelled] == original[labelled]).float().mean() == pytest.approx(0.1 + kept_by_chance, abs=0.03)
