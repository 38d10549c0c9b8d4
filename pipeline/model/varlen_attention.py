"""The study's own attention path: flash attention's variable-length kernel over samples laid end to end.

The study trained its split samples (two a row, :mod:`pipeline.pretrain.samples`) with flash attention's
``flash_attn_varlen_func``: a micro-batch's samples laid end to end, each attending within its own span,
given the spans' cumulative offsets (``cu_seq_lens``). torch ships that kernel as
``torch.nn.attention.varlen.varlen_attn`` (CUDA only). :func:`register` adds it to transformers' attention
interface under :data:`VARLEN`; a model set to it (``pretraining.compute.attention: varlen``) runs every
layer's attention through :func:`varlen_attention_forward`, which reads the offsets from the keyword
arguments transformers passes down to each layer (``cu_seq_lens_q`` ..., the names of its own flash path),
and :func:`varlen_inputs` is what :func:`pipeline.model.backbone.encode` passes. Against SDPA's dense mask
the other sample's half of each row is not computed at all; against FlexAttention's block mask (the same
work skipped), no mask is built each step and the kernel is flash attention's own.

No mask reaches the kernel, so what a mask would say must be said by the offsets: prefix attention and
padded rows are refused (:func:`varlen_inputs`), not computed as something else.

torch's signature moved: 2.9 takes ``is_causal`` and no scale, 2.10 ``window_size`` and ``scale``, 2.12
adds ``enable_gqa``. :data:`_PARAMETERS` reads it once at import, outside the compiled layers.
"""

from __future__ import annotations

import inspect
import math

import torch

from pipeline.batch import Batch
from pipeline.errors import PipelineError
from pipeline.kernels import KERNELS
from pipeline.model.attention import segment_positions

try:
    from torch.nn.attention.varlen import varlen_attn as flash_varlen
except ImportError:  # torch < 2.9: the setting is refused where the model is set to it (register)
    flash_varlen = None

# The name in transformers' AttentionInterface and in model.config._attn_implementation (pipeline/kernels/varlen.py)
VARLEN = KERNELS["varlen"].transformers_name
_PARAMETERS = frozenset(inspect.signature(flash_varlen).parameters) if flash_varlen is not None else frozenset()


def register() -> str:
    """Add the kernel to transformers' attention functions (again: the same entry) and return its name."""
    if flash_varlen is None:
        raise PipelineError(
            f"pretraining.compute.attention: 'varlen' needs torch >= 2.9 (torch.nn.attention.varlen); this is {torch.__version__}"
        )
    from transformers import AttentionInterface

    AttentionInterface.register(VARLEN, varlen_attention_forward)
    return VARLEN


def sample_offsets(segment_starts: torch.Tensor | None, batch_size: int, length: int, device: torch.device) -> torch.Tensor:
    """(N + 1,) int32 cumulative offsets of the N samples of B rows of L tokens laid end to end.

    segment_starts (B,) long: each row's second sample starts there; N = 2B. A 0 (a row left whole in a batch
    of cut rows) gives an empty first sample, an offset repeated: pretraining never makes one (its cuts leave
    12 tokens at least a side, pipeline.pretrain.samples), and the CUDA kernel has not been run on one.
    None: every row is one sample, N = B. The count never depends on the data, so compiled layers see one
    shape a batch size.
    """
    rows = torch.arange(batch_size, device=device) * length  # (B,): each row's first token, end to end
    starts = rows if segment_starts is None else torch.stack([rows, rows + segment_starts], dim=1).flatten()  # (N,)
    return torch.cat([starts, starts.new_tensor([batch_size * length])]).to(torch.int32)


def varlen_inputs(batch: Batch) -> dict:
    """The keyword arguments of the backbone's forward besides the tokens: each row's RoPE positions and the
    samples' offsets. Refuses what the offsets cannot say (the kernel takes no mask)."""
    if batch.attention == "prefix":
        raise PipelineError(
            "pretraining.compute.attention: 'varlen' cannot attend to a prefix bidirectionally (prefix LM, span corruption, "
            "UL2); use 'flex' or 'sdpa' for these objectives"
        )
    if batch.padding_mask is not None:
        raise PipelineError("pretraining.compute.attention: 'varlen' takes unpadded rows; this batch is padded (use 'flex' or 'sdpa')")
    batch_size, length = batch.input_ids.shape
    offsets = sample_offsets(batch.segment_starts, batch_size, length, batch.input_ids.device)
    inputs = {"cu_seq_lens_q": offsets, "max_length_q": length}  # self-attention: the keys' offsets are the queries'
    if batch.segment_starts is not None:  # positions counted from each sample's start, as the dense-mask path's
        inputs["position_ids"] = segment_positions(batch.segment_starts, length)
    return inputs


def varlen_attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    cu_seq_lens_q: torch.Tensor | None = None,
    max_length_q: int | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """transformers' attention function: query (B, Hq, L, D), key and value (B, Hkv, L, D) -> ((B, L, Hq, D), None).

    Causal where the module is (``LlamaAttention``; ``EuroBertAttention`` is not). max_length_q is the row
    length, an upper bound on every sample's (it sizes the kernel's grid; finding the true one would make the
    host wait on the device every step).
    """
    if cu_seq_lens_q is None or attention_mask is not None:
        raise PipelineError("varlen attention needs the samples' offsets and no mask: run the model through pipeline.model.backbone.encode")
    if dropout:
        raise PipelineError(f"varlen attention: attention dropout {dropout} is not supported (the backbone trains without it)")
    batch, heads, length, dim = query.shape
    kv_heads = key.shape[1]

    def end_to_end(states: torch.Tensor) -> torch.Tensor:  # (B, H, L, D) -> (B * L, H, D): every row's tokens in a row
        return states.transpose(1, 2).reshape(batch * length, states.shape[1], dim)

    query, key, value = end_to_end(query), end_to_end(key), end_to_end(value)
    options = {}
    if kv_heads != heads:  # grouped-query attention: each key/value head serves heads // kv_heads query heads in turn
        if "enable_gqa" in _PARAMETERS:
            options["enable_gqa"] = True
        else:
            key, value = (states.repeat_interleave(heads // kv_heads, dim=1) for states in (key, value))
    causal = bool(module.is_causal)
    if "window_size" in _PARAMETERS:
        options["window_size"] = (-1, 0) if causal else (-1, -1)
    else:
        options["is_causal"] = causal
    if "scale" in _PARAMETERS:
        options["scale"] = scaling
    elif scaling is not None and not math.isclose(scaling, dim**-0.5):
        raise PipelineError(f"varlen attention: this torch's kernel scales by 1/sqrt({dim}) only; the model asks {scaling}")
    output = flash_varlen(query, key, value, cu_seq_lens_q, cu_seq_lens_q, max_length_q, max_length_q, **options)  # (B * L, Hq, D)
    return output.view(batch, length, heads, dim), None
