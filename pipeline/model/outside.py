"""``python -m pipeline import-model``: a checkpoint made outside this harness as a checkpoint
of its backbone, so that fine-tuning, zero-shot scoring and continued pretraining take it
like any model pretrained here.

The backbone is the study's layout (:mod:`.backbone`): a Llama-layout decoder
(``LlamaForCausalLM``: Llama, the study's CLM models) or a EuroBERT encoder
(``EuroBertForMaskedLM``: the study's MLM models) fits it weight for weight. Anything else is
refused naming the class it found and the setting that does not fit (a bias, another
activation, RoPE scaling), rather than loaded with weights silently dropped. The checkpoint's
own RoPE theta and RMSNorm epsilon are kept (``BackboneSpec``); its tokenizer is taken as it
is, its unused reserved tokens playing the roles our objectives need
(:mod:`pipeline.tokenization.ready_made`). What was imported (path, revision, class, the
tokenizer's roles, the sha256 of the weights as imported) goes into ``provenance.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
from pathlib import Path
from typing import Any

import torch

from pipeline import strict
from pipeline.config import OutsideModelSpec, ReadyMadeTokenizer, SizeSpec, TokenizerSpec
from pipeline.errors import PipelineError
from pipeline.files import atomic_path
from pipeline.model.backbone import BackboneSpec, build_language_model, save_language_model
from pipeline.objectives.base import Attention
from pipeline.provenance import write_provenance
from pipeline.tokenization.ready_made import check_local_path, take_ready_made
from pipeline.tokenization.special_tokens import SpecialIds

logger = logging.getLogger(__name__)
# model_type -> the attention its weights were trained under
FAMILIES: dict[str, Attention] = {"llama": "causal", "eurobert": "bidirectional"}
# Settings the backbone fixes: (config attribute, the value it must have).
FIXED = (("hidden_act", "silu"), ("attention_bias", False), ("mlp_bias", False))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of its OutsideModelSpec")
    parser.add_argument("--num-sentinel-tokens", type=int, default=16, help="sentinels its tokenizer must provide (tokenizer.num_sentinel_tokens)")
    parser.add_argument("--out", required=True, type=Path, help="results/outside/<name>/model")


def run(args: argparse.Namespace) -> None:
    spec = strict.parse_json(OutsideModelSpec, args.spec, "outside_models[]")
    where = f"outside_models[{spec.name}]"
    check_local_path(spec.path, f"{where}.path")
    config = load_config(spec, where)
    attention = check_architecture(config, spec, where)
    tokenizer_spec = TokenizerSpec(
        vocab_size=config.vocab_size, num_sentinel_tokens=args.num_sentinel_tokens, ready_made=ReadyMadeTokenizer(spec.path, spec.revision)
    )
    tokenizer, tokenizer_record = take_ready_made(tokenizer_spec, f"{where}.tokenizer")
    backbone = backbone_spec(config, SpecialIds.from_tokenizer(tokenizer))
    model = build_language_model(backbone, attention, seed=0)
    weights = load_weights(spec, attention, where)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    if missing or unexpected:
        raise PipelineError(f"{where}: {spec.path!r}'s weights do not fit the backbone (missing {missing[:3]}, unexpected {unexpected[:3]})")
    record = {
        "path": spec.path, "revision": spec.revision, "architecture": architecture(config), "attention": attention,
        "weights_sha256": weights_digest(model.state_dict()), "tokenizer": tokenizer_record,
    }  # fmt: skip
    with atomic_path(args.out) as out:
        save_language_model(model, backbone, out)
        tokenizer.save_pretrained(out)
        local = {"outside_model": Path(spec.path)} if Path(spec.path).is_dir() else {}
        write_provenance(out, strict.to_plain(spec), local, imported=record)
    logger.info("imported %s (%s, %s attention) as %s", spec.path, record["architecture"], attention, args.out)


def load_config(spec: OutsideModelSpec, where: str) -> Any:
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(spec.path, revision=spec.revision, trust_remote_code=spec.trust_remote_code)
    except (OSError, ValueError) as error:  # no such directory or hub id, no network, remote code not trusted
        raise PipelineError(f"{where}.path: cannot load {spec.path!r}: {str(error).strip().splitlines()[0]}") from None


def architecture(config: Any) -> str:
    return (config.architectures or [type(config).__name__])[0]


def check_architecture(config: Any, spec: OutsideModelSpec, where: str) -> Attention:
    """The attention the checkpoint was trained under; an error naming what does not fit."""
    if config.model_type not in FAMILIES:
        raise PipelineError(
            f"{where}: {spec.path!r} is a {architecture(config)} ({config.model_type}); the backbone takes Llama-layout "
            "decoders (LlamaForCausalLM) and EuroBERT encoders (EuroBertForMaskedLM)"
        )
    for key, value in FIXED:
        if getattr(config, key, value) != value:
            raise PipelineError(f"{where}: {spec.path!r} has {key}={getattr(config, key)!r}; the backbone needs {value!r}")
    rope = getattr(config, "rope_parameters", None) or {}
    if rope.get("rope_type", "default") != "default":
        raise PipelineError(f"{where}: {spec.path!r} scales RoPE ({rope['rope_type']!r}); the backbone has plain RoPE")
    if getattr(config, "head_dim", None) not in (None, config.hidden_size // config.num_attention_heads):
        raise PipelineError(f"{where}: {spec.path!r} has head_dim={config.head_dim}, not hidden_size / num_attention_heads")
    return FAMILIES[config.model_type]


def backbone_spec(config: Any, special: SpecialIds) -> BackboneSpec:
    size = SizeSpec(
        num_layers=config.num_hidden_layers, hidden_size=config.hidden_size, num_heads=config.num_attention_heads,
        num_kv_heads=config.num_key_value_heads or config.num_attention_heads, ffn_size=config.intermediate_size,
    )  # fmt: skip
    rope = getattr(config, "rope_parameters", None) or {}
    return BackboneSpec(
        size=size, vocab_size=config.vocab_size, max_length=config.max_position_embeddings, pad_id=special.pad,
        bos_id=special.bos, eos_id=special.eos, mask_id=special.mask,
        rope_theta=float(rope.get("rope_theta", getattr(config, "rope_theta", 10_000.0))), rms_norm_eps=float(config.rms_norm_eps),
    )  # fmt: skip


def load_weights(spec: OutsideModelSpec, attention: Attention, where: str) -> dict[str, torch.Tensor]:
    """Its weights as transformers loads them (local or hub, sharded or not), in float32; a
    tied LM head becomes its own copy of the embeddings (the backbone's head is untied)."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    model_class = AutoModelForCausalLM if attention == "causal" else AutoModelForMaskedLM
    try:
        model = model_class.from_pretrained(spec.path, revision=spec.revision, trust_remote_code=spec.trust_remote_code, dtype=torch.float32)
    except (OSError, ValueError) as error:
        raise PipelineError(f"{where}.path: cannot load the weights of {spec.path!r}: {str(error).strip().splitlines()[0]}") from None
    return {name: tensor.clone() for name, tensor in model.state_dict().items()}


def weights_digest(state: dict[str, torch.Tensor]) -> str:
    digest = hashlib.sha256()
    for name in sorted(state):
        digest.update(name.encode() + b"\0" + state[name].detach().float().numpy().tobytes())
    return digest.hexdigest()
