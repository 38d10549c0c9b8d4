"""Checkpoints made outside this harness, in the hub layout, built here (no hub): a Llama
decoder and a EuroBERT encoder become checkpoints of the backbone with the same outputs;
other families and bad paths are refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, EuroBertConfig, EuroBertForMaskedLM, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from pipeline.__main__ import main
from pipeline.files import read_json
from pipeline.model.backbone import load_language_model, read_backbone_spec
from tests.conftest import write_llama_like_tokenizer

SHAPE = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 128}


def outside_checkpoint(root: Path, family: str) -> tuple[Path, torch.nn.Module]:
    """A tiny model of ``family`` with a Llama-3-like tokenizer, saved with save_pretrained."""
    out = write_llama_like_tokenizer(root / family)
    tokenizer = AutoTokenizer.from_pretrained(out)
    ids = {"vocab_size": len(tokenizer), "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id}
    torch.manual_seed(0)
    if family == "llama":  # Llama-3's RoPE theta and RMSNorm epsilon, not the backbone's defaults
        model = LlamaForCausalLM(LlamaConfig(**SHAPE, **ids, rope_parameters={"rope_type": "default", "rope_theta": 500000.0}, rms_norm_eps=1e-6))
    elif family == "eurobert":
        model = EuroBertForMaskedLM(EuroBertConfig(**SHAPE, **ids, pad_token_id=ids["eos_token_id"], mask_token_id=ids["eos_token_id"]))
    else:
        model = GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=1, n_head=2, **ids))
    model.save_pretrained(out)
    return out, model.eval()


def import_model(path: Path, out: Path, **spec) -> int:
    return main(["import-model", "--spec", json.dumps({"name": "outside", "path": str(path), "objective": "clm", **spec}), "--num-sentinel-tokens", "4", "--out", str(out)])


@pytest.mark.parametrize(("family", "attention"), [("llama", "causal"), ("eurobert", "bidirectional")])
def test_an_outside_checkpoint_becomes_a_backbone_checkpoint_with_the_same_outputs(family, attention, tmp_path):
    path, original = outside_checkpoint(tmp_path, family)
    assert import_model(path, tmp_path / "model") == 0
    ours = load_language_model(tmp_path / "model", attention).eval()
    input_ids = torch.randint(0, 380, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.allclose(ours(input_ids=input_ids).logits, original(input_ids=input_ids).logits, atol=1e-5)
    spec = read_backbone_spec(tmp_path / "model")
    assert (spec.size.num_layers, spec.size.num_kv_heads, spec.max_length) == (2, 2, 128)
    if family == "llama":
        assert (spec.rope_theta, spec.rms_norm_eps) == (500000.0, 1e-6)
    record = read_json(tmp_path / "model" / "provenance.json")["imported"]
    assert record["attention"] == attention and len(record["weights_sha256"]) == 64
    assert record["tokenizer"]["roles"]["mask_token"][0] == "<|reserved_special_token_0|>"
    assert AutoTokenizer.from_pretrained(tmp_path / "model").get_vocab() == AutoTokenizer.from_pretrained(path).get_vocab()


def test_another_family_or_a_bad_path_is_a_one_line_error(tmp_path, capsys):
    path, _ = outside_checkpoint(tmp_path, "gpt2")
    capsys.readouterr()  # what saving it printed
    assert import_model(path, tmp_path / "model") == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: outside_models[outside]: '{path}' is a GPT2LMHeadModel (gpt2); the backbone takes Llama-layout decoders "
        "(LlamaForCausalLM) and EuroBERT encoders (EuroBertForMaskedLM)\n"
    )
    assert import_model(tmp_path / "absent", tmp_path / "model") == 2
    assert capsys.readouterr().err == f"error: outside_models[outside].path: '{tmp_path / 'absent'}': no such directory (a hub id has the form owner/name)\n"
    assert not (tmp_path / "model").exists()


def test_a_checkpoint_of_this_harness_imports_as_itself(init_dir, tmp_path):
    """Its tokenizer names every role with our tokens: none is reassigned, and the weights,
    ids and outputs are those of the original."""
    assert import_model(init_dir, tmp_path / "model") == 0
    roles = read_json(tmp_path / "model" / "provenance.json")["imported"]["tokenizer"]["roles"]
    assert roles["mask_token"][0] == "<mask>" and roles["nlu_token"][0] == "<nlu>" and roles["extra_id_0_token"][0] == "<extra_id_0>"
    original, imported = (load_language_model(path, "causal").eval() for path in (init_dir, tmp_path / "model"))
    input_ids = torch.randint(20, 400, (2, 12), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert torch.equal(original(input_ids=input_ids).logits, imported(input_ids=input_ids).logits)


def test_the_report_tabulates_outside_models_beside_this_runs_clm_and_mlm(tmp_path):
    """An outside model's scores.json (here the fake CLM's, renamed) goes through the same
    protocol into outside_scores.csv and the report's Outside models section."""
    import pandas as pd

    from tests.test_report_fakes import write_fake_results

    tree = write_fake_results(tmp_path / "fake", tasks=("sentiment",))
    [source] = [path for path in tree.scores if path.parent.name == "clm-tiny"]
    record = {**json.loads(source.read_text()), "run": "eurobert-outside", "objective": "eurobert", "size": "outside", "objective_kind": "mlm"}
    outside = tmp_path / "fake" / "results" / "finetune_outside" / "sentiment" / "eurobert" / "scores.json"
    outside.parent.mkdir(parents=True)
    outside.write_text(json.dumps(record))
    assert main([*tree.aggregate_argv(tmp_path / "tables"), "--outside-scores", str(outside)]) == 0
    scores = pd.read_csv(tmp_path / "tables" / "outside_scores.csv")
    clm = pd.read_csv(tmp_path / "tables" / "run_scores.csv").query("run == 'clm-tiny'")
    assert list(scores["run"]) == ["eurobert-outside"] and scores["test_mean"].iloc[0] == clm["test_mean"].iloc[0]
    assert main([*tree.report_argv(tmp_path / "tables", tmp_path / "reports")]) == 0
    html = (tmp_path / "reports" / "replication.html").read_text()
    section = html[html.index('<section id="outside">') :].split("</section>", 1)[0]
    assert '<td class="key">eurobert</td><td class="">outside</td>' in section
    assert '<td class="key">clm-tiny</td><td class="">this harness</td>' in section and '<td class="key">mlm-tiny</td>' in section
