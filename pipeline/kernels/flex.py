"""FlexAttention: a block mask that skips the tiles between a row's two samples (the saving of the
study's variable-length flash kernel), compiled by Triton."""

from pipeline.kernels.base import AttentionKernel, register

register(
    AttentionKernel(
        name="flex",
        summary="FlexAttention, whose block mask skips the tiles between a row's two samples",
        cpu_refusal="FlexAttention has no backward on the CPU; use 'sdpa'",
        transformers_name="flex_attention",
        split_samples_as="block_mask",
    )
)
