"""Build, save and load the shared backbone with either attention pattern.

transformers ships the study's architecture twice with one weight layout: causal as
``LlamaForCausalLM`` and bidirectional as ``EuroBertForMaskedLM`` (RMSNorm, SwiGLU,
RoPE, no biases, untied embeddings). A checkpoint saved under one attention pattern
loads under the other with no missing or unexpected keys, which is how CLM-pretrained
models are fine-tuned bidirectionally, as in the study.

An outside decoder of another family (GPT-2, Qwen2, Mistral, ...: whatever transformers
loads as a causal LM) is kept as it is (``BackboneSpec.architecture`` names its class) and
attends both ways through transformers' own switch, ``config.is_causal = False``, which
its mask code honours for every decoder (``masking_utils.create_causal_mask``). The rest
of the harness reaches any of them through transformers' generic accessors:
``base_model`` (the transformer), ``get_input_embeddings()`` and ``get_output_embeddings()``
(the LM head).
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch
import torch.nn.functional as F
from safetensors import SafetensorError
from safetensors.torch import load_file
from transformers import EuroBertConfig, EuroBertForMaskedLM, LlamaConfig, LlamaForCausalLM, PreTrainedModel

from pipeline import strict
from pipeline.batch import Batch
from pipeline.config import SizeSpec
from pipeline.errors import PipelineError
from pipeline.example import IGNORE, Attention
from pipeline.integrity import verify_recorded
from pipeline.kernels import DEFAULT_KERNELS, KERNELS, split_samples_as
from pipeline.model import varlen_attention
from pipeline.model.attention import prefix_attention_mask, segment_positions, split_sample_mask
from pipeline.model.liger_head import liger_linear_cross_entropy
from pipeline.model.linear_cross_entropy import linear_cross_entropy
from pipeline.tokenization.special_tokens import SpecialIds

# What a model computes its attention with until a job sets pretraining.compute.attention's kernel
DEFAULT_ATTENTION = KERNELS[DEFAULT_KERNELS["attention"]].transformers_name

try:  # transformers 5's: a model built without drawing the weights a checkpoint replaces at once
    from transformers.initialization import no_init_weights as undrawn_weights
except ImportError:  # a GPU image's other transformers: the weights are drawn and then replaced (slower, the same model)
    from contextlib import nullcontext as undrawn_weights

BACKBONE_FILE = "backbone.json"
WEIGHTS_FILE = "model.safetensors"
ROPE_THETA = 10_000.0
RMS_NORM_EPS = 1e-5  # EuroBERT's value; LlamaConfig defaults to 1e-6, so it is set explicitly
# The largest epsilon an imported config may set: it is added to a mean square near 1, and above
# 1e-2 it flattens every norm (EuroBERT's 1e-5, Llama's 1e-6, GPT-2's LayerNorm 1e-5).
MAX_RMS_NORM_EPS = 1e-2

_LM_CLASSES: dict[Attention, tuple[type, type]] = {
    "causal": (LlamaConfig, LlamaForCausalLM),
    "bidirectional": (EuroBertConfig, EuroBertForMaskedLM),
    "prefix": (LlamaConfig, LlamaForCausalLM),  # causal model + a 4-D prefix mask (pipeline.model.attention)
}


@dataclass(frozen=True)
class BackboneSpec:
    """Everything needed to rebuild the architecture, stored beside every checkpoint."""

    size: SizeSpec
    vocab_size: int
    max_length: int
    pad_id: int
    bos_id: int
    eos_id: int
    mask_id: int
    # What an outside checkpoint may set otherwise (Llama-3: RoPE theta 500,000); ours keep these.
    rope_theta: float = ROPE_THETA
    rms_norm_eps: float = RMS_NORM_EPS
    # None: this harness's backbone. Otherwise the transformers class of an outside decoder kept
    # as it is (config.json beside the weights holds its architecture); ``size`` then describes it.
    architecture: str | None = None

    @classmethod
    def create(cls, size: SizeSpec, special: SpecialIds, max_length: int) -> "BackboneSpec":
        return cls(size, special.vocab_size, max_length, special.pad, special.bos, special.eos, special.mask)


def model_config(spec: BackboneSpec, attention: Attention):
    config_class, _ = _LM_CLASSES[attention]
    size = spec.size
    config = config_class(
        vocab_size=spec.vocab_size,
        hidden_size=size.hidden_size,
        intermediate_size=size.ffn_size,
        num_hidden_layers=size.num_layers,
        num_attention_heads=size.num_heads,
        num_key_value_heads=size.num_kv_heads,
        head_dim=size.hidden_size // size.num_heads,
        max_position_embeddings=spec.max_length,
        rms_norm_eps=spec.rms_norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": spec.rope_theta},
        attention_bias=False,
        mlp_bias=False,
        tie_word_embeddings=False,
        initializer_range=0.02,
        pad_token_id=spec.pad_id,
        bos_token_id=spec.bos_id,
        eos_token_id=spec.eos_id,
        # In every export, causal ones too: a stock client loads any checkpoint as EuroBertForMaskedLM
        # (how a CLM model is used bidirectionally), which reads its mask id from here.
        mask_token_id=spec.mask_id,
    )
    config._attn_implementation = DEFAULT_ATTENTION
    return config


def build_language_model(spec: BackboneSpec, attention: Attention, seed: int) -> PreTrainedModel:
    """A freshly initialised backbone + LM head; the seed fixes the initial weights."""
    _, model_class = _LM_CLASSES[attention]
    torch.manual_seed(seed)
    return model_class(model_config(spec, attention))


def save_language_model(model: PreTrainedModel, spec: BackboneSpec, out_dir: str | Path, state_dict: dict | None = None) -> None:
    """``model`` as a Hugging Face directory; ``state_dict`` replaces its weights (gathered from FSDP shards)."""
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir, safe_serialization=True, state_dict=state_dict)
    for weights in out_dir.glob("*.safetensors"):  # transformers writes them through a private (0600) temporary file
        weights.chmod(0o644)
    (out_dir / BACKBONE_FILE).write_text(json.dumps(strict.to_plain(spec), indent=2, sort_keys=True) + "\n")


def read_backbone_spec(checkpoint: str | Path) -> BackboneSpec:
    path = Path(checkpoint) / BACKBONE_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise PipelineError(f"{path}: not a pipeline checkpoint (file missing)") from None
    return strict.parse(BackboneSpec, data, str(path))


def load_state_dict(checkpoint: str | Path) -> dict[str, torch.Tensor]:
    path = Path(checkpoint) / WEIGHTS_FILE
    if not path.is_file():
        raise PipelineError(f"{path}: checkpoint weights missing")
    verify_recorded(path)
    try:
        return load_file(path)
    except SafetensorError as error:  # truncated, or its header damaged
        raise PipelineError(f"{path}: unreadable weights ({error}); rerun the job that wrote them") from None


def load_language_model(checkpoint: str | Path, attention: Attention) -> PreTrainedModel:
    """Load any checkpoint of the backbone under the requested attention pattern."""
    spec = read_backbone_spec(checkpoint)
    if spec.architecture is not None:
        return load_outside_decoder(checkpoint, spec.architecture, attention)
    _, model_class = _LM_CLASSES[attention]
    # Every weight comes from the checkpoint (a missing one is refused below): drawing them first took 2.8 s of a
    # 210M load on 2 cores, and moved the global random state a load should leave alone.
    with undrawn_weights():
        model = model_class(model_config(spec, attention))
    missing, unexpected = model.load_state_dict(load_state_dict(checkpoint), strict=False)
    if missing or unexpected:
        raise PipelineError(f"{checkpoint}: weights do not fit the backbone (missing {missing[:3]}, unexpected {unexpected[:3]})")
    return model


def load_outside_decoder(checkpoint: str | Path, architecture: str, attention: Attention) -> PreTrainedModel:
    """An outside decoder kept as it is; bidirectional attention turns its causal mask off
    (prefix attention keeps it on and adds the prefix, :func:`encode`)."""
    from transformers import AutoModelForCausalLM

    for weights in sorted(Path(checkpoint).glob("*.safetensors")):
        verify_recorded(weights)
    model = AutoModelForCausalLM.from_pretrained(
        checkpoint, dtype=torch.float32, attn_implementation=DEFAULT_ATTENTION, trust_remote_code=False
    )
    if type(model).__name__ != architecture:
        raise PipelineError(f"{checkpoint}: holds a {type(model).__name__}, its {BACKBONE_FILE} says {architecture}")
    model.config.is_causal = attention != "bidirectional"
    return model


def layer_classes(model: torch.nn.Module) -> tuple[str, ...]:
    """The class names of ``model``'s transformer layers (transformers' ``_no_split_modules``)."""
    return tuple(getattr(model, "_no_split_modules", None) or ())


def compile_layers(model: torch.nn.Module, mode: str = "default") -> None:
    """Each transformer layer of ``model`` torch.compile'd in place (in ``mode``): parameter names and state dicts
    stay those of the plain module, and identical layers share one graph."""
    classes = layer_classes(model)
    for layer in [m for m in model.modules() if type(m).__name__ in classes]:
        layer.compile(mode=mode)


# The attention kernels that are this package's own, each with what registers it in transformers' AttentionInterface
# (the others, transformers has under their names already)
OWN_ATTENTION = {"varlen": varlen_attention.register}


def attention_implementation(kernel: str) -> str:
    """transformers' name of ``pretraining.compute.attention``'s kernel (pipeline/kernels/), registered first where it is ours."""
    if kernel in OWN_ATTENTION:
        OWN_ATTENTION[kernel]()
    return KERNELS[kernel].transformers_name


def builds_cache(model_class: type) -> bool:
    """Whether the model's forward takes ``use_cache`` (decoders); EuroBERT's does not. Not memoised:
    torch.compile traces the signature lookup as it is (a cache wrapper it would skip, with a warning)."""
    return "use_cache" in inspect.signature(model_class.forward).parameters


def encode(model: PreTrainedModel, batch: Batch) -> torch.Tensor:
    """Final hidden states (B, L, H) of the backbone under the batch's attention pattern.

    A decoder is told not to build its KV cache (its config's use_cache, True for generation):
    the cache would hold every layer's keys and values for nothing, and under torch.compile its
    state changes layer by layer, recompiling each layer until the recompile limit leaves the
    rest eager (seen on a GPU: BENCHMARKS.md). EuroBERT builds none.
    """
    no_cache = {"use_cache": False} if builds_cache(type(model.base_model)) else {}
    samples_as = split_samples_as(model.config._attn_implementation)  # pretraining.compute.attention's kernel
    if samples_as == "offsets":
        return model.base_model(input_ids=batch.input_ids, **varlen_attention.varlen_inputs(batch), **no_cache).last_hidden_state
    if batch.segment_starts is not None:  # two samples a row (pipeline.pretrain.samples); never padded
        length = batch.input_ids.shape[1]
        flex = samples_as == "block_mask"
        mask = split_sample_mask(batch.segment_starts, length, causal=batch.attention == "causal", flex=flex)
        positions = segment_positions(batch.segment_starts, length)
        return model.base_model(input_ids=batch.input_ids, attention_mask=mask, position_ids=positions, **no_cache).last_hidden_state
    if batch.attention == "prefix":
        embeds = model.get_input_embeddings()(batch.input_ids)  # (B, L, H)
        mask = prefix_attention_mask(model.config, embeds, batch.prefix_lengths, batch.padding_mask)
        return model.base_model(inputs_embeds=embeds, attention_mask=mask, **no_cache).last_hidden_state
    return model.base_model(input_ids=batch.input_ids, attention_mask=batch.padding_mask, **no_cache).last_hidden_state


def labelled_logits(
    model: PreTrainedModel, hidden: torch.Tensor, labels: torch.Tensor, sparse: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """LM-head logits (N, V), in float32, at the N positions that carry a label, and those labels (N,).

    ``sparse`` (the default): the LM head runs only on those positions ("sparse
    prediction", as in Cramming): hidden (B, T, H) -> selected (N, H) -> logits (N, V).
    For MLM at 40% this skips most of the vocabulary projection, the largest matmul at
    small sizes, and most of the (N, V) float32 logits, the largest activation at 128k
    vocabularies. ``sparse=False`` projects every position, (B, T, V), and then selects:
    the same numbers up to float rounding, at full cost (the path a dense LM head takes).
    This is for losses that need the logits themselves (ELECTRA samples from its generator's);
    :func:`labelled_loss` computes the cross-entropy without keeping them.
    """
    carries_loss = labels != IGNORE  # (B, T)
    head = model.get_output_embeddings()
    if sparse:
        return head(hidden[carries_loss]).float(), labels[carries_loss]
    return head(hidden).float()[carries_loss], labels[carries_loss]


def language_model_loss(model: PreTrainedModel, batch: Batch, head: LmHead = DEFAULT_KERNELS["lm_head"]) -> torch.Tensor:
    """Mean cross-entropy over the batch's positions that carry a label."""
    return labelled_loss(model, encode(model, batch), batch.labels, head)


# How the LM head and its loss compute (pretraining.compute: sparse_prediction and lm_head), an LM-head kernel of
# pipeline/kernels/: on the labelled positions only, as one pass that never holds their logits (the sparse heads,
# implemented here by name), or on every position with their logits held (the dense head, :func:`labelled_logits`).
LmHead = str
SPARSE_HEADS = {"chunked": linear_cross_entropy, "liger": liger_linear_cross_entropy}


def labelled_loss(
    model: PreTrainedModel, hidden: torch.Tensor, labels: torch.Tensor, head: LmHead = DEFAULT_KERNELS["lm_head"]
) -> torch.Tensor:
    """Mean cross-entropy of the LM head over the positions of ``hidden`` (B, T, H) that carry a label,
    computed as ``head`` says (:data:`LmHead`). Same numbers up to float rounding."""
    if not KERNELS[head].sparse:
        return F.cross_entropy(*labelled_logits(model, hidden, labels, sparse=False))
    return sparse_head_loss(hidden, model.get_output_embeddings().weight, labels, head)


# Left to eager under torch.compile: the labelled positions' count changes every batch (MLM's random
# masks, split samples' cuts), so a compiled head would be recompiled at each new count (measured on
# the CPU: every step) and the whole-model compile would never settle; the sparse heads are already
# one fused pass, and the graph before them has the batch's fixed shape.
@torch.compiler.disable
def sparse_head_loss(
    hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, head: LmHead = DEFAULT_KERNELS["lm_head"]
) -> torch.Tensor:
    """The sparse ``head`` + loss on the positions of ``hidden`` (B, T, H) whose ``labels`` (B, T) count."""
    carries_loss = labels != IGNORE  # (B, T)
    return SPARSE_HEADS[head](hidden[carries_loss], weight, labels[carries_loss])


class ParameterCounts(NamedTuple):
    """A model's parameters by the definitions the records and the comparison with the study need."""

    total: int  # every parameter; a tied head counts once
    non_embedding: int  # outside the input embedding and the LM head
    # non-embedding plus one vocabulary matrix: how the study names its sizes ("610M" is 460.1M +
    # 147.8M, though its models carry an untied head of another 147.8M)
    study_count: int


def count_parameters(model: PreTrainedModel) -> ParameterCounts:
    total = sum(p.numel() for p in model.parameters())  # parameters() yields a tied weight once
    embeddings = {id(e.weight): e.weight.numel() for e in (model.get_input_embeddings(), model.get_output_embeddings())}
    non_embedding = total - sum(embeddings.values())
    return ParameterCounts(total, non_embedding, non_embedding + model.get_input_embeddings().weight.numel())
