"""The LM head on every position, its logits held whole (``pretraining.compute.sparse_prediction: false``):
the transformers models' own path, and ELECTRA's generator, which samples from those logits."""

from pipeline.kernels.base import LmHeadKernel, register

# Per (loss position x vocabulary entry): bf16 logits 2 + float32 copy 4 + log-softmax 4, its gradient 4
LOGIT_BYTES = 14


def peak_bytes(positions: float, vocab: int, hidden: int) -> float:
    """Every position's logits and their gradient."""
    return LOGIT_BYTES * positions * vocab


register(LmHeadKernel(name="dense", summary="the LM head on every position, logits held whole", memory_bytes=peak_bytes, sparse=False))
