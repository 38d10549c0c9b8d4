"""``python -m pipeline import-model``: a checkpoint made outside this harness as a checkpoint
of its backbone, so that fine-tuning, zero-shot scoring and continued pretraining take it
like any model pretrained here.

The backbone is the study's layout (:mod:`.backbone`): a Llama-layout decoder
(``LlamaForCausalLM``: Llama, the study's CLM models) or a EuroBERT encoder
(``EuroBertForMaskedLM``: the study's MLM models) is converted weight for weight, keeping the
checkpoint's own RoPE theta and RMSNorm epsilon (``BackboneSpec``). A causal LM of any other
family transformers ships (GPT-2, Qwen2, Mistral, ...), or a Llama the backbone does not fit
(a bias, RoPE scaling as Llama 3.1's), is kept as it is, its class named in
``backbone.json``, and attends both ways through transformers' ``is_causal`` switch when
asked to; a EuroBERT that does not fit is refused naming the setting. Anything else (an
encoder of another family, a model whose code only its repository has) is refused naming
the class it found. Its tokenizer is taken as it is, its unused reserved tokens playing the
roles our objectives need (:mod:`pipeline.tokenization.ready_made`). What was imported
(path, revision, class, the tokenizer's roles, the sha256 of the weights as imported) goes
into ``provenance.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import math
import pickle
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError

from pipeline import strict
from pipeline.config import OutsideModelSpec, ReadyMadeTokenizer, SizeSpec, TokenizerSpec
from pipeline.errors import PipelineError
from pipeline.example import Attention
from pipeline.files import RESULTS, atomic_path
from pipeline.integrity import PROVENANCE_FILE, verify_recorded
from pipeline.model.backbone import DEFAULT_ATTENTION, MAX_RMS_NORM_EPS, BackboneSpec, build_language_model, save_language_model
from pipeline.model.sl_model import is_sl_model, read_sl_model
from pipeline.objectives import parse_objective
from pipeline.provenance import write_provenance
from pipeline.staging.manifest import verify_staged
from pipeline.tokenization.ready_made import check_local_path, take_ready_made
from pipeline.tokenization.saved import tokenizer_files
from pipeline.tokenization.special_tokens import SpecialIds

logger = logging.getLogger(__name__)
# model_type -> the attention its weights were trained under
FAMILIES: dict[str, Attention] = {"llama": "causal", "eurobert": "bidirectional"}
# The weight files transformers loads (sharded or not), which the workflow records when it writes them.
WEIGHT_FILES = ("*.safetensors", "*.bin")
# Settings the backbone fixes: (config attribute, the value it must have).
FIXED = (("hidden_act", "silu"), ("attention_bias", False), ("mlp_bias", False))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of its OutsideModelSpec")
    parser.add_argument(
        "--num-sentinel-tokens", type=int, default=16, help="sentinels its tokenizer must provide (tokenizer.num_sentinel_tokens)"
    )
    parser.add_argument("--out", required=True, type=Path, help="results/outside/<name>/model")


def run(args: argparse.Namespace) -> None:
    spec = strict.parse_json(OutsideModelSpec, args.spec, "outside_models[]")
    where = f"outside_models[{spec.name}]"
    check_local_path(spec.path, f"{where}.path")
    verify_source(spec)
    released = is_sl_model(spec.path)  # the study's own checkpoints: read from their weights, no code of theirs
    if released:
        config, weights = read_sl_model(spec.path, parse_objective({"kind": spec.objective}).attention, where)
    else:
        config, weights = load_config(spec, where), None
    misfit = backbone_misfit(config) if config.model_type in FAMILIES else "is another family"
    converts = misfit is None
    if config.model_type == "eurobert" and not converts:  # an encoder the backbone cannot take has no other way in
        raise PipelineError(f"{where}: {spec.path!r} {misfit}")
    if not converts:
        logger.info("%s %s: kept as it is (%s)", spec.path, misfit, architecture(config))
    attention = FAMILIES[config.model_type] if converts else check_causal_lm(config, spec, where)
    tokenizer_spec = TokenizerSpec(
        vocab_size=config.vocab_size,
        num_sentinel_tokens=args.num_sentinel_tokens,
        ready_made=ReadyMadeTokenizer(spec.path, spec.revision, trust_remote_code=spec.trust_remote_code),
    )
    tokenizer, tokenizer_record = take_ready_made(tokenizer_spec, f"{where}.tokenizer", embedding_rows=config.vocab_size)
    special = SpecialIds.from_tokenizer(tokenizer)
    if converts:
        backbone = backbone_spec(config, special)
        check_imported_numbers(backbone, f"{where}: {spec.path!r}'s config")
        model = build_language_model(backbone, attention, seed=0)
        state = weights if released else load_model(spec, attention, where).state_dict()
        missing, unexpected = model.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise PipelineError(
                f"{where}: {spec.path!r}'s weights do not fit the backbone (missing {missing[:3]}, unexpected {unexpected[:3]})"
            )
    else:
        model = load_model(spec, attention, where)
        if getattr(model.get_output_embeddings(), "bias", None) is not None:  # the fused LM loss takes the head's weight only
            raise PipelineError(
                f"{where}: {spec.path!r} is a {architecture(config)} whose LM head has a bias; the harness's LM losses take none"
            )
        backbone = backbone_spec(config, special, architecture=type(model).__name__)
    refuse_non_finite(model.state_dict(), spec, where)
    record = {
        "path": spec.path,
        "revision": spec.revision,
        "architecture": architecture(config),
        "attention": attention,
        # transformers loads a repository's own code (auto_map) only under trust_remote_code
        "modelling_code": "none: weights read by pipeline.model.sl_model"
        if released
        else "repository"
        if type(config).__module__.startswith("transformers_modules")
        else "transformers",
        "weights_sha256": weights_digest(model.state_dict()),
        "tokenizer": tokenizer_record,
    }
    with atomic_path(args.out) as out:
        save_language_model(model, backbone, out)
        tokenizer.save_pretrained(out)
        local = {"outside_model": Path(spec.path)} if Path(spec.path).is_dir() else {}
        outputs = [*sorted(out.glob("*.safetensors")), *tokenizer_files(out)]
        write_provenance(out, strict.to_plain(spec), local, outputs=outputs, imported=record)
    logger.info("imported %s (%s, %s attention) as %s", spec.path, record["architecture"], attention, args.out)


def verify_source(spec: OutsideModelSpec) -> None:
    """Refuse bytes nothing vouches for before a byte of them is loaded: a model staged in the
    hub mirror against the mirror's manifest (every file, so a planted one too), a model this
    workflow wrote (results/...) against the sha256 its provenance.json recorded. A local model
    of the user's own has no record; the workflow lists its files as the import's inputs, so a
    change to any of them reruns the import (rules/common.smk), and provenance.json hashes them.
    A symbolic link is judged by what it points at: a link to a model under results/ is checked
    as that model is."""
    path = Path(spec.path).resolve()
    if spec.hub_id is not None and path.is_dir():
        verify_staged(path)
    elif path.is_dir() and (RESULTS in path.parts or (path / PROVENANCE_FILE).is_file()):
        for weights in sorted(p for pattern in WEIGHT_FILES for p in path.glob(pattern)):
            verify_recorded(weights)


def refuse_non_finite(state: dict[str, torch.Tensor], spec: OutsideModelSpec, where: str) -> None:
    """A NaN or infinite weight makes every fine-tuning run of the model NaN: refused here, in one line."""
    for name, tensor in state.items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            bad = int((~torch.isfinite(tensor)).sum())
            raise PipelineError(f"{where}: {spec.path!r} has {bad} non-finite (NaN or infinite) values in {name}; refused")


def load_config(spec: OutsideModelSpec, where: str) -> Any:
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(spec.path, revision=spec.revision, trust_remote_code=spec.trust_remote_code)
    except (OSError, ValueError) as error:  # no such directory or hub id, no network, remote code not trusted
        if "contains custom code" in str(error):  # only the config key sets trust_remote_code, never a prompt or a default
            raise PipelineError(
                f"{where}: {spec.path!r} runs only with its repository's own code; set {where}.trust_remote_code: true if you trust it"
            ) from None
        raise PipelineError(f"{where}.path: cannot load {spec.path!r}: {str(error).strip().splitlines()[0]}") from None


def architecture(config: Any) -> str:
    return (config.architectures or [type(config).__name__])[0]


def check_causal_lm(config: Any, spec: OutsideModelSpec, where: str) -> Attention:
    """A family outside the backbone must be a causal LM whose code transformers ships."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    if config.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise PipelineError(
            f"{where}: {spec.path!r} is a {architecture(config)} ({config.model_type}); the harness takes EuroBERT encoders "
            "and causal LMs whose code transformers ships (Llama, GPT-2, Qwen2, Mistral, ...)"
        )
    return "causal"


def backbone_misfit(config: Any) -> str | None:
    """What keeps a Llama or EuroBERT checkpoint from being the backbone weight for weight; None if nothing."""
    for key, value in FIXED:
        if getattr(config, key, value) != value:
            return f"has {key}={getattr(config, key)!r}; the backbone needs {value!r}"
    rope = getattr(config, "rope_parameters", None) or {}
    if rope.get("rope_type", "default") != "default":
        return f"scales RoPE ({rope['rope_type']!r}); the backbone has plain RoPE"
    if getattr(config, "head_dim", None) not in (None, config.hidden_size // config.num_attention_heads):
        return f"has head_dim={config.head_dim}, not hidden_size / num_attention_heads"
    return None


def check_imported_numbers(backbone: BackboneSpec, where: str) -> None:
    """Refuse, in one line, the numbers of an imported config no checkpoint of this kind holds."""
    if not (math.isfinite(backbone.rms_norm_eps) and 0 < backbone.rms_norm_eps <= MAX_RMS_NORM_EPS):
        raise PipelineError(f"{where}: rms_norm_eps {backbone.rms_norm_eps!r} is not an epsilon in (0, {MAX_RMS_NORM_EPS:g}]; refused")
    if not (math.isfinite(backbone.rope_theta) and backbone.rope_theta > 0):
        raise PipelineError(f"{where}: rope_theta {backbone.rope_theta!r} is not a finite positive base; refused")


def backbone_spec(config: Any, special: SpecialIds, architecture: str | None = None) -> BackboneSpec:
    """The checkpoint's ``BackboneSpec``; ``architecture``: the class of a decoder kept as it is,
    whose size is then a description (GPT-2 names no kv heads nor FFN width: 4 x hidden)."""
    heads = config.num_attention_heads
    size = SizeSpec(
        num_layers=config.num_hidden_layers,
        hidden_size=config.hidden_size,
        num_heads=heads,
        num_kv_heads=getattr(config, "num_key_value_heads", None) or heads,
        ffn_size=getattr(config, "intermediate_size", None) or getattr(config, "n_inner", None) or 4 * config.hidden_size,
    )
    rope = getattr(config, "rope_parameters", None) or {}
    return BackboneSpec(
        size=size,
        vocab_size=config.vocab_size,
        max_length=config.max_position_embeddings,
        pad_id=special.pad,
        bos_id=special.bos,
        eos_id=special.eos,
        mask_id=special.mask,
        rope_theta=float(rope.get("rope_theta", getattr(config, "rope_theta", None) or 10_000.0)),
        rms_norm_eps=float(getattr(config, "rms_norm_eps", None) or 1e-5),
        architecture=architecture,
    )


def load_model(spec: OutsideModelSpec, attention: Attention, where: str) -> Any:
    """The model as transformers loads it (local or hub, sharded or not), in float32. Converted
    to the backbone through its state dict, a tied LM head becomes its own copy of the
    embeddings (the backbone's head is untied)."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    model_class = AutoModelForCausalLM if attention == "causal" else AutoModelForMaskedLM
    try:
        model = model_class.from_pretrained(
            spec.path,
            revision=spec.revision,
            trust_remote_code=spec.trust_remote_code,
            dtype=torch.float32,
            attn_implementation=DEFAULT_ATTENTION,
        )
    except pickle.UnpicklingError:  # torch's advice, to load it unsafely, would run the pickle's code: not repeated
        raise PipelineError(
            f"{where}.path: the weights of {spec.path!r} are a pickle that holds more than tensors; refused unread"
            " (no code in it ran): a release you trust can be converted to safetensors"
        ) from None
    except (OSError, ValueError, SafetensorError) as error:  # also a cut or corrupt safetensors file
        raise PipelineError(f"{where}.path: cannot load the weights of {spec.path!r}: {str(error).strip().splitlines()[0]}") from None
    return model


def weights_digest(state: dict[str, torch.Tensor]) -> str:
    digest = hashlib.sha256()
    for name in sorted(state):
        digest.update(name.encode() + b"\0" + state[name].detach().float().numpy().tobytes())
    return digest.hexdigest()
