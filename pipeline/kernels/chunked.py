"""This package's sparse LM head and loss in plain PyTorch (:mod:`pipeline.model.linear_cross_entropy`):
the labelled positions' logits a chunk at a time, never all of them. How many positions a chunk
turns into logits is what the head holds at its peak, so it is declared here, where the memory
estimate reads it without importing torch."""

from pipeline.kernels.base import LmHeadKernel, register

# Positions per chunk on a CPU: the (256, V) float32 logits of a 4k vocabulary are 4 MB,
# about a core's L2 share; head + loss measured fastest at 128-512 rows on the tiny preset.
CPU_CHUNK_ROWS = 256
# On a GPU, chunks as large as this much float32 logits allows: a 256-row chunk of the study's
# 128k vocabulary is a matmul too thin for the GPU, and each chunk re-reads the (V, H) head and
# its float32 gradient (bench/lm_head_chunks.py; BENCHMARKS.md).
GPU_CHUNK_LOGITS_BYTES = 2**30


def chunk_rows(vocab_size: int, device_type: str) -> int:
    """Rows per chunk: cache-sized on a CPU, ~1 GiB of float32 logits on a GPU (a multiple of 256)."""
    if device_type == "cpu":
        return CPU_CHUNK_ROWS
    return max(CPU_CHUNK_ROWS, GPU_CHUNK_LOGITS_BYTES // (4 * vocab_size) // CPU_CHUNK_ROWS * CPU_CHUNK_ROWS)


# Per (chunk row x vocabulary entry): float32 logits (exponentiated in place) 4 + bf16 gradient 2
CHUNK_ENTRY_BYTES = 6


def peak_bytes(positions: float, vocab: int, hidden: int) -> float:
    """One chunk of logits on a GPU, with the float32 gradient of the (V, H) head and a bf16 copy of it."""
    return min(positions, chunk_rows(vocab, "cuda")) * vocab * CHUNK_ENTRY_BYTES + (4 + 2) * vocab * hidden


register(LmHeadKernel(name="chunked", summary="the labelled positions' logits a chunk at a time, plain PyTorch", memory_bytes=peak_bytes))
