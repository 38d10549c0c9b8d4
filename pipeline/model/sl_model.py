"""The study's released checkpoints (``model_type: sl_model``) read as this harness's backbone.

EncodEval registers the class of these checkpoints itself (``SLModel``, in its
``encodeval/modeling``) and loads them with ``trust_remote_code: false``, so transformers
knows no such model type and none of its ``Auto`` classes reads them. Their architecture is
the one the study trained with Optimus (``Nicolas-BZRD/EuroBERT``, ``optimus/trainer/model``):
RMSNorm, RoPE, SwiGLU, grouped-query attention, no biases, untied LM head, which is this
harness's backbone weight for weight. So the weights are read here from the safetensors
files alone (no code of the checkpoint's runs, no pickle is loaded) and renamed onto the
backbone's, in either of two layouts:

- **Optimus'** module names, under whatever prefix the wrapper adds (everything before
  ``embedding.weight``): ``blocks.<i>.attn.qkv_proj`` (queries, keys and values stacked by
  rows, in that order), ``attn.out_proj``, ``mlp.fc_1`` (the SiLU-gated one) / ``fc_2`` /
  ``proj``, ``attn_norm``, ``mlp_norm``, ``final_layernorm``, ``lm_head``. Optimus' RoPE
  rotates the two halves of a head (its ``[-low, high]``) with the frequencies repeated
  ``m (2 d)``: transformers' ``rotate_half`` exactly, so no row is permuted.
- **transformers'** Llama/EuroBERT names (``model.layers.<i>.self_attn.q_proj``, ...), taken
  as they are.

The SLModel code itself is not in the copies this project can read (the study's branch of
EncodEval is not stored, and no hub is reachable here), so neither the exact key names nor
config.json's field names of a real release were seen: every key must map (none missing,
none left over) and every shape must agree, or the import is refused naming the key, so a
release that differs fails in one line instead of importing wrong. config.json's sizes are
read under Optimus' names or transformers' (``num_head`` or ``num_attention_heads``, ...).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file
from transformers import PretrainedConfig

from pipeline.config import SizeSpec
from pipeline.errors import PipelineError
from pipeline.example import Attention
from pipeline.model.backbone import MAX_RMS_NORM_EPS, BackboneSpec, build_language_model, model_config

MODEL_TYPE = "sl_model"
# What a config.json is read at: a few KB in any release; a larger or deeper file is refused
# before json parses it (a 100,000-deep nesting would recurse out of the parser).
MAX_CONFIG_BYTES = 1 << 20
# Bounds no model the docs name comes near (the 1B: 18 heads, 2,048 positions), so that a
# malformed value is refused here rather than allocating or dividing wrong later.
MAX_HEADS = 1024
MAX_POSITIONS = 1 << 20
OPTIMUS_DEFAULTS = {"rope_theta": 10_000.0, "rms_norm_eps": 1e-5, "max_position_embeddings": 2048}  # eurobert_config's values
# config field -> its names in config.json: Optimus' first, then transformers'.
CONFIG_NAMES = {
    "num_heads": ("num_head", "num_attention_heads"),
    "num_kv_heads": ("num_kv_head", "num_key_value_heads"),
    "rope_theta": ("rope_base", "rope_theta"),
    "rms_norm_eps": ("rms_norm_eps",),
    "max_position_embeddings": ("block_size", "max_position_embeddings"),
}
OPTIMUS_EMBEDDING = "embedding.weight"
# Optimus' name within block <i> -> the backbone's within layer <i> (qkv_proj is split apart).
OPTIMUS_BLOCK = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn.out_proj.weight": "self_attn.o_proj.weight",
    "mlp_norm.weight": "post_attention_layernorm.weight",
    "mlp.fc_1.weight": "mlp.gate_proj.weight",
    "mlp.fc_2.weight": "mlp.up_proj.weight",
    "mlp.proj.weight": "mlp.down_proj.weight",
}
OPTIMUS_TOP = {
    OPTIMUS_EMBEDDING: "model.embed_tokens.weight",
    "final_layernorm.weight": "model.norm.weight",
    "lm_head.weight": "lm_head.weight",
}


def is_sl_model(path: str) -> bool:
    """Whether ``path`` is a local checkpoint whose config.json names the study's ``sl_model``; a
    config.json that is not a JSON object of bounded size is refused here, for every import."""
    config = Path(path) / "config.json"
    return config.is_file() and read_config_json(config).get("model_type") == MODEL_TYPE


def read_config_json(file: Path) -> dict[str, Any]:
    """config.json as a mapping, its size bounded before it is parsed; PipelineError naming the file."""
    if file.stat().st_size > MAX_CONFIG_BYTES:
        raise PipelineError(f"{file}: {file.stat().st_size:,} bytes, over the {MAX_CONFIG_BYTES:,} a model's config.json is read at")
    try:
        config = json.loads(file.read_text())
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise PipelineError(f"{file}: not JSON ({type(error).__name__})") from None
    if not isinstance(config, dict):
        raise PipelineError(f"{file}: not a JSON object")
    return config


def checked_config(config: dict[str, Any], file: Path) -> dict[str, Any]:
    """config.json's values this import reads, each checked (one line naming the key): head counts
    and the context length whole numbers within bounds, RoPE's base and RMSNorm's epsilon positive
    and finite, token ids whole numbers or null. A NaN epsilon or a zero base imports as a model
    whose every logit is NaN or wrong."""
    integers = {"num_heads": MAX_HEADS, "num_kv_heads": MAX_HEADS, "max_position_embeddings": MAX_POSITIONS}
    for field, names in CONFIG_NAMES.items():
        for name in names:
            if name not in config:
                continue
            value = config[name]
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if field in integers and not (number and float(value).is_integer() and 1 <= value <= integers[field]):
                raise PipelineError(f"{file}: {name} {value!r} must be a whole number from 1 to {integers[field]:,}")
            if field not in integers and not (number and math.isfinite(value) and value > 0):
                raise PipelineError(f"{file}: {name} {value!r} must be a positive finite number")
            if field == "rms_norm_eps" and value > MAX_RMS_NORM_EPS:
                raise PipelineError(f"{file}: {name} {value!r} is not an epsilon in (0, {MAX_RMS_NORM_EPS:g}]")
    for role in ("pad", "bos", "eos", "mask"):
        value = config.get(f"{role}_token_id")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise PipelineError(f"{file}: {role}_token_id {value!r} must be a token id (a whole number >= 0) or null")
    return config


def read_sl_model(path: str, attention: Attention, where: str) -> tuple[PretrainedConfig, dict[str, torch.Tensor]]:
    """The checkpoint at ``path`` as the backbone's transformers config (for ``attention``;
    ``architectures`` names SLModel) and its weights under the backbone's names, checked to
    cover it exactly, shape for shape."""
    file = Path(path) / "config.json"
    config = checked_config(read_config_json(file), file)
    state = to_backbone(read_weights(path, where), config, where)
    for key in ("model.embed_tokens.weight", "model.layers.0.mlp.gate_proj.weight"):
        if key not in state:
            raise PipelineError(f"{where}: the weights do not fit the backbone (missing {key!r})")
    size, extras = read_size(config, state, where)
    # Token ids are the tokenizer's (pipeline.model.outside reads them there); config.json's are recorded as given.
    ids = {role: int(config.get(f"{role}_token_id") or 0) for role in ("pad", "bos", "eos", "mask")}
    backbone = BackboneSpec(
        size,
        state["model.embed_tokens.weight"].shape[0],
        extras["max_position_embeddings"],
        ids["pad"],
        ids["bos"],
        ids["eos"],
        ids["mask"],
        rope_theta=extras["rope_theta"],
        rms_norm_eps=extras["rms_norm_eps"],
    )
    hf_config = model_config(backbone, attention)
    hf_config.architectures = ["SLModel"]
    check_fits(state, build_language_model(backbone, attention, seed=0).state_dict(), where)
    return hf_config, state


def read_size(config: dict[str, Any], state: dict[str, torch.Tensor], where: str) -> tuple[SizeSpec, dict[str, Any]]:
    """The checkpoint's size (widths and depth from the weights, heads from config.json) and its
    RoPE theta, RMSNorm epsilon and context length (config.json's, else Optimus' defaults)."""
    values = {}
    for field, names in CONFIG_NAMES.items():
        found = [config[name] for name in names if name in config]
        if not found and field not in OPTIMUS_DEFAULTS:
            raise PipelineError(f"{where}: config.json names no {field} (looked for {' or '.join(names)})")
        values[field] = found[0] if found else OPTIMUS_DEFAULTS[field]
    embeddings = state["model.embed_tokens.weight"]
    layers = {int(match.group(1)) for key in state if (match := re.match(r"model\.layers\.(\d+)\.", key))}
    heads, kv_heads = int(values["num_heads"]), int(values["num_kv_heads"])
    if embeddings.shape[1] % heads or heads % kv_heads:
        raise PipelineError(f"{where}: {heads} heads of {kv_heads} key-value groups do not divide the width {embeddings.shape[1]}")
    size = SizeSpec(
        num_layers=len(layers),
        hidden_size=embeddings.shape[1],
        num_heads=heads,
        num_kv_heads=kv_heads,
        ffn_size=state["model.layers.0.mlp.gate_proj.weight"].shape[0],
    )
    extras = {"rope_theta": float(values["rope_theta"]), "rms_norm_eps": float(values["rms_norm_eps"])}
    return size, extras | {"max_position_embeddings": int(values["max_position_embeddings"])}


def read_weights(path: str, where: str) -> dict[str, torch.Tensor]:
    """Every tensor of the checkpoint's safetensors files (one, or the shards of one), as saved."""
    files = sorted(Path(path).glob("*.safetensors"))
    if not files:
        pickled = sorted(p.name for p in Path(path).glob("*.bin"))
        extra = f" (it has {pickled[0]}: a pickle, which is never loaded; convert it to safetensors)" if pickled else ""
        raise PipelineError(f"{where}: {path!r} has no .safetensors weights{extra}")
    state: dict[str, torch.Tensor] = {}
    for file in files:
        try:
            state |= load_file(file)
        except (SafetensorError, OSError) as error:
            raise PipelineError(f"{where}: cannot read {file}: {error}") from None
    for key, tensor in state.items():  # an integer or bool tensor would be cast into float parameters, silently
        if not tensor.is_floating_point():
            raise PipelineError(f"{where}: weight {key!r} is {str(tensor.dtype).removeprefix('torch.')}, not floating point; refused")
    return state


def to_backbone(state: dict[str, torch.Tensor], config: dict[str, Any], where: str) -> dict[str, torch.Tensor]:
    """The weights under the backbone's names (transformers' layout taken as it is)."""
    optimus = [key for key in state if key == OPTIMUS_EMBEDDING or key.endswith("." + OPTIMUS_EMBEDDING)]
    if not optimus:
        return dict(state)
    if len(optimus) > 1:
        raise PipelineError(f"{where}: two embedding tables ({optimus[0]}, {optimus[1]})")
    prefix = optimus[0][: -len(OPTIMUS_EMBEDDING)]
    outside = [key for key in state if not key.startswith(prefix)]
    if outside:
        raise PipelineError(f"{where}: weight {outside[0]!r} is outside the model's prefix {prefix!r}")
    mapped: dict[str, torch.Tensor] = {}
    for key, tensor in state.items():
        name = key[len(prefix) :]
        block = re.fullmatch(r"blocks\.(\d+)\.(.+)", name)
        if name in OPTIMUS_TOP:
            mapped[OPTIMUS_TOP[name]] = tensor
        elif block and block.group(2) == "attn.qkv_proj.weight":
            mapped |= split_qkv(tensor, int(block.group(1)), config, where)
        elif block and block.group(2) in OPTIMUS_BLOCK:
            mapped[f"model.layers.{block.group(1)}.{OPTIMUS_BLOCK[block.group(2)]}"] = tensor
        else:
            raise PipelineError(f"{where}: weight {key!r} has no place in the backbone (left over)")
    return mapped


def split_qkv(qkv: torch.Tensor, layer: int, config: dict[str, Any], where: str) -> dict[str, torch.Tensor]:
    """Optimus' fused projection ((H + 2 KV) * head_dim, hidden): queries, keys, values by rows."""
    heads = next((config[name] for name in CONFIG_NAMES["num_heads"] if name in config), None)
    kv_heads = next((config[name] for name in CONFIG_NAMES["num_kv_heads"] if name in config), None)
    if heads is None or kv_heads is None:
        raise PipelineError(f"{where}: config.json must name the attention heads and kv heads to split blocks.{layer}.attn.qkv_proj")
    heads, kv_heads = int(heads), int(kv_heads)  # whole numbers (checked_config), perhaps written 2.0
    head_dim = qkv.shape[1] // heads
    if qkv.shape[0] != (heads + 2 * kv_heads) * head_dim:
        raise PipelineError(f"{where}: blocks.{layer}.attn.qkv_proj has {qkv.shape[0]} rows, not ({heads} + 2 x {kv_heads}) x {head_dim}")
    q, k, v = qkv.split([heads * head_dim, kv_heads * head_dim, kv_heads * head_dim])
    attention = f"model.layers.{layer}.self_attn"
    return {f"{attention}.q_proj.weight": q, f"{attention}.k_proj.weight": k, f"{attention}.v_proj.weight": v}


def check_fits(mapped: dict[str, torch.Tensor], expected: dict[str, torch.Tensor], where: str) -> None:
    """Refuse weights that do not cover the backbone exactly, shape for shape."""
    missing = sorted(set(expected) - set(mapped))
    left_over = sorted(set(mapped) - set(expected))
    if missing or left_over:
        what = f"missing {missing[0]!r}" if missing else f"{left_over[0]!r} left over"
        raise PipelineError(f"{where}: the weights do not fit the backbone ({what}; {len(missing)} missing, {len(left_over)} left over)")
    for key, tensor in expected.items():
        if mapped[key].shape != tensor.shape:
            raise PipelineError(f"{where}: {key} has shape {tuple(mapped[key].shape)}, the backbone {tuple(tensor.shape)}")
