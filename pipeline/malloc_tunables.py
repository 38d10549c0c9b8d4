"""glibc malloc settings for the workflow's jobs: freed memory stays in the process.

glibc's malloc hands freed blocks above its adaptive mmap threshold back to the kernel, so
each training step of a small model page-faults its activations in again: 0.4-2.4 million
minor faults per job (the default run spent 14% of its CPU time in the kernel on an earlier
session's machine, 2.6% on the Intel Xeon VM). With a fixed 32 MiB mmap threshold (the
largest glibc accepts) and no trimming of the heap, freed blocks are reused: fine-tuning
jobs run 3-12% faster, by machine, with the same scores (BENCHMARKS.md, "Memory allocator";
``bench/malloc_tunables.py``). Setting the trim threshold alone is
worse than nothing: any one of these switches off the adaptive threshold, and freed blocks
above 128 KiB then always go back to the kernel. Other C libraries ignore the variable.
"""

from __future__ import annotations

from collections.abc import Mapping

MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=268435456"


def glibc_tunables(environment: Mapping[str, str]) -> str:
    """The GLIBC_TUNABLES value for a job: these settings, then the user's own tunables,
    which come later and so win; unchanged when they are already there."""
    current = environment.get("GLIBC_TUNABLES", "")
    if MALLOC_TUNABLES in current:
        return current
    return ":".join(filter(None, [MALLOC_TUNABLES, current]))
