"""AdamW as the study configures it, for pretraining and fine-tuning alike (REFERENCE.md section 1)."""

from __future__ import annotations

import torch

from pipeline.config import OptimizerSpec


def build_adamw(model: torch.nn.Module, spec: OptimizerSpec, learning_rate: float, fused: bool = False) -> torch.optim.AdamW:
    """Weight decay on matrices (dim >= 2) only; norm gains are left undecayed.

    ``fused``: one fused kernel for all parameters (faster, same update up to rounding, and on a
    CPU the same bits on any x86-64 processor: its square roots are exact, where the default
    implementation's come from an approximation whose last bit is the processor's);
    otherwise torch's default implementation.
    """
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": spec.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=learning_rate,
        betas=(spec.betas[0], spec.betas[1]),
        eps=spec.eps,
        **({"fused": True} if fused else {}),
    )


def set_learning_rate(optimizer: torch.optim.Optimizer, learning_rate: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = learning_rate
