"""Checkpoints made outside this harness, in the hub layout, built here (no hub): a Llama
decoder and a EuroBERT encoder become checkpoints of the backbone with the same outputs; a
GPT-2, a Qwen2 or a Llama with scaled RoPE is kept as it is and attends both ways when asked; EuroBERT's own
repository code runs only under trust_remote_code; other families and bad paths are refused
in one line."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import (
    AutoTokenizer,
    DistilBertConfig,
    EuroBertConfig,
    EuroBertForMaskedLM,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
)

from pipeline.__main__ import main
from pipeline.config import SizeSpec
from pipeline.errors import PipelineError
from pipeline.files import read_json
from pipeline.model.backbone import BackboneSpec, load_language_model, read_backbone_spec
from tests.conftest import REPO, write_llama_like_tokenizer
from tests.paper_hub import AUTO_MAP, with_remote_code

SHAPE = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 128,
}


def outside_checkpoint(root: Path, family: str) -> tuple[Path, torch.nn.Module]:
    """A tiny model of ``family`` with a Llama-3-like tokenizer, saved with save_pretrained."""
    out = write_llama_like_tokenizer(root / family)
    tokenizer = AutoTokenizer.from_pretrained(out)
    ids = {"vocab_size": len(tokenizer), "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id}
    torch.manual_seed(0)
    if family == "llama":  # Llama-3's RoPE theta and RMSNorm epsilon, not the backbone's defaults
        model = LlamaForCausalLM(
            LlamaConfig(**SHAPE, **ids, rope_parameters={"rope_type": "default", "rope_theta": 500000.0}, rms_norm_eps=1e-6)
        )
    elif family in ("eurobert", "eurobert_remote"):
        model = EuroBertForMaskedLM(EuroBertConfig(**SHAPE, **ids, pad_token_id=ids["eos_token_id"], mask_token_id=ids["eos_token_id"]))
    elif family == "llama31":  # Llama 3.1's scaled RoPE, which the backbone lacks: kept as it is
        rope = {
            "rope_type": "llama3",
            "rope_theta": 500000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 32,
        }
        model = LlamaForCausalLM(LlamaConfig(**SHAPE, **ids, rope_parameters=rope))
    elif family == "qwen2":  # biases on q, k, v: not the backbone's layout, kept as it is; rows padded to a multiple of 64, as Qwen2's
        model = Qwen2ForCausalLM(Qwen2Config(**SHAPE, **{**ids, "vocab_size": 448}, tie_word_embeddings=True))
    else:  # GPT-2: learned positions, LayerNorm, GELU, a tied head; the size of the micro preset less its grouped kv heads
        model = GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=1, n_head=2, n_inner=64, n_positions=128, **ids))
    model.save_pretrained(out)
    if family == "eurobert_remote":
        with_remote_code(out)
    return out, model.eval()


def import_model(path: Path, out: Path, **spec) -> int:
    return main(
        [
            "import-model",
            "--spec",
            json.dumps({"name": "outside", "path": str(path), "objective": "clm", **spec}),
            "--num-sentinel-tokens",
            "4",
            "--out",
            str(out),
        ]
    )


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
    provenance = read_json(tmp_path / "model" / "provenance.json")
    record = provenance["imported"]
    assert record["attention"] == attention and len(record["weights_sha256"]) == 64
    assert list(provenance["outputs"]) == ["model.safetensors", "tokenizer.json", "tokenizer_config.json"]  # what its consumers verify
    assert record["tokenizer"]["roles"]["mask_token"][0] == "<|reserved_special_token_0|>"
    assert AutoTokenizer.from_pretrained(tmp_path / "model").get_vocab() == AutoTokenizer.from_pretrained(path).get_vocab()


@pytest.mark.parametrize("family", ["gpt2", "qwen2", "llama31"])
def test_a_decoder_the_backbone_does_not_fit_is_kept_as_it_is_and_attends_both_ways_when_asked(family, tmp_path):
    path, original = outside_checkpoint(tmp_path, family)
    assert import_model(path, tmp_path / "model") == 0
    spec = read_backbone_spec(tmp_path / "model")
    assert spec.architecture == type(original).__name__
    input_ids = torch.randint(0, 380, (2, 12), generator=torch.Generator().manual_seed(1))
    changed = input_ids.clone()
    changed[:, 8] = (changed[:, 8] + 1) % 380
    causal, bidirectional = (load_language_model(tmp_path / "model", attention).eval() for attention in ("causal", "bidirectional"))
    with torch.no_grad():
        assert torch.allclose(causal(input_ids=input_ids).logits, original(input_ids=input_ids).logits, atol=1e-5)
        first = [
            model.base_model(input_ids=ids).last_hidden_state[:, 0] for model in (causal, bidirectional) for ids in (input_ids, changed)
        ]
    assert torch.equal(first[0], first[1])  # causal: position 0 never sees position 8
    assert not torch.allclose(first[2], first[3])  # bidirectional: it does
    record = read_json(tmp_path / "model" / "provenance.json")["imported"]
    assert record["architecture"] == type(original).__name__ and record["modelling_code"] == "transformers"


@pytest.mark.parametrize(
    ("family", "size"),
    [
        ("gpt2", {"num_layers": 1, "hidden_size": 32, "num_heads": 2, "num_kv_heads": 2, "ffn_size": 64}),
        ("eurobert_remote", {"num_layers": 2, "hidden_size": 32, "num_heads": 4, "num_kv_heads": 2, "ffn_size": 64}),
    ],
)
def test_an_outside_model_is_fine_tuned_and_continued_with_mlm_on_its_own_tokens(family, size, tmp_path):
    """GPT-2 (kept as it is) and a EuroBERT as released (converted, its own code trusted)
    through the two stages an outside model goes through: fine-tuning under bidirectional
    attention, and MLM continued on the corpus packed with its tokenizer."""
    from tests.conftest import corpus_texts, pack_corpus, pretrain_spec_json, write_corpus
    from tests.test_finetune import finetune_spec, make_task

    path, _ = outside_checkpoint(tmp_path, family)
    model_dir = tmp_path / "model"
    assert import_model(path, model_dir, trust_remote_code=family == "eurobert_remote") == 0
    task = make_task(tmp_path / "task")
    assert (
        main(["finetune", "--spec", finetune_spec(), "--model", str(model_dir), "--task-dir", str(task), "--out", str(tmp_path / "ft")])
        == 0
    )
    assert read_json(tmp_path / "ft" / "scores.json")["attention"] == "bidirectional"

    texts = corpus_texts()
    tokens = pack_corpus(write_corpus(tmp_path / "corpus", texts[:-12], texts[-12:]), model_dir, tmp_path / "tokens")
    spec = {**json.loads(pretrain_spec_json({"kind": "mlm", "mask_ratio": 0.4}, budget_steps=6)), "size": size}
    argv = ["pretrain", "--spec", json.dumps(spec), "--tokens", str(tokens), "--init", str(model_dir)]
    assert main([*argv, "--work-dir", str(tmp_path / "resume"), "--out", str(tmp_path / "cpt")]) == 0
    before, after = (load_language_model(directory, "bidirectional") for directory in (model_dir, tmp_path / "cpt" / "model"))
    assert type(after) is type(before)  # GPT-2 stays GPT-2 (attending both ways), EuroBERT the backbone's EuroBERT
    assert getattr(after.config, "is_causal", False) is False
    changed = [name for name, tensor in after.state_dict().items() if not torch.equal(tensor, before.state_dict()[name])]
    assert len(changed) > len(after.state_dict()) // 2  # MLM trained the layers, not a head alone
    summary = read_json(tmp_path / "cpt" / "summary.json")
    assert summary["heldout_metric"]["name"] == "masked_token_accuracy" and summary["trained_steps"] == 6


def test_the_repository_s_own_code_runs_only_under_trust_remote_code(tmp_path, capsys):
    """A EuroBERT checkpoint as released (auto_map, its modelling files): transformers' own
    EuroBERT by default, the repository's when the config says so; a model only its own code
    can load is refused naming the key."""
    path, original = outside_checkpoint(tmp_path, "eurobert_remote")
    for trust, code in ((False, "transformers"), (True, "repository")):
        out = tmp_path / f"model_{trust}"
        assert import_model(path, out, trust_remote_code=trust) == 0
        assert read_json(out / "provenance.json")["imported"]["modelling_code"] == code
    assert any(name.startswith("transformers_modules") and name.endswith("modeling_eurobert") for name in sys.modules)
    capsys.readouterr()
    config = read_json(path / "config.json")
    (path / "config.json").write_text(
        json.dumps({**config, "model_type": "eurobert_fork", "auto_map": {"AutoConfig": AUTO_MAP["AutoConfig"]}})
    )
    assert import_model(path, tmp_path / "refused") == 2
    assert capsys.readouterr().err == (
        f"error: outside_models[outside]: '{path}' runs only with its repository's own code; "
        "set outside_models[outside].trust_remote_code: true if you trust it\n"
    )


def test_another_family_or_a_bad_path_is_a_one_line_error(tmp_path, capsys):
    path = write_llama_like_tokenizer(tmp_path / "distilbert")
    DistilBertConfig(vocab_size=412, dim=32, n_layers=1, n_heads=2, hidden_dim=64).save_pretrained(path)
    assert import_model(path, tmp_path / "model") == 2
    assert capsys.readouterr().err == (
        f"error: outside_models[outside]: '{path}' is a DistilBertConfig (distilbert); the harness takes EuroBERT encoders "
        "and causal LMs whose code transformers ships (Llama, GPT-2, Qwen2, Mistral, ...)\n"
    )
    path, _ = outside_checkpoint(tmp_path, "eurobert")
    config = read_json(path / "config.json")
    (path / "config.json").write_text(json.dumps({**config, "hidden_act": "gelu"}))
    capsys.readouterr()
    assert import_model(path, tmp_path / "model") == 2
    assert capsys.readouterr().err == f"error: outside_models[outside]: '{path}' has hidden_act='gelu'; the backbone needs 'silu'\n"
    assert import_model(tmp_path / "absent", tmp_path / "model") == 2
    assert (
        capsys.readouterr().err
        == f"error: outside_models[outside].path: '{tmp_path / 'absent'}': no such directory (a hub id has the form owner/name)\n"
    )
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
    from report_fakes import record as recorded
    from report_fakes import write_fake_results

    tree = write_fake_results(tmp_path / "fake", tasks=("sentiment",))
    [source] = [path for path in tree.scores if path.parent.name == "clm-tiny"]
    record = {
        **json.loads(source.read_text()),
        "run": "eurobert-outside",
        "objective": "eurobert",
        "size": "outside",
        "objective_kind": "mlm",
    }
    outside = tmp_path / "fake" / "results" / "finetune_outside" / "sentiment" / "eurobert" / "scores.json"
    outside.parent.mkdir(parents=True)
    outside.write_text(json.dumps(record))
    recorded(outside, json.loads((source.parent / "provenance.json").read_text())["spec"])
    tree.outside_scores.append(outside)
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 0
    scores = pd.read_csv(tmp_path / "tables" / "outside_scores.csv")
    clm = pd.read_csv(tmp_path / "tables" / "run_scores.csv").query("run == 'clm-tiny'")
    assert list(scores["run"]) == ["eurobert-outside"] and scores["test_mean"].iloc[0] == clm["test_mean"].iloc[0]
    assert main([*tree.report_argv(tmp_path / "tables", tmp_path / "reports")]) == 0
    html = (tmp_path / "reports" / "replication.html").read_text()
    section = html[html.index('<section id="outside">') :].split("</section>", 1)[0]
    assert '<td class="key">eurobert</td><td class="">outside</td>' in section
    assert '<td class="key">clm-tiny</td><td class="">this harness</td>' in section and '<td class="key">mlm-tiny</td>' in section


def planted_repository(root: Path, marker_dir: Path, carrier: str) -> Path:
    """A Llama checkpoint whose ``carrier`` ("tokenizer" or "model") names code of its own in
    auto_map; importing any of its files writes a marker, so a test sees whether it ran."""
    path, _ = outside_checkpoint(root, "llama")
    for module in ("tokenization_planted", "configuration_planted", "modeling_planted"):
        (path / f"{module}.py").write_text(f"from pathlib import Path\n\nPath({str(marker_dir / module)!r}).touch()\n")
    if carrier == "tokenizer":
        config = read_json(path / "tokenizer_config.json")
        auto_map = {"AutoTokenizer": ["tokenization_planted.PlantedTokenizer", None]}
        (path / "tokenizer_config.json").write_text(json.dumps({**config, "tokenizer_class": "PlantedTokenizer", "auto_map": auto_map}))
    else:
        config = read_json(path / "config.json")
        auto_map = {"AutoConfig": "configuration_planted.PlantedConfig", "AutoModelForCausalLM": "modeling_planted.PlantedForCausalLM"}
        (path / "config.json").write_text(json.dumps({**config, "model_type": "planted", "auto_map": auto_map}))
    return path


@pytest.mark.parametrize("carrier", ["tokenizer", "model"])
def test_no_repository_code_runs_unless_the_config_trusts_it_even_if_someone_types_y(carrier, tmp_path):
    """transformers asks y/N before it runs a repository's code when nobody said; the stages
    say trust_remote_code=False to every from_pretrained (tokenizer, config, model) and close
    standard input, so a "y" waiting there is never read, and nothing of the repository runs."""
    markers = tmp_path / "markers"
    markers.mkdir()
    path = planted_repository(tmp_path, markers, carrier)
    spec = json.dumps({"name": "outside", "path": str(path), "objective": "clm"})
    command = [
        sys.executable,
        "-m",
        "pipeline",
        "import-model",
        "--spec",
        spec,
        "--num-sentinel-tokens",
        "4",
        "--out",
        str(tmp_path / "out"),
    ]
    done = subprocess.run(command, input="y\ny\ny\n", capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 2
    where = "outside_models[outside].tokenizer.path: " if carrier == "tokenizer" else "outside_models[outside]: "
    what = f"{str(path)!r}'s tokenizer runs" if carrier == "tokenizer" else f"{str(path)!r} runs"
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: {where}{what} only with its repository's own code; set outside_models[outside].trust_remote_code: true if you trust it"
    )
    assert sorted(p.name for p in markers.iterdir()) == []
    assert not (tmp_path / "out").exists()


def test_a_symbolic_link_to_a_model_of_this_workflow_is_checked_as_that_model(init_dir, tmp_path, capsys):
    """A link named outside results/ to a pretrained model whose weights changed behind their
    provenance record (its embedding zeroed after the header) is refused as the model itself is."""
    import shutil

    from pipeline.provenance import write_provenance

    run = tmp_path / "results" / "pretrain" / "clm-micro"
    shutil.copytree(init_dir, run / "model")
    (run / "model" / "provenance.json").unlink()
    weights = run / "model" / "model.safetensors"
    write_provenance(run, {"test": True}, {}, outputs=[weights])  # where a pretrain job records its model
    data = bytearray(weights.read_bytes())
    data[-4096:] = bytes(4096)  # the tail of the tensors, the header untouched
    weights.write_bytes(bytes(data))
    (tmp_path / "clm_link").symlink_to(run / "model")
    assert import_model(tmp_path / "clm_link", tmp_path / "imported") == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {weights}: sha256 ") and "it changed since" in error and not (tmp_path / "imported").exists()


def test_an_imported_config_s_epsilon_or_rope_base_out_of_any_checkpoint_s_range_is_refused():
    from pipeline.model.outside import check_imported_numbers

    spec = BackboneSpec(SizeSpec(2, 8, 2, 2, 16), 40, 16, 0, 1, 2, 3)
    check_imported_numbers(spec, "w")  # the backbone's own numbers pass
    for changes, message in (
        ({"rms_norm_eps": 1e30}, "w: rms_norm_eps 1e+30 is not an epsilon in (0, 0.01]; refused"),
        ({"rms_norm_eps": 0.0}, "w: rms_norm_eps 0.0 is not an epsilon in (0, 0.01]; refused"),
        ({"rope_theta": float("inf")}, "w: rope_theta inf is not a finite positive base; refused"),
    ):
        with pytest.raises(PipelineError) as error:
            check_imported_numbers(dataclasses.replace(spec, **changes), "w")
        assert str(error.value) == message
