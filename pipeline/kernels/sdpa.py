"""PyTorch's scaled_dot_product_attention: the default, on any device."""

from pipeline.kernels.base import AttentionKernel, register

register(
    AttentionKernel(
        name="sdpa",
        summary="PyTorch's scaled_dot_product_attention; split samples pass it a dense mask, which keeps its fused kernels off",
        transformers_name="sdpa",
    )
)
