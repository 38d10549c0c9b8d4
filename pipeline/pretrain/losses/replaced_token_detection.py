"""ELECTRA's replaced-token detection loss (Clark et al., 2020).

A small generator (an ``EuroBertForMaskedLM`` owned by this module) is trained by MLM
on the masked input; at every masked position a token is sampled from its output
distribution, and the discriminator (the backbone being pretrained, plus a linear
detection head owned here) reads the original block with those samples in place and
predicts, at every real position, whether the token there differs from the original.
A sample that happens to equal the original counts as "original", as in ELECTRA.

    loss = generator MLM loss + discriminator_weight * discriminator BCE

The sample is discrete, so no gradient flows from the discriminator into the generator
(ELECTRA trains the generator by maximum likelihood, not adversarially). The exported
backbone is the discriminator; its LM head is never trained, which is why this loss
sets ``measures_language_model = False`` and is measured on held-out blocks by what it
trains instead: the discriminator's detection gain over the base rate.

The generator has the discriminator's depth and head width and ``generator_width_fraction``
of its hidden and FFN widths (ELECTRA: 1/4 to 1/3). ELECTRA also ties the generator's
token embeddings to the discriminator's; at different widths that needs a projection,
so here the generator keeps its own embeddings and the backbone is exactly the
architecture every other objective trains.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel

from pipeline.batch import Batch
from pipeline.config import SizeSpec
from pipeline.example import IGNORE
from pipeline.model.backbone import BackboneSpec, build_language_model, encode, labelled_logits
from pipeline.objectives import Objective
from pipeline.pretrain.losses.base import PretrainingLoss, register_loss


def generator_size(size: SizeSpec, width_fraction: float) -> SizeSpec:
    """The discriminator's size narrowed to ``width_fraction``: same depth and head dim, fewer heads.

    At least one head; grouped-query attention keeps (as near as divides) the
    discriminator's queries per key/value head.
    """
    head_dim = size.hidden_size // size.num_heads
    num_heads = max(1, round(size.num_heads * width_fraction))
    queries_per_kv_head = size.num_heads // size.num_kv_heads
    num_kv_heads = math.gcd(num_heads, max(1, num_heads // queries_per_kv_head))
    hidden_size = num_heads * head_dim
    return SizeSpec(
        num_layers=size.num_layers,
        hidden_size=hidden_size,
        num_heads=num_heads,
        num_kv_heads=num_kv_heads,
        ffn_size=max(1, round(size.ffn_size * hidden_size / size.hidden_size)),
    )


def sampling_generator(seeds: torch.Tensor, device: torch.device) -> torch.Generator:
    """A torch RNG for one batch's samples, a pure function of its examples' ``sampling_seed`` (B,)."""
    state = np.random.SeedSequence(seeds.tolist()).generate_state(1, np.uint64)[0]
    return torch.Generator(device=device).manual_seed(int(state))


def real_positions(batch: Batch) -> torch.Tensor:
    """(B, L) bool: the positions holding text, not padding; the discriminator answers at each."""
    return torch.ones_like(batch.input_ids, dtype=torch.bool) if batch.padding_mask is None else batch.padding_mask.bool()


@register_loss("replaced_token_detection")
class ReplacedTokenDetectionLoss(PretrainingLoss):
    measures_language_model = False
    own_yardstick_name = "replaced_token_detection_gain"

    def __init__(self, backbone: BackboneSpec, objective: Objective, seed: int):
        super().__init__(backbone, objective, seed)
        params = objective.params
        self.discriminator_weight = params.discriminator_weight
        # The generator is this harness's backbone at a fraction of the width, whatever the discriminator's family.
        spec = replace(backbone, size=generator_size(backbone.size, params.generator_width_fraction), architecture=None)
        # build_language_model seeds torch's RNG, so the detection head after it is fixed by the seed too.
        self.generator = build_language_model(spec, "bidirectional", seed)
        self.detection_head = nn.Linear(backbone.size.hidden_size, 1)

    def parts(self, model: PreTrainedModel, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(generator MLM loss, discriminator BCE, replaced (B, L) bool: the discriminator's targets)."""
        masked = batch.labels != IGNORE  # (B, L); every labelled position is <mask> in the input
        logits, originals = labelled_logits(
            self.generator, encode(self.generator, batch), batch.labels, self.head != "dense"
        )  # (N, V), (N,)
        generator_loss = F.cross_entropy(logits, originals)
        with torch.no_grad():
            rng = sampling_generator(batch.extras["sampling_seed"], logits.device)
            sampled = torch.multinomial(logits.softmax(dim=-1), 1, generator=rng).squeeze(-1)  # (N,)
        original = torch.where(masked, batch.labels, batch.input_ids)  # (B, L): the block before masking
        corrupted = original.clone()
        corrupted[masked] = sampled  # boolean indexing is row-major, like the (N,) rows of ``logits``
        replaced = corrupted != original  # (B, L)
        hidden = encode(model, replace(batch, input_ids=corrupted))  # (B, L, H)
        scores = self.detection_head(hidden).squeeze(-1).float()  # (B, L)
        real = real_positions(batch)
        discriminator_loss = F.binary_cross_entropy_with_logits(scores[real], replaced[real].float())
        return generator_loss, discriminator_loss, replaced

    def forward(self, model: PreTrainedModel, batch: Batch) -> torch.Tensor:
        generator_loss, discriminator_loss, _ = self.parts(model, batch)
        return generator_loss + self.discriminator_weight * discriminator_loss

    @torch.no_grad()
    def own_evaluation(self, model: PreTrainedModel, batches: Iterable[Batch]) -> tuple[float, float | None]:
        """The held-out loss (generator MLM + weighted discriminator BCE, per batch weighted by its masked
        positions, as every objective's) and the yardstick: the share (%) of the base rate's cross-entropy that
        the discriminator removes, 100 x (1 − its BCE / H(p)), p the share of real positions replaced, H(p) the
        BCE of always answering p. 0: it detects no better than that guess (a discriminator that learned
        nothing); 100: every replacement found for sure. Over every real position of ``batches``, with the
        generator's samples as in training; None where nothing (or everything) was replaced, so that the base
        rate is already certain."""
        loss_sum, loss_positions = 0.0, 0
        detection_sum, replaced_count, count = 0.0, 0, 0
        for batch in batches:
            generator_loss, discriminator_loss, replaced = self.parts(model, batch)
            loss_sum += float(generator_loss + self.discriminator_weight * discriminator_loss) * batch.num_loss_positions
            loss_positions += batch.num_loss_positions
            real = real_positions(batch)
            positions = int(real.sum())
            detection_sum += float(discriminator_loss) * positions
            replaced_count, count = replaced_count + int(replaced[real].sum()), count + positions
        loss = loss_sum / max(loss_positions, 1)
        share = replaced_count / max(count, 1)
        if share in (0.0, 1.0):
            return loss, None
        base_rate = -(share * math.log(share) + (1 - share) * math.log(1 - share))
        return loss, 100.0 * (1.0 - detection_sum / count / base_rate)
