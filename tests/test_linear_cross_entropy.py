"""The chunked LM head + cross-entropy equals the plain one: loss and both gradients."""

import pytest
import torch
import torch.nn.functional as F

from pipeline.model import linear_cross_entropy as lce


def inputs(num_rows: int, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    hidden = torch.randn(num_rows, 16, generator=generator, requires_grad=True)  # (N, H)
    weight = (torch.randn(50, 16, generator=generator) * 0.5).requires_grad_()  # (V, H)
    labels = torch.randint(0, 50, (num_rows,), generator=generator)  # (N,)
    return hidden, weight, labels


def reference(hidden, weight, labels):
    loss = F.cross_entropy(hidden @ weight.T, labels)
    return (loss, *torch.autograd.grad(loss, (hidden, weight)))


@pytest.mark.parametrize("num_rows", [1, 7, 8, 21])  # one chunk, a partial chunk, exact chunks, several
def test_loss_and_gradients_equal_the_plain_head(num_rows):
    hidden, weight, labels = inputs(num_rows)
    loss = lce.linear_cross_entropy(hidden, weight, labels, chunk_rows=8)
    grads = torch.autograd.grad(loss * 3.0, (hidden, weight))  # an upstream factor reaches both gradients
    expected_loss, expected_hidden, expected_weight = reference(hidden, weight, labels)
    torch.testing.assert_close(loss, expected_loss)
    torch.testing.assert_close(grads[0], 3.0 * expected_hidden)
    torch.testing.assert_close(grads[1], 3.0 * expected_weight)


def test_without_gradients_only_the_loss_is_computed():
    hidden, weight, labels = inputs(21)
    with torch.no_grad():
        loss = lce.linear_cross_entropy(hidden, weight, labels, chunk_rows=8)
    assert loss.grad_fn is None
    torch.testing.assert_close(loss, F.cross_entropy(hidden @ weight.T, labels))


def test_extreme_logits_stay_finite():
    hidden, weight, labels = inputs(9)
    loss = lce.linear_cross_entropy(hidden * 1e3, weight, labels)
    expected = F.cross_entropy((hidden * 1e3) @ weight.T, labels)
    assert torch.isfinite(loss)
    torch.testing.assert_close(loss, expected)


def test_bf16_autocast_matches_float32_to_bf16_precision():
    hidden, weight, labels = inputs(40)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = lce.linear_cross_entropy(hidden, weight, labels)
        grad_hidden, grad_weight = torch.autograd.grad(loss, (hidden, weight))
    expected_loss, expected_hidden, expected_weight = reference(hidden, weight, labels)
    assert loss.dtype == torch.float32 and grad_hidden.dtype == grad_weight.dtype == torch.float32
    torch.testing.assert_close(loss, expected_loss, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(grad_hidden, expected_hidden, rtol=5e-2, atol=5e-3)
    torch.testing.assert_close(grad_weight, expected_weight, rtol=5e-2, atol=5e-3)


def test_chunks_are_cache_sized_on_a_cpu_and_about_a_gib_of_logits_on_a_gpu():
    assert lce.default_chunk_rows(4096, torch.device("cpu")) == 256
    assert lce.default_chunk_rows(128256, torch.device("cuda")) == 2048  # 2,048 x 128,256 x 4 bytes: 1.05 GB
    assert lce.default_chunk_rows(1024, torch.device("cuda")) == 262144
    assert lce.default_chunk_rows(10**7, torch.device("cuda")) == 256  # never below the CPU's
