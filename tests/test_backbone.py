"""The backbone: one weight layout, two attention patterns, and the sparse LM loss."""

from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn.functional as F

from pipeline.batch import Batch
from pipeline.example import IGNORE
from pipeline.model.backbone import (
    BackboneSpec,
    build_language_model,
    language_model_loss,
    load_language_model,
    save_language_model,
)
from pipeline.tokenization.special_tokens import SpecialIds
from tests.conftest import MICRO, save_recorded_model

SPECIAL = SpecialIds(pad=0, bos=1, eos=2, mask=4, num_special=9, vocab_size=100, sentinels=())


def test_llama_checkpoint_loads_bidirectionally_and_back(tmp_path):
    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    causal = build_language_model(spec, "causal", seed=0)
    save_recorded_model(causal, spec, tmp_path)
    bidirectional = load_language_model(tmp_path, "bidirectional")
    assert type(bidirectional).__name__ == "EuroBertForMaskedLM"
    assert set(bidirectional.state_dict()) == set(causal.state_dict())
    assert bidirectional.config.rms_norm_eps == causal.config.rms_norm_eps == 1e-5
    for name, tensor in causal.state_dict().items():
        assert torch.equal(tensor, bidirectional.state_dict()[name]), name


@pytest.mark.parametrize("attention", ["causal", "bidirectional"])
def test_a_load_draws_no_weights_and_computes_what_was_saved(tmp_path, attention):
    """Loading builds the model without drawing the weights the checkpoint replaces (seconds at paper
    sizes), so the global random state is left as it was; the RoPE buffers, computed rather than
    drawn, and every saved weight give the saved model's logits exactly."""
    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    saved = build_language_model(spec, attention, seed=0)
    save_recorded_model(saved, spec, tmp_path)
    random_state = torch.get_rng_state()
    loaded = load_language_model(tmp_path, attention)
    assert torch.equal(torch.get_rng_state(), random_state)
    ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 16), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=ids).logits, saved(input_ids=ids).logits)


def test_an_export_loads_in_a_stock_client_and_is_readable_by_all(tmp_path):
    """A causal checkpoint as EuroBertForMaskedLM straight from transformers: its mask id is
    in config.json (not EuroBERT's default, outside this vocabulary); files are 0644 like
    every other output."""
    import json
    import warnings

    from transformers import EuroBertForMaskedLM

    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    save_language_model(build_language_model(spec, "causal", seed=0), spec, tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["mask_token_id"] == SPECIAL.mask
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EuroBertForMaskedLM.from_pretrained(tmp_path).config.mask_token_id == SPECIAL.mask
    assert {path.name: path.stat().st_mode & 0o777 for path in tmp_path.iterdir()} == dict.fromkeys(
        ("model.safetensors", "config.json", "generation_config.json", "backbone.json"), 0o644
    )


def test_one_layer_computes_the_same_function_at_the_last_position(tmp_path):
    """With one layer, the last position attends to everything under both patterns."""
    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    save_recorded_model(build_language_model(spec, "causal", seed=3), spec, tmp_path)
    causal, bidirectional = load_language_model(tmp_path, "causal"), load_language_model(tmp_path, "bidirectional")
    ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 12))
    with torch.no_grad():
        a, b = causal(ids).logits, bidirectional(ids).logits
    torch.testing.assert_close(a[:, -1], b[:, -1])
    assert not torch.allclose(a[:, 0], b[:, 0])  # the first position differs: bidirectional sees the future


def test_sparse_loss_equals_dense_loss():
    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    model = build_language_model(spec, "bidirectional", seed=0)
    ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 10))
    labels = torch.full_like(ids, IGNORE)
    labels[0, 3], labels[1, 7], labels[1, 0] = 11, 42, 99
    sparse = language_model_loss(model, Batch(ids, labels, "bidirectional"))
    dense = F.cross_entropy(model(ids).logits.reshape(-1, SPECIAL.vocab_size), labels.reshape(-1), ignore_index=IGNORE)
    torch.testing.assert_close(sparse, dense)


def test_a_whole_model_compile_is_compiled_once_whatever_the_batch_s_labelled_count():
    """The sparse head stays eager under torch.compile (backbone.sparse_head_loss): MLM's masks label
    another number of positions in every batch, and a compiled head was recompiled at each (the H200's
    whole-model attempt never finished its first steps). Same loss and gradients as eager."""
    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    model = build_language_model(spec, "bidirectional", seed=0)
    compiled = torch.compile(lambda batch: language_model_loss(model, batch), backend="aot_eager")
    generator = torch.Generator().manual_seed(0)
    with torch._dynamo.config.patch(error_on_recompile=True):  # a second compile of any frame raises
        for labelled in (3, 7, 12):
            ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 10), generator=generator)
            labels = torch.full_like(ids, IGNORE).view(-1)
            where = torch.randperm(ids.numel(), generator=generator)[:labelled]
            labels[where] = ids.view(-1)[where]
            batch = Batch(ids, labels.view(2, 10), "bidirectional")
            loss = compiled(batch)
            gradient = torch.autograd.grad(loss, model.model.embed_tokens.weight)[0]
            eager = language_model_loss(model, batch)
            torch.testing.assert_close(loss, eager)
            torch.testing.assert_close(gradient, torch.autograd.grad(eager, model.model.embed_tokens.weight)[0])


@pytest.mark.parametrize(("attention", "kernel"), [("causal", "sdpa"), ("bidirectional", "flex_attention")])
def test_a_whole_model_compile_traces_split_samples_in_one_graph(attention, kernel):
    """Issue 55's whole-model compile: the backbone on split samples (their mask and positions built in
    the graph, the config read as constants) is one graph with no break; only the sparse head is left out
    of it, by design (sparse_head_loss). FlexAttention has no backward on the CPU, so its case is traced
    without gradients."""
    spec = BackboneSpec.create(MICRO, SPECIAL, max_length=32)
    model = build_language_model(spec, attention, seed=0)
    model.set_attn_implementation(kernel)
    ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 16))
    batch = Batch(ids, ids.clone(), attention, segment_starts=torch.tensor([5, 11]))
    torch._dynamo.reset()
    with torch.no_grad() if kernel == "flex_attention" else contextlib.nullcontext():
        explained = torch._dynamo.explain(lambda b: language_model_loss(model, b))(batch)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), [str(r.reason) for r in explained.break_reasons]
    assert [str(r.reason).splitlines()[0] for r in explained.break_reasons] == ["Skip calling `torch.compiler.disable()`d function"]
