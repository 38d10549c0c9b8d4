"""How a job's kernels round, the same for pretraining and fine-tuning (which kernels compute
attention and the LM head: pipeline/kernels/; which CPU code paths: pipeline/cpu_paths.py).

On the CPU, deterministic kernels: a run, and a run resumed after a kill, is bit-for-bit
the same (the tests pin this). On a GPU, float32 matmuls outside autocast use TF32: the
speed of the tensor cores for rounding-level differences, so GPU runs are reproducible
to rounding only.
"""

from __future__ import annotations

import torch


def use_numerics_for(device: torch.device) -> None:
    if device.type == "cpu":
        torch.use_deterministic_algorithms(True)
        return
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
