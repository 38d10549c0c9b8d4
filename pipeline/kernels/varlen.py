"""Flash attention's variable-length kernel (torch.nn.attention.varlen,
:mod:`pipeline.model.varlen_attention`): rows unpadded, each sample told by its offsets."""

from pipeline.kernels.base import AttentionKernel, register

register(
    AttentionKernel(
        name="varlen",
        summary="the study's variable-length flash kernel, given where each sample starts and ends",
        cpu_refusal="flash attention's variable-length kernel is CUDA only; use 'sdpa'",
        bf16_refusal="flash attention computes in 16-bit floats only",
        transformers_name="torch_varlen",  # without "flash" in it, which transformers takes for a kernel to fetch from the hub
        split_samples_as="offsets",
        whole_samples_refusal="it takes sample offsets, no mask: prefix attention and padded targets need one",
    )
)
