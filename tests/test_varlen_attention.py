"""pretraining.compute.attention: varlen (pipeline/model/varlen_attention.py), checked on the CPU.

torch's varlen kernel is CUDA only, so here it is replaced by :func:`reference_kernel`: plain SDPA over
each span the offsets name, taking exactly the options of one torch version's signature. What is checked
is everything around the kernel: the offsets, the (B, H, L, D) <-> (B * L, H, D) layout, the causal flag of
each backbone class, grouped-query heads (the micro size has 2 query heads, 1 key/value head), the scale,
the positions of split samples, a pretraining run through the trainer, and a whole-model compile. The kernel itself is checked
on a GPU, by bench/pretrain_throughput.py's loss agreement (bench/gpu_speed.sh's ``varlen`` attempt).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from pipeline.__main__ import main
from pipeline.batch import Batch
from pipeline.errors import PipelineError
from pipeline.example import IGNORE
from pipeline.model import varlen_attention
from pipeline.model.backbone import attention_implementation, encode, language_model_loss
from pipeline.model.varlen_attention import sample_offsets, varlen_attention_forward
from tests.conftest import pretrain_argv, pretrain_spec_json
from tests.test_attention import SPECIAL, micro_model

# torch's signatures of varlen_attn's options, as varlen_attention reads them
SIGNATURES = {
    "2.9": frozenset({"is_causal"}),
    "2.10": frozenset({"scale", "window_size"}),
    "2.12": frozenset({"scale", "window_size", "enable_gqa"}),
}


def reference_kernel(accepted: frozenset):
    """varlen_attn's contract for a signature accepting ``accepted``: query (T, Hq, D) attends within the span
    of the offsets it lies in. Written without reading tensors on the host, so torch.compile traces it whole."""

    def kernel(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, **options):
        assert set(options) <= accepted, f"{set(options) - accepted} is not in this torch's signature"
        assert cu_seq_q is cu_seq_k and cu_seq_q.dtype == torch.int32
        gqa = key.shape[1] != query.shape[1]
        assert options.get("enable_gqa", False) == gqa or "enable_gqa" not in accepted, "grouped-query heads and enable_gqa disagree"
        tokens = torch.arange(query.shape[0], device=query.device)
        span = torch.searchsorted(cu_seq_q, tokens.to(torch.int32), right=True)  # (T,): which span each token lies in
        visible = span[:, None] == span[None, :]  # (T, T)
        if options.get("is_causal", options.get("window_size") == (-1, 0)):
            visible &= tokens[None, :] <= tokens[:, None]
        q, k, v = (states.transpose(0, 1) for states in (query, key, value))  # (H, T, D)
        output = F.scaled_dot_product_attention(q, k, v, attn_mask=visible, scale=options.get("scale"), enable_gqa=gqa)
        return output.transpose(0, 1)

    return kernel


def use_reference_kernel(monkeypatch, version: str = "2.12", calls: list | None = None) -> None:
    """The reference kernel in the kernel's place under torch ``version``'s signature; each call appended to ``calls``."""
    accepted = SIGNATURES[version]
    kernel = reference_kernel(accepted)
    monkeypatch.setattr(varlen_attention, "_PARAMETERS", accepted)
    monkeypatch.setattr(varlen_attention, "flash_varlen", kernel if calls is None else lambda *a, **o: calls.append(1) or kernel(*a, **o))


@pytest.fixture(params=sorted(SIGNATURES))
def kernel_of_torch(request, monkeypatch):
    """The reference kernel under one torch version's signature."""
    use_reference_kernel(monkeypatch, request.param)
    return request.param


def split_batch(attention: str, starts: list[int], length: int = 32) -> Batch:
    generator = torch.Generator().manual_seed(3)
    input_ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (len(starts), length), generator=generator)
    return Batch(input_ids, torch.full_like(input_ids, IGNORE), attention, segment_starts=torch.tensor(starts))


def test_the_offsets_lay_every_sample_end_to_end():
    assert sample_offsets(torch.tensor([12, 20]), 2, 32, torch.device("cpu")).tolist() == [0, 12, 32, 52, 64]
    assert sample_offsets(torch.tensor([0, 5]), 2, 8, torch.device("cpu")).tolist() == [0, 0, 8, 13, 16]  # 0: one sample
    assert sample_offsets(None, 3, 8, torch.device("cpu")).tolist() == [0, 8, 16, 24]  # whole rows


@pytest.mark.parametrize("attention", ["causal", "bidirectional"])
@pytest.mark.parametrize("starts", [[12, 20], [0, 9]], ids=["cut", "one-row-uncut"])
def test_varlen_gives_the_dense_mask_s_hidden_states_and_gradients(attention, starts, kernel_of_torch):
    """Split samples through the offsets = the same samples through SDPA's dense (B, 1, L, L) mask, forward
    and backward, under each torch signature; whole rows too (segment_starts None)."""
    batch = split_batch(attention, starts)
    whole = dataclasses.replace(batch, segment_starts=None)
    for this in (batch, whole):
        dense_model, varlen_model = micro_model(attention), micro_model(attention)
        varlen_model.set_attn_implementation(attention_implementation("varlen"))
        dense, varlen = encode(dense_model, this), encode(varlen_model, this)
        torch.testing.assert_close(varlen, dense, rtol=1e-4, atol=1e-5)
        (dense**2).sum().backward()
        (varlen**2).sum().backward()
        for (name, a), (_, b) in zip(dense_model.named_parameters(), varlen_model.named_parameters()):
            if a.grad is not None:  # float rounding of summations in other orders, relative to the gradient's scale
                torch.testing.assert_close(b.grad, a.grad, rtol=1e-4, atol=1e-5 * float(a.grad.abs().max()), msg=name)


def test_the_comparison_can_fail(monkeypatch):
    """A kernel that ignores the cut (one span a row) gives other hidden states than the dense mask."""
    use_reference_kernel(monkeypatch)
    monkeypatch.setattr(varlen_attention, "sample_offsets", lambda starts, b, length, device: sample_offsets(None, b, length, device))
    batch = split_batch("causal", [12, 20])
    model = micro_model("causal")
    dense = encode(model, batch)
    model.set_attn_implementation(attention_implementation("varlen"))
    assert not torch.allclose(encode(model, batch), dense, atol=1e-3)


@pytest.mark.parametrize(
    "batch, message",
    [
        (
            Batch(torch.ones(2, 8, dtype=torch.long), torch.ones(2, 8, dtype=torch.long), "prefix", prefix_lengths=torch.tensor([2, 3])),
            "prefix",
        ),
        (
            Batch(
                torch.ones(2, 8, dtype=torch.long),
                torch.ones(2, 8, dtype=torch.long),
                "causal",
                padding_mask=torch.ones(2, 8, dtype=torch.long),
            ),
            "padded",
        ),
    ],
    ids=["prefix", "padded"],
)
def test_what_offsets_cannot_say_is_refused(batch, message):
    """Refused before any kernel runs, whatever the torch."""
    model = micro_model("causal")
    model.set_attn_implementation(attention_implementation("varlen"))
    with pytest.raises(PipelineError, match=message):
        encode(model, batch)


def test_the_attention_function_alone_wants_the_offsets():
    """Reached other than through encode (no offsets, or a mask it would ignore): an error, not full attention."""
    states = torch.zeros(1, 2, 4, 8)
    module = micro_model("causal").model.layers[0].self_attn
    with pytest.raises(PipelineError, match="offsets"):
        varlen_attention_forward(module, states, states, states, attention_mask=None)
    with pytest.raises(PipelineError, match="offsets"):
        varlen_attention_forward(module, states, states, states, torch.ones(1, 1, 4, 4), cu_seq_lens_q=torch.tensor([0, 4]), max_length_q=4)


def test_a_split_sample_pretraining_run_trains_as_sdpa_does(tokens_dir, init_dir, tmp_path, monkeypatch):
    """The trainer sets the model to the kernel (pretraining.compute.attention: varlen) and trains the split
    samples as the dense mask does: same losses and weights up to float rounding."""
    calls = []
    use_reference_kernel(monkeypatch, calls=calls)
    runs = {}
    for kernel in ("sdpa", "varlen"):
        spec = pretrain_spec_json({"kind": "clm"}, budget_steps=3, samples="split", compute={"attention": kernel})
        assert main(pretrain_argv(spec, tokens_dir, init_dir, tmp_path / kernel)) == 0
        runs[kernel] = tmp_path / kernel / "run"
    assert calls  # the varlen run's attention went through the kernel (3 steps and the held-out batches)
    summaries = {kernel: json.loads((run / "summary.json").read_text()) for kernel, run in runs.items()}
    assert summaries["varlen"]["final_train_loss"] == pytest.approx(summaries["sdpa"]["final_train_loss"], rel=1e-5)
    weights = {kernel: load_file(run / "model" / "model.safetensors") for kernel, run in runs.items()}
    for name, tensor in weights["sdpa"].items():
        np.testing.assert_allclose(weights["varlen"][name].numpy(), tensor.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


def test_a_whole_model_compile_traces_varlen_split_samples_in_one_graph(monkeypatch):
    """The offsets and positions are built in the graph and the kernel's options are constants (the signature read
    at import): the backbone on split samples is one graph with no break, as under SDPA and FlexAttention
    (tests/test_backbone.py); the sparse head is left out of it by design."""
    use_reference_kernel(monkeypatch)
    model = micro_model("causal")
    model.set_attn_implementation(attention_implementation("varlen"))
    batch = split_batch("causal", [5, 11], length=16)
    batch = dataclasses.replace(batch, labels=batch.input_ids.clone())
    torch._dynamo.reset()
    explained = torch._dynamo.explain(lambda b: language_model_loss(model, b))(batch)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), [str(r.reason) for r in explained.break_reasons]
