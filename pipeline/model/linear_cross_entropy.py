"""The LM head and its cross-entropy as one chunked operation (the "fused linear
cross-entropy" of Liger Kernel and Apple's Cut Cross-Entropy, here in plain PyTorch).

At the sizes a CPU trains, the vocabulary projection and the softmax over it cost more
than the transformer layers: measured on the tiny preset (16 x 128 tokens, 2 threads),
the head and loss take 80 of a CLM step's 143 ms, and most of that is not the matmul
but passes over the (N, V) float32 logits, which do not fit in cache. Here the logits
of ``CHUNK_ROWS`` positions at a time are made, turned into their loss and gradient, and
dropped: the gradient with respect to the logits, ``(softmax - one_hot) / N``, is known
in the forward pass, so the hidden states' and the head's gradients are computed there
too, and the backward pass only scales them. No (N, V) tensor is ever stored, which is
also what makes the study's 128k vocabularies fit at long sequence lengths. In isolation
the head + loss drop from 85 to 50 ms; a whole training step gains less (+7-9% in the
trainer, within noise when two jobs share the 2 cores: BENCHMARKS.md).

Same loss as ``F.cross_entropy(hidden @ weight.T, labels)`` up to float rounding
(tests/test_linear_cross_entropy.py); deterministic (a fixed chunk order).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from pipeline.kernels.chunked import chunk_rows


def default_chunk_rows(vocab_size: int, device: torch.device) -> int:
    """Rows per chunk on ``device`` (:func:`pipeline.kernels.chunked.chunk_rows`)."""
    return chunk_rows(vocab_size, device.type)


def _compute_dtype(hidden: torch.Tensor) -> torch.dtype:
    """The matmul dtype the surrounding autocast would use (bf16 under bf16 autocast)."""
    device = hidden.device.type
    return torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else hidden.dtype


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, dtype: torch.dtype, chunk: int) -> torch.Tensor:
        # hidden (N, H), weight (V, H), labels (N,): every position carries a label.
        num_rows = hidden.shape[0]
        h_all, w = hidden.to(dtype), weight.to(dtype)
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        grad_hidden = torch.empty_like(hidden)
        grad_weight = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device)
        for start in range(0, num_rows, chunk):
            h, y = h_all[start : start + chunk], labels[start : start + chunk]  # (C, H), (C,)
            logits = (h @ w.T).float()  # (C, V)
            label_logits = logits.gather(1, y[:, None])  # (C, 1)
            # One exp pass, in place: softmax = exp(logits - max) / sum; loss = log(sum) + max - label logit.
            largest = logits.amax(dim=1, keepdim=True)  # (C, 1)
            exponentials = logits.sub_(largest).exp_()  # (C, V)
            sums = exponentials.sum(dim=1, keepdim=True)  # (C, 1)
            total += (sums.log() + largest - label_logits).sum()
            # d(mean loss)/d(logits) = (softmax - one_hot) / N.
            grad_logits = exponentials.div_(sums * num_rows)
            grad_logits[torch.arange(len(y), device=y.device), y] -= 1.0 / num_rows
            grad_logits = grad_logits.to(dtype)  # (C, V)
            grad_hidden[start : start + chunk] = grad_logits @ w  # (C, H)
            grad_weight += (grad_logits.T @ h).float()  # (V, H)
        ctx.save_for_backward(grad_hidden, grad_weight.to(weight.dtype))
        return total / num_rows

    @staticmethod
    def backward(ctx, grad_loss: torch.Tensor):
        grad_hidden, grad_weight = ctx.saved_tensors
        return grad_hidden * grad_loss, grad_weight * grad_loss, None, None, None


def linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, chunk_rows: int | None = None) -> torch.Tensor:
    """Mean cross-entropy of ``hidden @ weight.T`` (N, V) against ``labels`` (N,), chunked
    (``chunk_rows`` positions at a time; by default :func:`default_chunk_rows`).

    Without gradients (evaluation) only the loss is computed, chunk by chunk.
    """
    dtype = _compute_dtype(hidden)
    chunk = chunk_rows or default_chunk_rows(weight.shape[0], hidden.device)
    with torch.autocast(hidden.device.type, enabled=False):
        if torch.is_grad_enabled() and (hidden.requires_grad or weight.requires_grad):
            return _LinearCrossEntropy.apply(hidden, weight, labels, dtype, chunk)
        w = weight.to(dtype)
        losses = [
            F.cross_entropy((hidden[start : start + chunk].to(dtype) @ w.T).float(), labels[start : start + chunk], reduction="sum")
            for start in range(0, hidden.shape[0], chunk)
        ]
        return torch.stack(losses).sum() / hidden.shape[0]
