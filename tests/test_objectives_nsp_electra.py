"""NSP and ELECTRA: hand-computed examples, then their losses on a micro backbone.

The conformance suite of tests/test_objectives.py covers both objectives as registered kinds.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from pipeline.batch import make_batch
from pipeline.config import SizeSpec
from pipeline.example import IGNORE
from pipeline.model.backbone import BackboneSpec, build_language_model, encode, language_model_loss
from pipeline.model.pooling import mean_pool
from pipeline.objectives import example_rng, parse_objective
from pipeline.pretrain.evaluation import objective_loss
from pipeline.pretrain.losses import build_loss
from pipeline.pretrain.losses.replaced_token_detection import generator_size, sampling_generator
from pipeline.tokenization.special_tokens import SpecialIds
from tests.conftest import MICRO

# Ids 0-8 special (</s> = 2, <mask> = 4), text from 9.
SPECIAL = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=9, vocab_size=100, sentinels=(8, 7, 6, 5))
M, EOS = SPECIAL.mask, SPECIAL.eos


class ScriptedRng:
    """Stands in for np.random.Generator: answers each draw, in call order, from a script.

    Each scripted value must have the shape the call asks for (a scalar when no size is given),
    so a test also pins how many draws an objective makes, and in which order.
    """

    def __init__(self, *draws):
        self._draws = [np.asarray(draw) for draw in draws]

    def _next(self, size):
        value = self._draws.pop(0)
        assert value.shape == (() if size is None else size)
        return value[()]

    def random(self, size=None):
        return self._next(size)

    def integers(self, low, high, size=None):
        return self._next(size)


# ------------------------------------------------------------------ examples


def test_nsp_hand_computed_random_segment():
    block, partner = np.arange(10, 18), np.arange(20, 28)
    # is-next draw 0.7 >= 0.5: B is the partner's second half. Input before masking:
    # [10, 11, 12, </s>, 24, 25, 26, 27] (the separator replaces A's last token, 13).
    select = [0.1, 0.9, 0.3, 0.1, 0.05, 0.8, 0.2, 0.6]  # < 0.4 at 0, 2, 4, 6 (3 is </s>: special, never selected)
    action = [0.5, 0.0, 0.85, 0.0, 0.95, 0.0, 0.1, 0.0]  # mask, -, random, -, keep, -, mask, -
    rng = ScriptedRng(0.7, select, action, [50, 51, 52, 53, 54, 55, 56, 57])
    objective = parse_objective({"kind": "nsp", "mask_ratio": 0.4})
    example = objective.example(block, rng, SPECIAL, partner)
    assert example.input_ids.tolist() == [M, 11, 52, EOS, 24, 25, M, 27]
    assert example.labels.tolist() == [10, IGNORE, 12, IGNORE, 24, IGNORE, 26, IGNORE]
    assert example.extras == {"is_next": 0}


def test_nsp_hand_computed_true_next_segment_odd_length():
    block, partner = np.arange(10, 17), np.arange(20, 27)
    # is-next draw 0.2 < 0.5: B is the block's own continuation; A = 3 tokens, B = 4.
    select = [0.9, 0.9, 0.9, 0.9, 0.3, 0.9, 0.9]  # < 0.4 at 4 only
    action = [0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0]  # mask
    rng = ScriptedRng(0.2, select, action, [50] * 7)
    objective = parse_objective({"kind": "nsp", "mask_ratio": 0.4})
    example = objective.example(block, rng, SPECIAL, partner)
    assert example.input_ids.tolist() == [10, 11, EOS, 13, M, 15, 16]
    assert example.labels.tolist() == [IGNORE, IGNORE, IGNORE, IGNORE, 14, IGNORE, IGNORE]
    assert example.extras == {"is_next": 1}


def test_nsp_batch_takes_negatives_from_the_next_block():
    objective = parse_objective({"kind": "nsp", "next_probability": 0.0, "mask_ratio": 0.01})
    blocks = [np.arange(10, 18), np.arange(30, 38), np.arange(50, 58)]
    batch = make_batch(objective, blocks, [example_rng(0, 0, i) for i in range(3)], SPECIAL)
    clean = torch.where(batch.labels != IGNORE, batch.labels, batch.input_ids)
    assert clean.tolist() == [[10, 11, 12, EOS, 34, 35, 36, 37], [30, 31, 32, EOS, 54, 55, 56, 57], [50, 51, 52, EOS, 14, 15, 16, 17]]
    assert batch.extras["is_next"].tolist() == [0, 0, 0]


def test_electra_hand_computed():
    block = np.array([10, 11, 12, 13, EOS, 14])
    select = [0.1, 0.9, 0.3, 0.5, 0.1, 0.2]  # < 0.4 at 0, 2, 5 (4 is </s>)
    action = [0.99, 0.0, 0.95, 0.0, 0.0, 0.9]  # ignored: the generator's input is always <mask>
    rng = ScriptedRng(select, action, [50, 51, 52, 53, 54, 55], 12345)
    objective = parse_objective({"kind": "electra", "mask_ratio": 0.4})
    example = objective.example(block, rng, SPECIAL)
    assert example.input_ids.tolist() == [M, 11, M, 13, EOS, M]
    assert example.labels.tolist() == [10, IGNORE, 12, IGNORE, IGNORE, 14]
    assert example.extras == {"sampling_seed": 12345}


def test_electra_defaults_follow_the_paper():
    params = parse_objective({"kind": "electra"}).params
    assert (params.mask_ratio, params.generator_width_fraction, params.discriminator_weight) == (0.15, 0.25, 50.0)
    assert parse_objective({"kind": "electra"}).loss == "replaced_token_detection"


def test_generator_size_keeps_depth_and_head_dim():
    base = SizeSpec(num_layers=12, hidden_size=768, num_heads=12, num_kv_heads=4, ffn_size=3072)
    assert generator_size(base, 1 / 3) == SizeSpec(num_layers=12, hidden_size=256, num_heads=4, num_kv_heads=1, ffn_size=1024)
    assert generator_size(MICRO, 0.25) == replace(MICRO, hidden_size=16, num_heads=1, num_kv_heads=1, ffn_size=32)


# ------------------------------------------------------------------ losses


def micro_setup(kind: str, special: SpecialIds = SPECIAL, count: int = 4, length: int = 32):
    objective = parse_objective({"kind": kind})
    spec = BackboneSpec.create(MICRO, special, max_length=length)
    model = build_language_model(spec, objective.attention, seed=0)
    rng = np.random.default_rng(0)
    blocks = [rng.integers(special.num_special, special.vocab_size, size=length) for _ in range(count)]
    batch = make_batch(objective, blocks, [example_rng(0, 0, i) for i in range(count)], special)
    return objective, model, build_loss(objective, spec, seed=0), batch


def test_mean_pool_ignores_padding():
    hidden = torch.tensor([[[1.0], [3.0], [100.0]], [[2.0], [4.0], [6.0]]])  # (2, 3, 1)
    assert mean_pool(hidden, torch.tensor([[1, 1, 0], [1, 1, 1]])).tolist() == [[2.0], [4.0]]
    assert mean_pool(hidden, None).squeeze(-1).tolist() == pytest.approx([104 / 3, 4.0])


def test_nsp_loss_is_mlm_plus_nsp():
    _, model, loss_fn, batch = micro_setup("nsp")
    with torch.no_grad():  # the parts, computed directly: two encoder passes instead of the loss's one
        expected_masked_lm = language_model_loss(model, batch)
        scores = loss_fn.next_sentence_head(encode(model, batch).mean(dim=1))  # (B, 2); nothing is padded
        expected_next_sentence = F.cross_entropy(scores, batch.extras["is_next"])
    masked_lm, next_sentence = loss_fn.parts(model, batch)
    torch.testing.assert_close(masked_lm.detach(), expected_masked_lm)
    torch.testing.assert_close(next_sentence.detach(), expected_next_sentence)
    total = loss_fn(model, batch)
    torch.testing.assert_close(total.detach(), expected_masked_lm + expected_next_sentence)
    total.backward()
    assert loss_fn.next_sentence_head.weight.grad.abs().sum() > 0 and model.lm_head.weight.grad.abs().sum() > 0
    assert loss_fn.measures_language_model


def test_rtd_loss_is_deterministic_and_trains_every_part():
    _, model, loss_fn, batch = micro_setup("electra")
    assert not loss_fn.measures_language_model
    loss = loss_fn(model, batch)
    assert torch.isfinite(loss)
    assert torch.equal(loss, loss_fn(model, batch))  # same sampling seeds, same samples, same loss
    _, _, replaced = loss_fn.parts(model, batch)
    reseeded = replace(batch, extras={"sampling_seed": batch.extras["sampling_seed"] + 1})
    assert not torch.equal(replaced, loss_fn.parts(model, reseeded)[2])
    generator_loss, discriminator_loss, _ = loss_fn.parts(model, batch)
    torch.testing.assert_close(loss.detach(), (generator_loss + 50.0 * discriminator_loss).detach())

    loss.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in loss_fn.generator.model.parameters())
    assert loss_fn.detection_head.weight.grad.abs().sum() > 0
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.model.parameters())  # the discriminator
    assert model.lm_head.weight.grad is None  # which is why measures_language_model is False


def test_rtd_targets_mark_exactly_the_changed_tokens():
    # Three text tokens only, so the generator often samples the original token back.
    small = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=9, vocab_size=12, sentinels=(8, 7, 6, 5))
    _, model, loss_fn, batch = micro_setup("electra", small, count=8)
    masked = batch.labels != IGNORE
    with torch.no_grad():
        _, _, replaced = loss_fn.parts(model, batch)
        logits = loss_fn.generator.lm_head(encode(loss_fn.generator, batch)[masked])  # (N, V)
        rng = sampling_generator(batch.extras["sampling_seed"], logits.device)
        sampled = torch.multinomial(logits.float().softmax(dim=-1), 1, generator=rng).squeeze(-1)  # (N,)
    same = sampled == batch.labels[masked]
    assert same.any() and not same.all()
    assert torch.equal(replaced[masked], ~same)
    assert not replaced[~masked].any()  # unmasked positions are never replaced


def test_the_losses_owning_parameters_are_those_the_plan_names():
    """LOSSES_WITH_PARAMETERS (read by the plan without torch) lists exactly the losses that, built,
    hold trainable parameters: what a carried optimizer state cannot cross."""
    from pipeline.objectives import LOSSES_WITH_PARAMETERS, registered_kinds

    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    objectives = [parse_objective({"kind": kind}) for kind in registered_kinds()]
    owning = {objective.loss for objective in objectives if list(build_loss(objective, spec, seed=0).parameters())}
    assert owning == LOSSES_WITH_PARAMETERS


def test_rtd_yardstick_is_the_discriminators_gain_over_the_base_rate():
    """A detection head that always answers the share replaced scores 0 (it learned nothing); one that always
    answers one half scores 100 x (1 − ln 2 / H(p)), below 0; a shared yardstick read through the never-trained
    LM head is not what ELECTRA reports."""
    _, model, loss_fn, batch = micro_setup("electra", count=8)
    assert loss_fn.own_yardstick_name == "replaced_token_detection_gain"
    with torch.no_grad():
        share = float(loss_fn.parts(model, batch)[2].float().mean())  # nothing is padded: every position is real
        loss_fn.detection_head.weight.zero_()
        loss_fn.detection_head.bias.fill_(np.log(share / (1 - share)))
    assert loss_fn.own_evaluation(model, [batch])[1] == pytest.approx(0.0, abs=1e-3)
    base_rate = -(share * np.log(share) + (1 - share) * np.log(1 - share))
    with torch.no_grad():
        loss_fn.detection_head.bias.zero_()
    assert loss_fn.own_evaluation(model, [batch, batch])[1] == pytest.approx(100 * (1 - np.log(2) / base_rate), rel=1e-4)


def test_rtd_held_out_loss_comes_from_the_yardstick_s_own_passes_equal_to_the_objective_loss():
    """ELECTRA's held-out loss and yardstick in one pass over the batches: the loss is what every other
    objective's held-out loss is (each batch's loss weighted by its masked positions), to the digit."""
    objective, model, loss_fn, batch = micro_setup("electra", count=8)
    second = micro_setup("electra", count=3)[3]  # another number of masked positions: the weights matter
    heldout = SimpleNamespace(batches=lambda _objective: iter([batch, second]))
    assert loss_fn.own_evaluation(model, [batch, second])[0] == objective_loss(loss_fn, model, objective, heldout)
