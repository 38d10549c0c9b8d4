"""T5 span corruption and UL2: T5's length bookkeeping, hand-computed examples, sentinel order,
content-independent lengths, and the mode tokens."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.errors import PipelineError
from pipeline.example import IGNORE
from pipeline.objectives import example_rng, parse_objective
from pipeline.objectives.span_corruption import random_spans_noise_mask, t5_input_and_target_lengths
from pipeline.objectives.ul2 import DENOISERS
from pipeline.tokenization.special_tokens import MODE_TOKENS, NLG, NLU, S2S, SpecialIds, special_token_list
from tests.test_objectives_prefix import SPECIAL, ScriptedRng

X = IGNORE
# The tokenizer layout: pad bos eos unk mask <nlu> <nlg> <s2s>, then sentinels 15..0 (<extra_id_0> = 23), text from 24.
WITH_MODES = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=24, vocab_size=100, sentinels=tuple(range(23, 7, -1)), modes=(5, 6, 7))
S0 = WITH_MODES.sentinels[0]


def text_blocks(count: int, length: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(WITH_MODES.num_special, WITH_MODES.vocab_size, size=length) for _ in range(count)]


# ------------------------------------------------------------------ T5 bookkeeping


@pytest.mark.parametrize(
    ("inputs_length", "noise_density", "expected"),
    [(128, 0.15, (141, 29)), (512, 0.15, (568, 114)), (512, 0.5, (766, 512))],  # the last takes T5's density-0.5 adjustment
)
def test_t5_input_and_target_lengths(inputs_length, noise_density, expected):
    assert t5_input_and_target_lengths(inputs_length, noise_density, 3.0) == expected


def test_t5_raw_length_gives_t5_input_and_target_lengths_here():
    """141 raw tokens corrupt to T5's 128 inputs + 29 targets: the same counting as T5's."""
    objective = parse_objective({"kind": "span_corruption"})
    example = objective.example(text_blocks(1, 141)[0], example_rng(0, 0, 0), WITH_MODES)
    assert example.prefix_length == 128
    assert len(example.input_ids) == 128 + 29
    assert int((example.labels != IGNORE).sum()) == 29
    assert objective.params.expected_loss_fraction(141) == 29 / (128 + 29)


# ------------------------------------------------------------------ span corruption


def test_span_corruption_hand_computed():
    # T=10, density 0.3 -> 3 noise tokens, mean span 1.5 -> 2 spans; 7 non-noise tokens in 2 spans.
    block = np.array([10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
    rng = ScriptedRng(
        ("permutation", 2, [1, 0]),  # noise: a span starts after item 1 of 3 (the gap holding 0) -> lengths [2, 1]
        ("permutation", 6, [3, 5, 0, 1, 2, 4]),  # non-noise: a span starts after item 2 of 7 -> lengths [3, 4]
    )
    objective = parse_objective({"kind": "span_corruption", "noise_density": 0.3, "mean_noise_span_length": 1.5})
    example = objective.example(block, rng, SPECIAL)
    rng.assert_done()
    # Spans: non-noise 10 11 12 | noise 13 14 | non-noise 15 16 17 18 | noise 19. Sentinels 8 (<extra_id_0>), 7 (<extra_id_1>).
    inputs = [10, 11, 12, 8, 15, 16, 17, 18, 7, 2]
    targets = [8, 13, 14, 7, 19, 2]
    assert example.input_ids.tolist() == inputs + targets
    assert example.prefix_length == 10
    assert example.labels.tolist() == [X, X, X, X, X, X, X, X, X, 8, 13, 14, 7, 19, 2, X]
    assert objective.params.expected_loss_fraction(10) == 6 / 16


def test_noise_mask_follows_t5():
    """Exactly round(T * density) noise tokens in n spans, alternating, non-noise first, noise last."""
    for seed in range(50):
        noise = random_spans_noise_mask(64, 0.15, 3.0, np.random.default_rng(seed))
        starts = np.flatnonzero(np.diff(noise.astype(int)) == 1)
        assert noise.sum() == 10 and len(starts) == 3  # round(9.6) tokens, round(10 / 3) spans
        assert not noise[0] and noise[-1]


def test_sentinels_in_order_and_corruption_is_invertible():
    objective = parse_objective({"kind": "span_corruption"})
    sentinels = list(WITH_MODES.sentinels)
    for i, block in enumerate(text_blocks(20, 64)):
        example = objective.example(block, example_rng(0, 0, i), WITH_MODES)
        inputs = example.input_ids[: example.prefix_length].tolist()
        targets = example.input_ids[example.prefix_length :].tolist()
        assert inputs[-1] == targets[-1] == WITH_MODES.eos
        assert [t for t in inputs if t in sentinels] == sentinels[:3]  # <extra_id_0>, <extra_id_1>, ...: ids count down
        assert [t for t in targets if t in sentinels] == sentinels[:3]
        # Undo it: each input sentinel is replaced by the tokens after the same sentinel in the targets.
        spans = np.split(np.array(targets[:-1]), [j for j, t in enumerate(targets[:-1]) if t in sentinels][1:])
        restored = [tok for t in inputs[:-1] for tok in (spans[sentinels.index(t)][1:].tolist() if t in sentinels else [t])]
        assert restored == block.tolist()


def test_span_corruption_layout_depends_only_on_length():
    """Lengths, prefix length and labelled positions are the same for any content and any seed."""
    objective = parse_objective({"kind": "span_corruption"})
    blocks = text_blocks(2, 64) + [np.full(64, 50)]
    layouts = set()
    for i, block in enumerate(blocks):
        for seed in range(3):
            example = objective.example(block, example_rng(seed, 0, i), WITH_MODES)
            layouts.add((len(example.input_ids), example.prefix_length, tuple(np.flatnonzero(example.labels != IGNORE))))
    assert len(layouts) == 1
    length, prefix_length, labelled = layouts.pop()
    assert (length, prefix_length, len(labelled)) == (72, 58, 14)  # 64 - 10 + 3 + 1 inputs, 10 + 3 + 1 targets
    assert labelled == tuple(range(57, 71))  # the last input position through the second-to-last


def test_too_few_sentinels_is_a_clear_error():
    objective = parse_objective({"kind": "span_corruption"})
    # T=200: round(30 / 3) = 10 spans, 4 sentinels.
    with pytest.raises(ValueError, match=r"needs 10 sentinel tokens .* has 4: raise tokenizer.num_sentinel_tokens to at least 10"):
        objective.example(text_blocks(1, 200)[0], example_rng(0, 0, 0), SPECIAL)


def test_span_corruption_rejects_bad_params():
    with pytest.raises(PipelineError, match="noise_density"):
        parse_objective({"kind": "span_corruption", "noise_density": 1.0})
    with pytest.raises(PipelineError, match="mean_noise_span_length"):
        parse_objective({"kind": "span_corruption", "mean_noise_span_length": 0.5})


# ------------------------------------------------------------------ mode tokens


def test_mode_tokens_sit_between_mask_and_sentinels():
    assert special_token_list(2) == ["<pad>", "<s>", "</s>", "<unk>", "<mask>", NLU, NLG, S2S, "<extra_id_1>", "<extra_id_0>"]

    class Vocabulary:
        def __init__(self, tokens):
            self.tokens = tokens

        def get_vocab(self):
            return {token: i for i, token in enumerate(self.tokens)}

    special = SpecialIds.from_tokenizer(Vocabulary([*special_token_list(2), "a", "b"]))
    assert (special.modes, special.sentinels, special.num_special) == ((5, 6, 7), (9, 8), 10)
    assert [special.mode(token) for token in MODE_TOKENS] == [5, 6, 7]
    # A tokenizer trained before the mode tokens existed: nothing text is counted as special.
    legacy = SpecialIds.from_tokenizer(Vocabulary(["<pad>", "<s>", "</s>", "<unk>", "<mask>", "<extra_id_1>", "<extra_id_0>", "a"]))
    assert (legacy.modes, legacy.sentinels, legacy.num_special) == ((), (6, 5), 7)
    with pytest.raises(ValueError, match="no UL2 mode tokens"):
        legacy.mode(NLU)


# ------------------------------------------------------------------ UL2


def test_ul2_extreme_denoiser_hand_computed():
    # X(3, 0.5) at T=8: 4 noise tokens in round(4/3) = 1 span, so the only draws are trivial permutations.
    block = np.array([30, 31, 32, 33, 34, 35, 36, 37])
    rng = ScriptedRng(("choice", 7, 3), ("permutation", 3, [0, 1, 2]), ("permutation", 3, [2, 0, 1]))
    example = parse_objective({"kind": "ul2"}).example(block, rng, WITH_MODES)
    rng.assert_done()
    # <nlg> 30 31 32 33 <extra_id_0> </s> | <extra_id_0> 34 35 36 37 </s>
    assert example.input_ids.tolist() == [6, 30, 31, 32, 33, S0, 2, S0, 34, 35, 36, 37, 2]
    assert example.prefix_length == 7
    assert example.labels.tolist() == [X, X, X, X, X, X, S0, 34, 35, 36, 37, 2, X]


def test_ul2_sequential_denoiser_hand_computed():
    block = np.array([30, 31, 32, 33, 34, 35, 36, 37])
    rng = ScriptedRng(("choice", 7, 2), ("integers", (1, 8, None), 3))
    example = parse_objective({"kind": "ul2"}).example(block, rng, WITH_MODES)
    rng.assert_done()
    assert example.input_ids.tolist() == [7, 30, 31, 32, 33, 34, 35, 36, 37]  # <s2s> then the block
    assert example.prefix_length == 4  # the mode token and a 3-token prefix
    assert example.labels.tolist() == [X, X, X, 33, 34, 35, 36, 37, X]


def test_ul2_regular_denoiser_hand_computed():
    # R(3, 0.15) at T=10: round(1.5) = 2 noise tokens (half to even), max(1, round(2/3)) = 1 span.
    block = np.array([30, 31, 32, 33, 34, 35, 36, 37, 38, 39])
    rng = ScriptedRng(("choice", 7, 0), ("permutation", 1, [0]), ("permutation", 7, [0, 1, 2, 3, 4, 5, 6]))
    example = parse_objective({"kind": "ul2"}).example(block, rng, WITH_MODES)
    rng.assert_done()
    # <nlu> 30 .. 37 <extra_id_0> </s> | <extra_id_0> 38 39 </s>
    assert example.input_ids.tolist() == [5, 30, 31, 32, 33, 34, 35, 36, 37, S0, 2, S0, 38, 39, 2]
    assert example.prefix_length == 11
    assert example.labels.tolist() == [X, X, X, X, X, X, X, X, X, X, S0, 38, 39, 2, X]


def test_ul2_modes_and_lengths_match_the_denoiser():
    """Each example starts with its family's mode token and has that denoiser's length."""
    objective = parse_objective({"kind": "ul2"})
    T = 64
    lengths = {NLU: {73, 69}, S2S: {65}, NLG: {89, 75, 69}}  # T+1 plus 2n+2 for n spans (see expected fraction below)
    seen = {token: 0 for token in MODE_TOKENS}
    for i, block in enumerate(text_blocks(300, T)):
        example = objective.example(block, example_rng(0, 0, i), WITH_MODES)
        mode = MODE_TOKENS[WITH_MODES.modes.index(int(example.input_ids[0]))]
        assert len(example.input_ids) in lengths[mode] and example.labels[0] == IGNORE
        seen[mode] += 1
    # Uniform over 7 denoisers: 2/7 R, 1/7 S, 4/7 X.
    assert seen[NLU] / 300 == pytest.approx(2 / 7, abs=0.06)
    assert seen[S2S] / 300 == pytest.approx(1 / 7, abs=0.06)
    assert seen[NLG] / 300 == pytest.approx(4 / 7, abs=0.06)


def test_ul2_expected_loss_fraction_at_64():
    """Mean over the 7 denoisers of labelled / example length (mode token included), counted by hand."""
    per_denoiser = [14 / 73, 12 / 69, 32 / 65, 44 / 89, 37 / 75, 12 / 69, 34 / 69]  # R3 R8 S X3 X8 X64(.15) X64(.5)
    assert [d.name for d in DENOISERS] == ["R(3, 0.15)", "R(8, 0.15)", "S", "X(3, 0.5)", "X(8, 0.5)", "X(64, 0.15)", "X(64, 0.5)"]
    assert parse_objective({"kind": "ul2"}).params.expected_loss_fraction(64) == pytest.approx(np.mean(per_denoiser))
    only_r3 = parse_objective({"kind": "ul2", "weights": [1, 0, 0, 0, 0, 0, 0]}).params
    assert only_r3.expected_loss_fraction(64) == pytest.approx(14 / 73)
    assert only_r3.sentinels_needed(64) == 3 and parse_objective({"kind": "ul2"}).params.sentinels_needed(64) == 11


def test_ul2_needs_mode_tokens_and_enough_sentinels():
    objective = parse_objective({"kind": "ul2"})
    block = text_blocks(1, 64)[0]
    no_modes = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=21, vocab_size=100, sentinels=tuple(range(20, 4, -1)))
    with pytest.raises(ValueError, match="no UL2 mode tokens"):
        objective.example(block, example_rng(0, 0, 0), no_modes)
    # X(3, 0.5) at T=64 makes 11 spans; the check is made on every example, whichever denoiser is drawn.
    four_sentinels = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=12, vocab_size=100, sentinels=(11, 10, 9, 8), modes=(5, 6, 7))
    with pytest.raises(ValueError, match="needs 11 sentinel tokens"):
        objective.example(block, example_rng(0, 0, 0), four_sentinels)


def test_ul2_rejects_bad_weights():
    with pytest.raises(PipelineError, match="weights needs 7 values"):
        parse_objective({"kind": "ul2", "weights": [1, 1]})
    with pytest.raises(PipelineError, match="positive sum"):
        parse_objective({"kind": "ul2", "weights": [0, 0, 0, 0, 0, 0, 0]})
