"""Every registered compute kernel (pipeline/kernels/) against its slot's reference, on this
machine's device where the kernel can run there, and otherwise refused by the config check
with the reason it declares: a new kernel file is tested here with no change."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from transformers import AttentionInterface

from pipeline.batch import Batch
from pipeline.config import ComputeSpec
from pipeline.config.pretraining import DENSE_HEAD
from pipeline.example import IGNORE
from pipeline.kernels import KERNELS, AttentionKernel, kernel_names
from pipeline.model.backbone import SPARSE_HEADS, attention_implementation, encode, labelled_loss
from tests.test_attention import SPECIAL, micro_model

ON_GPU = torch.cuda.is_available()
DEVICE = torch.device("cuda" if ON_GPU else "cpu")


def precision_of(name: str) -> str:
    return "bf16" if KERNELS[name].bf16_refusal else "fp32"


def config_refusal(name: str) -> str | None:
    """What the config check says of a compute section naming this kernel on this machine."""
    kernel = KERNELS[name]
    if kernel.slot == "attention":
        spec = ComputeSpec(attention=name, precision=precision_of(name))
    else:
        spec = ComputeSpec(lm_head=name) if kernel.sparse else ComputeSpec(sparse_prediction=False)
    refusal = spec.kernel_refusal(ON_GPU, gpu_is="hardware.gpus_per_run >= 1")
    return refusal and refusal[1]


def test_every_kernel_has_an_implementation_under_its_name():
    assert set(SPARSE_HEADS) == set(kernel_names("lm_head", sparse_only=True))
    assert DENSE_HEAD in kernel_names("lm_head") and not KERNELS[DENSE_HEAD].sparse
    for name in kernel_names("attention"):
        transformers_name = attention_implementation(name)
        assert transformers_name == KERNELS[name].transformers_name
        assert transformers_name in AttentionInterface._global_mapping or transformers_name == "sdpa", name


@pytest.mark.parametrize("name", kernel_names("attention"))
def test_each_attention_kernel_encodes_a_row_of_two_samples_as_those_samples_alone(name: str) -> None:
    """The reference: each sample of a row encoded alone from position 0 by the default kernel, so the
    check holds a kernel to what split samples mean, not to another kernel."""
    kernel = KERNELS[name]
    assert isinstance(kernel, AttentionKernel)
    if config_refusal(name):
        assert kernel.cpu_refusal and kernel.cpu_refusal in config_refusal(name)
        return
    dtype = torch.bfloat16 if kernel.bf16_refusal else torch.float32
    for attention in ("causal", "bidirectional"):
        model = micro_model(attention).to(DEVICE, dtype)
        input_ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 32), generator=torch.Generator().manual_seed(1)).to(DEVICE)
        starts = torch.tensor([12, 20], device=DEVICE)
        labels = torch.full_like(input_ids, IGNORE)
        with torch.no_grad():
            alone = [
                [encode(model, Batch(input_ids[row : row + 1, piece], labels[row : row + 1, piece], attention)) for piece in pieces]
                for row, pieces in enumerate([(slice(0, 12), slice(12, 32)), (slice(0, 20), slice(20, 32))])
            ]
            model.set_attn_implementation(attention_implementation(name))
            cut = encode(model, Batch(input_ids, labels, attention, segment_starts=starts))  # (2, 32, H)
        expected = torch.cat([torch.cat(pieces, dim=1) for pieces in alone])  # (2, 32, H)
        torch.testing.assert_close(cut.float(), expected.float(), rtol=1e-4, atol=kernel.tolerance)


@pytest.mark.parametrize("name", kernel_names("lm_head"))
def test_each_lm_head_kernel_computes_the_labelled_cross_entropy_and_its_gradients(name: str) -> None:
    """The reference: every position's logits, cross-entropy over the labelled ones (N, V) in float32."""
    kernel = KERNELS[name]
    if config_refusal(name):
        assert kernel.cpu_refusal and kernel.cpu_refusal in config_refusal(name)
        return
    model = micro_model("causal").to(DEVICE)
    generator = torch.Generator().manual_seed(3)
    hidden = torch.randn(2, 32, model.config.hidden_size, generator=generator).to(DEVICE)  # (B, T, H)
    labels = torch.randint(0, SPECIAL.vocab_size, (2, 32), generator=generator).to(DEVICE)
    labels[:, ::3] = IGNORE  # a third of the positions carry no loss
    grads = []
    for head in (name, None):
        x = hidden.clone().requires_grad_()
        model.zero_grad()
        if head is None:
            logits = model.get_output_embeddings()(x).float()  # (B, T, V)
            loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)
        else:
            loss = labelled_loss(model, x, labels, head)
        loss.backward()
        grads.append((loss.detach(), x.grad, model.get_output_embeddings().weight.grad.clone()))
    for got, want in zip(grads[0], grads[1]):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=kernel.tolerance)


@pytest.mark.parametrize("name", list(KERNELS))
def test_each_kernel_s_memory_model_is_non_negative_and_grows_with_the_work(name: str) -> None:
    kernel = KERNELS[name]
    if isinstance(kernel, AttentionKernel):
        small, large = (kernel.memory_bytes(4, micro, 2048, True, split=True) for micro in (8, 16))
        assert 0 <= small <= large and kernel.memory_bytes(4, 8, 2048, True, split=False) == 0
    else:
        small, large = (kernel.memory_bytes(positions, 128_256, 1_024) for positions in (1_000, 100_000))
        assert 0 < small <= large
