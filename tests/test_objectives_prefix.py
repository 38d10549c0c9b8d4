"""Prefix LM and MEAP: hand-computed examples, the exact expected loss fraction, MEAP's clean labels."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.batch import make_batch
from pipeline.errors import PipelineError
from pipeline.example import IGNORE
from pipeline.objectives import example_rng, parse_objective
from pipeline.tokenization.special_tokens import SpecialIds

# Ids 0-8 special (pad, bos, eos, unk, mask, then four sentinels), text from 9.
SPECIAL = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=9, vocab_size=100, sentinels=(8, 7, 6, 5))
M, X = SPECIAL.mask, IGNORE


class ScriptedRng:
    """Stands in for np.random.Generator: each call must be the next scripted one, and returns its value.

    The script is a list of (method, arguments, value), where arguments is the lone
    argument itself for one-argument methods; a call with other arguments, or one too
    many, fails the test, so the expected draws are part of the hand computation.
    """

    def __init__(self, *script):
        self._script = list(script)

    def _next(self, method, *arguments):
        assert self._script, f"unscripted call {method}{arguments}"
        expected_method, expected_arguments, value = self._script.pop(0)
        assert (method, arguments[0] if len(arguments) == 1 else arguments) == (expected_method, expected_arguments)
        return value

    def random(self, shape):
        return np.asarray(self._next("random", shape), dtype=np.float64)

    def integers(self, low, high, size=None):
        value = self._next("integers", low, high, size)
        return value if size is None else np.asarray(value, dtype=np.int64)

    def permutation(self, n):
        return np.asarray(self._next("permutation", n), dtype=np.int64)

    def choice(self, a, p=None):
        assert p is not None and np.isclose(np.sum(p), 1)
        return self._next("choice", a)

    def assert_done(self):
        assert not self._script, f"scripted draws not made: {self._script}"


# ------------------------------------------------------------------ prefix LM


def test_prefix_lm_hand_computed():
    block = np.array([10, 11, 12, 13, 14, 15, 16, 17])
    rng = ScriptedRng(("integers", (1, 8, None), 3))  # the cut is uniform on 1..T-1; it lands after 3 tokens
    example = parse_objective({"kind": "prefix_lm"}).example(block, rng, SPECIAL)
    rng.assert_done()
    assert example.input_ids.tolist() == [10, 11, 12, 13, 14, 15, 16, 17]
    assert example.prefix_length == 3
    # The last prefix position predicts the first suffix token; no loss inside the prefix.
    assert example.labels.tolist() == [X, X, 13, 14, 15, 16, 17, X]


def test_prefix_lm_fraction_bounds_hand_computed():
    block = np.array([10, 11, 12, 13, 14, 15, 16, 17])
    objective = parse_objective({"kind": "prefix_lm", "min_prefix_fraction": 0.25, "max_prefix_fraction": 0.5})
    rng = ScriptedRng(("integers", (2, 5, None), 4))  # 0.25*8 = 2 .. 0.5*8 = 4 inclusive
    example = objective.example(block, rng, SPECIAL)
    rng.assert_done()
    assert example.prefix_length == 4
    assert example.labels.tolist() == [X, X, X, 14, 15, 16, 17, X]


@pytest.mark.parametrize(
    ("bounds", "expected"),
    [
        ({}, (8 - 4) / 8),
        ({"min_prefix_fraction": 0.25, "max_prefix_fraction": 0.5}, (8 - 3) / 8),
        ({"min_prefix_fraction": 0.75}, (8 - 6.5) / 8),
    ],
)
def test_prefix_lm_expected_loss_fraction_is_exact(bounds, expected):
    """The average of the labelled share over every cut the range allows, each equally likely."""
    objective = parse_objective({"kind": "prefix_lm", **bounds})
    T = 8
    lo, hi = objective.params.split_range(T)
    shares = []
    for split in range(lo, hi + 1):
        example = objective.example(np.arange(10, 10 + T), ScriptedRng(("integers", (lo, hi + 1, None), split)), SPECIAL)
        shares.append(float((example.labels != IGNORE).mean()))
    assert np.mean(shares) == pytest.approx(expected)
    assert objective.params.expected_loss_fraction(T) == pytest.approx(expected)


def test_prefix_lm_rejects_bad_bounds():
    with pytest.raises(PipelineError, match="min_prefix_fraction"):
        parse_objective({"kind": "prefix_lm", "min_prefix_fraction": 0.6, "max_prefix_fraction": 0.4})
    objective = parse_objective({"kind": "prefix_lm", "min_prefix_fraction": 0.55, "max_prefix_fraction": 0.7})
    with pytest.raises(ValueError, match="prefix and suffix"):
        objective.example(np.arange(10, 14), np.random.default_rng(0), SPECIAL)  # no integer cut in [2.2, 2.8]


# ------------------------------------------------------------------ MEAP


def test_meap_hand_computed():
    block = np.array([10, 11, 12, 13, 14, 15, 16, 2])  # ends with </s>, which is never masked
    select = [0.1, 0.9, 0.9, 0.05, 0.9, 0.9, 0.1, 0.1]  # < 0.15 at 0, 3, 6 (and 7, a special)
    action = [0.99, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0]  # all selected become <mask>, whatever the draw
    rng = ScriptedRng(("random", (8,), select), ("random", (8,), action), ("integers", (9, 100, (8,)), [50] * 8))
    example = parse_objective({"kind": "meap"}).example(block, rng, SPECIAL)
    rng.assert_done()
    assert example.input_ids.tolist() == [M, 11, 12, M, 14, 15, M, 2]
    # Labels are CLM's on the clean block: position 2 still predicts 13 although 13 is masked in the input.
    assert example.labels.tolist() == [11, 12, 13, 14, 15, 16, 2, X]
    assert example.prefix_length == 0


def test_meap_masks_text_only_and_keeps_clean_next_token_labels():
    objective = parse_objective({"kind": "meap"})
    assert objective.attention == "causal"
    T, B = 64, 200
    data = np.random.default_rng(0)
    blocks = [data.integers(SPECIAL.num_special, SPECIAL.vocab_size, size=T) for _ in range(B)]
    for block in blocks:
        block[::16] = SPECIAL.eos
    batch = make_batch(objective, blocks, [example_rng(0, 0, i) for i in range(B)], SPECIAL)
    clean = np.stack(blocks)
    inputs, labels = batch.input_ids.numpy(), batch.labels.numpy()
    assert batch.padding_mask is None and inputs.shape == (B, T)
    assert (labels[:, :-1] == clean[:, 1:]).all() and (labels[:, -1] == IGNORE).all()
    changed = inputs != clean
    assert (inputs[changed] == SPECIAL.mask).all()
    assert not changed[clean < SPECIAL.num_special].any()
    assert changed[clean >= SPECIAL.num_special].mean() == pytest.approx(0.15, abs=0.01)
