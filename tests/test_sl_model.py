"""The study's released checkpoints (``model_type: sl_model``): stand-ins with Optimus' config
names and module names (tests/paper_hub.py) imported by ``import-model`` give the logits of
Optimus' own forward pass, written out here from its code, on the same weights; a checkpoint
that does not map exactly is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from transformers import AutoTokenizer

from pipeline.__main__ import main
from pipeline.config import SizeSpec
from pipeline.files import read_json
from pipeline.model.backbone import load_language_model, read_backbone_spec
from tests.conftest import write_llama_like_tokenizer
from tests.paper_hub import write_release_standin

GQA = SizeSpec(num_layers=2, hidden_size=32, num_heads=4, num_kv_heads=2, ffn_size=64)
# The released 210m's head layout (12 heads, 12 kv heads: Optimus' eurobert_config["210m"]), narrowed.
MHA = SizeSpec(num_layers=2, hidden_size=24, num_heads=3, num_kv_heads=3, ffn_size=48)


def optimus_forward(state: dict[str, torch.Tensor], config: dict, input_ids: torch.Tensor, causal: bool) -> torch.Tensor:
    """Optimus' EuroBERT forward (optimus/trainer/model/model.py), unpadded, in float32: its fused
    qkv split, RoPE rotating the halves of a head ([-low, high]) with frequencies repeated
    ``m (2 d)``, kv heads repeated per query group, SwiGLU silu(fc_1) * fc_2, RMSNorm in float.
    ids (B, T) -> logits (B, T, V)."""
    heads, kv_heads, eps = config["num_head"], config["num_kv_head"], config["rms_norm_eps"]
    head_dim = config["embedding_size"] // heads
    batch, length = input_ids.shape
    thetas = 1.0 / config["rope_base"] ** (torch.arange(0, head_dim, 2).float() / head_dim)
    angles = torch.outer(torch.arange(length).float(), thetas).repeat(1, 2)  # (T, head_dim)

    def rms(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def rope(x: torch.Tensor) -> torch.Tensor:  # (B, heads, T, head_dim)
        high, low = x.chunk(2, dim=-1)
        return x * angles.cos() + torch.cat([-low, high], dim=-1) * angles.sin()

    def heads_of(x: torch.Tensor, count: int) -> torch.Tensor:  # (B, T, count * head_dim) -> (B, count, T, head_dim)
        return x.view(batch, length, count, head_dim).transpose(1, 2)

    x = state["embedding.weight"][input_ids]
    for layer in range(config["num_layer"]):
        weight = {name[len(f"blocks.{layer}.") :]: w for name, w in state.items() if name.startswith(f"blocks.{layer}.")}
        h = rms(x, weight["attn_norm.weight"])
        q, k, v = (h @ weight["attn.qkv_proj.weight"].T).split([heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], -1)
        q, k, v = rope(heads_of(q, heads)), rope(heads_of(k, kv_heads)), heads_of(v, kv_heads)
        k, v = k.repeat_interleave(heads // kv_heads, dim=1), v.repeat_interleave(heads // kv_heads, dim=1)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=causal).transpose(1, 2).reshape(batch, length, -1)
        x = x + attended @ weight["attn.out_proj.weight"].T
        h = rms(x, weight["mlp_norm.weight"])
        x = x + (F.silu(h @ weight["mlp.fc_1.weight"].T) * (h @ weight["mlp.fc_2.weight"].T)) @ weight["mlp.proj.weight"].T
    return rms(x, state["final_layernorm.weight"]) @ state["lm_head.weight"].T


def release(root: Path, size: SizeSpec = GQA, prefix: str = "model.") -> Path:
    tokenizer = write_llama_like_tokenizer(root / "tokenizer")
    return write_release_standin(root / "release", tokenizer, size, seed=3, prefix=prefix)


def import_release(path: Path, out: Path, objective: str = "mlm") -> int:
    spec = {"name": "released", "path": str(path), "objective": objective}
    return main(["import-model", "--spec", json.dumps(spec), "--num-sentinel-tokens", "4", "--out", str(out)])


@pytest.mark.parametrize(("size", "prefix", "objective"), [(GQA, "model.", "mlm"), (MHA, "", "mlm"), (GQA, "model.", "clm")])
def test_a_released_checkpoint_gives_optimus_logits_on_the_same_weights(tmp_path, size, prefix, objective):
    path = release(tmp_path, size, prefix)
    assert import_release(path, tmp_path / "model", objective) == 0
    attention = "causal" if objective == "clm" else "bidirectional"
    ours = load_language_model(tmp_path / "model", attention).eval()
    config = json.loads((path / "config.json").read_text())
    state = {name[len(prefix) :]: tensor for name, tensor in load_file(path / "model.safetensors").items()}
    input_ids = torch.randint(0, 380, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = optimus_forward(state, config, input_ids, causal=objective == "clm")
        assert torch.allclose(ours(input_ids=input_ids).logits, expected, atol=1e-5)
    spec = read_backbone_spec(tmp_path / "model")
    assert (spec.size, spec.max_length, spec.rope_theta, spec.rms_norm_eps) == (size, 2048, 10_000.0, 1e-5)
    record = read_json(tmp_path / "model" / "provenance.json")["imported"]
    assert (record["architecture"], record["attention"]) == ("SLModel", attention) and record["modelling_code"].startswith("none")
    assert AutoTokenizer.from_pretrained(tmp_path / "model").get_vocab() == AutoTokenizer.from_pretrained(path).get_vocab()


def test_transformers_names_are_taken_as_they_are(tmp_path):
    """The other layout a release may have: the weights already under Llama/EuroBERT names."""
    path = release(tmp_path)
    assert import_release(path, tmp_path / "optimus") == 0
    converted = load_file(tmp_path / "optimus" / "model.safetensors")
    (path / "model.safetensors").unlink()
    save_file(converted, path / "model.safetensors")
    assert import_release(path, tmp_path / "named") == 0
    assert load_file(tmp_path / "named" / "model.safetensors").keys() == converted.keys()
    assert all(torch.equal(load_file(tmp_path / "named" / "model.safetensors")[k], v) for k, v in converted.items())


def edit_weights(path: Path, change) -> None:
    state = load_file(path / "model.safetensors")
    change(state)
    save_file(state, path / "model.safetensors")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.pop("model.blocks.1.mlp.fc_2.weight"), "missing 'model.layers.1.mlp.up_proj.weight'"),
        (lambda s: s.update({"model.blocks.0.attn.bias": torch.zeros(3)}), "weight 'model.blocks.0.attn.bias' has no place"),
        (lambda s: s.update({"other.scale": torch.ones(1)}), "weight 'other.scale' is outside the model's prefix 'model.'"),
        (
            lambda s: s.update({"model.blocks.0.attn.qkv_proj.weight": torch.zeros(40, 32)}),
            "blocks.0.attn.qkv_proj has 40 rows, not (4 + 2 x 2) x 8",
        ),
        (lambda s: s.update({"model.blocks.0.mlp.proj.weight": torch.zeros(32, 60)}), "mlp.down_proj.weight has shape (32, 60)"),
    ],
)
def test_weights_that_do_not_map_exactly_are_refused_naming_the_key(tmp_path, capsys, change, message):
    path = release(tmp_path)
    edit_weights(path, change)
    assert import_release(path, tmp_path / "model") != 0
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1 and not (tmp_path / "model").exists()


def test_a_config_without_heads_or_weights_without_safetensors_is_refused(tmp_path, capsys):
    path = release(tmp_path)
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({k: v for k, v in config.items() if k != "num_kv_head"}))
    assert import_release(path, tmp_path / "a") != 0
    assert "config.json must name the attention heads and kv heads" in capsys.readouterr().err
    (path / "config.json").write_text(json.dumps(config))
    (path / "model.safetensors").rename(path / "pytorch_model.bin")
    assert import_release(path, tmp_path / "b") != 0
    assert "has no .safetensors weights (it has pytorch_model.bin: a pickle, which is never loaded" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("rms_norm_eps", float("nan"), "rms_norm_eps nan must be a positive finite number"),
        ("rms_norm_eps", 1e30, "rms_norm_eps 1e+30 is not an epsilon in (0, 0.01]"),
        ("rope_base", 0.0, "rope_base 0.0 must be a positive finite number"),
        ("rope_base", -1.0, "rope_base -1.0 must be a positive finite number"),
        ("rope_base", float("inf"), "rope_base inf must be a positive finite number"),
        ("block_size", 10**12, "block_size 1000000000000 must be a whole number from 1 to 1,048,576"),
        ("block_size", 0, "block_size 0 must be a whole number from 1 to 1,048,576"),
        ("num_head", 0, "num_head 0 must be a whole number from 1 to 1,024"),
        ("num_head", "2", "num_head '2' must be a whole number from 1 to 1,024"),
        ("num_head", -2, "num_head -2 must be a whole number from 1 to 1,024"),
        ("num_head", True, "num_head True must be a whole number from 1 to 1,024"),
        ("num_head", 3, "blocks.0.attn.qkv_proj has 64 rows, not (3 + 2 x 2) x 10"),
        ("mask_token_id", "x", "mask_token_id 'x' must be a token id"),
    ],
)
def test_config_values_that_would_import_a_wrong_model_are_refused_naming_the_key(tmp_path, capsys, key, value, message):
    """Each imported with rc 0 and wrong or NaN logits before: a NaN epsilon, a zero, negative or
    infinite RoPE base, an unbounded context length, head counts that are not whole numbers."""
    path = release(tmp_path)
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**config, key: value}))
    assert import_release(path, tmp_path / "model") == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1 and not (tmp_path / "model").exists()


@pytest.mark.parametrize("dtype", [torch.int32, torch.bool])
def test_integer_or_bool_weights_are_refused_not_cast(tmp_path, capsys, dtype):
    path = release(tmp_path)
    edit_weights(path, lambda s: s.update({"model.final_layernorm.weight": s["model.final_layernorm.weight"].to(dtype)}))
    assert import_release(path, tmp_path / "model") == 2
    assert f"weight 'model.final_layernorm.weight' is {str(dtype).removeprefix('torch.')}, not floating point" in capsys.readouterr().err


def test_a_config_too_large_or_too_deep_is_refused_before_it_is_parsed(tmp_path, capsys):
    path = release(tmp_path)
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text('{"model_type": "sl_model", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert import_release(path, tmp_path / "a") == 2
    assert capsys.readouterr().err == f"error: {path / 'config.json'}: not JSON (RecursionError)\n" and not (tmp_path / "a").exists()
    (path / "config.json").write_text(json.dumps({**config, "padding": "x" * (2 << 20)}))
    assert import_release(path, tmp_path / "b") == 2
    assert "over the 1,048,576 a model's config.json is read at" in capsys.readouterr().err
