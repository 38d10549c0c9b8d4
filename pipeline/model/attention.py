"""Attention patterns as the backbone sees them, built with transformers' own mask code.

Causal and bidirectional attention need nothing here: ``LlamaModel`` masks causally and
``EuroBertModel`` bidirectionally, given at most a 2-D padding mask. Prefix attention
(prefix LM, span corruption and UL2 on a decoder-only backbone) is transformers' causal
mask OR-ed with "the key lies in this example's prefix", through the same
``create_causal_mask(or_mask_function=...)`` hook Gemma 3 uses for bidirectional image
tokens. The result is a 4-D mask that ``LlamaModel`` takes as-is.

The study's split samples (two a row, :mod:`pipeline.pretrain.samples`) are one mask in two
forms. Under SDPA it is a dense (B, 1, L, L) boolean, which keeps SDPA off its fused kernels
and computes every query-key pair, the masked half too. Under FlexAttention it is a
``BlockMask`` built from the same rule: the kernel skips every 128 x 128 tile that lies wholly
in the other sample, which is the work flash attention's variable-length kernel (the study's,
``cu_seq_lens``) does not do either. FlexAttention has no backward on the CPU (torch 2.13), so
it is a GPU setting (``pretraining.compute.attention: flex``).
"""

from __future__ import annotations

import torch
from torch.nn.attention.flex_attention import BlockMask, create_block_mask
from transformers.masking_utils import create_causal_mask


def prefix_mask_function(prefix_lengths: torch.Tensor):
    """transformers mask function: key ``kv`` is visible from anywhere when it lies in the prefix."""

    def in_prefix(batch_idx, head_idx, q_idx, kv_idx):
        return kv_idx < prefix_lengths[batch_idx]

    return in_prefix


def prefix_attention_mask(
    config, inputs_embeds: torch.Tensor, prefix_lengths: torch.Tensor, padding_mask: torch.Tensor | None
) -> torch.Tensor:
    """(B, 1, L, L) mask for ``LlamaModel``: bidirectional within each prefix, causal after it.

    inputs_embeds (B, L, H) only fixes shape, dtype and device; prefix_lengths (B,);
    padding_mask (B, L) of 0/1 or None.
    """
    position_ids = torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device).unsqueeze(0)
    return create_causal_mask(
        config=config,
        inputs_embeds=inputs_embeds,
        attention_mask=padding_mask,
        past_key_values=None,
        position_ids=position_ids,
        or_mask_function=prefix_mask_function(prefix_lengths),
    )


def same_sample_function(segment_starts: torch.Tensor, causal: bool):
    """FlexAttention mask_mod: query ``q`` sees key ``kv`` when both lie on one side of their row's
    cut ``segment_starts[b]`` (and, causal, ``kv <= q``); the rule of :func:`segment_attention_mask`."""

    def same_sample(batch_idx, head_idx, q_idx, kv_idx):
        start = segment_starts[batch_idx]
        visible = (q_idx < start) == (kv_idx < start)
        return visible & (kv_idx <= q_idx) if causal else visible

    return same_sample


def split_sample_mask(segment_starts: torch.Tensor, length: int, causal: bool, flex: bool) -> torch.Tensor | BlockMask:
    """The split samples' mask in the form the attention kernel takes: a ``BlockMask`` (B, 1, L, L)
    for FlexAttention, else the dense boolean of :func:`segment_attention_mask`."""
    if flex:
        function = same_sample_function(segment_starts, causal)
        return create_block_mask(function, len(segment_starts), None, length, length, device=segment_starts.device)
    return segment_attention_mask(segment_starts, length, causal)


def segment_attention_mask(segment_starts: torch.Tensor, length: int, causal: bool) -> torch.Tensor:
    """(B, 1, L, L) bool, True where query ``q`` may see key ``kv``: both in the same sample of
    their row (before or from ``segment_starts[b]``), and under causal attention ``kv <= q``.
    segment_starts (B,) long, each in (0, L). The study's variable-length samples, two per row."""
    positions = torch.arange(length, device=segment_starts.device)
    second = positions[None, :] >= segment_starts[:, None]  # (B, L): in the row's second sample
    mask = second[:, :, None] == second[:, None, :]  # (B, L, L): query and key in one sample
    if causal:
        mask &= positions[None, None, :] <= positions[None, :, None]
    return mask[:, None]


def segment_positions(segment_starts: torch.Tensor, length: int) -> torch.Tensor:
    """(B, L) RoPE positions counted from each sample's start: 0 .. s-1, then 0 .. L-s-1."""
    positions = torch.arange(length, device=segment_starts.device)[None, :].expand(len(segment_starts), length)
    return torch.where(positions >= segment_starts[:, None], positions - segment_starts[:, None], positions)
