"""How a pretraining sample is formed from a packed block: whole (``packed``), or cut in two as
the study's trainer cuts it (``split``).

The study trains on "variable-length sequences ranging from 12 tokens up to the maximum of
2,048", 2,304 a step of ~1,024 tokens on average. Its trainer (Optimus, ``pack_dataset._pack``
with ``random_size=True``) packs the tokenized documents, each ending in EOS, across document
boundaries into blocks of 2,048 and cuts every block at a point drawn uniformly from
[12, 2,037) into two samples, which attend only within themselves (flash attention's variable
lengths, ``cu_seq_lens``) with positions counted from each sample's start. 1,152 blocks a step
make its 2,304 samples.

``split`` does the same inside this harness's packed blocks: the cut is drawn per (seed, step,
row) from its own stream, so every objective cuts the same blocks at the same points and reads
the same samples in the same order; the row keeps its length, and attention is masked to each
sample (:func:`pipeline.model.attention.segment_attention_mask`), with RoPE positions restarting
at the cut. Next-token prediction does not cross it: the first sample's last token predicts
nothing, as in the study (:meth:`pipeline.objectives.base.Example.split_at`). No padding is
added, so a step's tokens and compute are the packed run's (the mask only keeps the attention
kernel off its fastest path).
"""

from __future__ import annotations

import numpy as np

from pipeline.config.pretraining import MIN_SAMPLE_TOKENS  # Optimus: neither side of a cut is shorter

SPLIT_KINDS = ("clm", "mlm")  # objectives whose examples stay position-aligned with their block, so a cut applies
CUT_STREAM = 1  # the cut's RNG: a stream of its own beside the objective's (seed, step, row)


def cut_point(seed: int, step: int, row: int, length: int) -> int:
    """Where row ``row`` of step ``step`` is cut: uniform over [12, length - 11), Optimus' range at
    any block length (at 2,048: [12, 2,037)), the same for every objective."""
    if length < 2 * MIN_SAMPLE_TOKENS:
        raise ValueError(f"a block of {length} tokens cannot be cut into two samples of at least {MIN_SAMPLE_TOKENS}")
    return int(np.random.default_rng([seed, step, row, CUT_STREAM]).integers(MIN_SAMPLE_TOKENS, length - MIN_SAMPLE_TOKENS + 1))
