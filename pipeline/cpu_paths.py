"""Which code paths the CPU kernels take, so that the CPU tiers give the same floats on any
x86-64 processor.

Four libraries pick their kernels by the processor they find, and each choice rounds
differently (bench/records/reproducibility-across-machines.md):

- ATen's own vectorised kernels (softmax, attention, reductions) dispatch on the widest vector
  ISA: AVX-512 on a Xeon or a Zen 4, AVX2 on older ones. ``ATEN_CPU_CAPABILITY=avx2`` holds
  them to the AVX2 build, which every x86-64 processor since 2013 runs.
- oneDNN (element-wise ops such as GELU) JIT-compiles for the ISA it detects, AMX included;
  ``ONEDNN_MAX_CPU_ISA=AVX2`` caps it.
- MKL's SGEMM (every Linear layer) dispatches by ISA *and vendor*. Its conditional numerical
  reproducibility mode fixes the branch, but on a non-Intel processor it honours only
  ``COMPATIBLE`` (measured on this project's AMD EPYC VM: ``MKL_CBWR=AVX2`` reports
  ``CNR:AUTO`` under ``MKL_VERBOSE``), so ``COMPATIBLE`` (SSE2) is the one branch both vendors
  run alike. It is the expensive pin: 2.0-2.3x a pretraining step of the default's tiny backbone
  (bench/records/cpu-paths.md).
- OpenBLAS (numpy and scipy's, so scikit-learn's: the bag-of-words baseline's solver) picks its
  kernels by the processor's core type (SkylakeX on a Zen 4); ``OPENBLAS_CORETYPE=Haswell`` holds
  it to the AVX2 kernels.

One path no variable reaches: torch's element-wise square root on a CPU is an approximation whose
last bit depends on the processor, and torch's default AdamW takes its square roots there; the
fused AdamW kernel's are exact, so both stages train with it (``fused_optimizer``).
bench/cpu_vendor_bits.py measures all of it against emulated Intel and AMD processors
(bench/records/cpu-vendor-bits.md).

``PIPELINE_CPU_PATHS`` chooses: ``portable`` (the default: the four pins above) or ``native``
(each library's own choice: fastest, bit-exact on one machine only). The pins must be in the
environment before torch loads, so :func:`apply` runs from ``pipeline/__init__.py``; a job's
subprocesses inherit them. A variable the user set already is left as it is: provenance
records what was in force (:func:`in_force`), so a deliberate override is visible, not silent.
"""

from __future__ import annotations

import os
import platform

from pipeline.errors import PipelineError

SWITCH = "PIPELINE_CPU_PATHS"
MODES = ("portable", "native")
PORTABLE_PINS = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE", "OPENBLAS_CORETYPE": "Haswell"}
X86_64 = {"x86_64", "amd64"}


def mode() -> str:
    """The mode ``PIPELINE_CPU_PATHS`` asks for (``portable`` when unset)."""
    chosen = os.environ.get(SWITCH, "portable").strip().lower()
    if chosen not in MODES:
        raise PipelineError(f"environment variable {SWITCH}={os.environ[SWITCH]!r} is not one of {', '.join(MODES)}")
    return chosen


def apply() -> None:
    """Put the portable pins into this process's environment (and so its children's) where the
    mode asks for them and the processor is x86-64; elsewhere (an ARM laptop) they mean nothing.
    A mistyped mode pins nothing here: ``python -m pipeline`` refuses it in one line (:func:`mode`)
    before any stage runs, and importing the package must not fail on it."""
    if os.environ.get(SWITCH, "portable").strip().lower() != "portable" or platform.machine().lower() not in X86_64:
        return
    for name, value in PORTABLE_PINS.items():
        os.environ.setdefault(name, value)


def in_force() -> dict[str, str]:
    """The mode and every pin variable as this process sees it ("unset" where absent), for provenance."""
    return {"mode": os.environ.get(SWITCH, "portable"), **{name: os.environ.get(name, "unset") for name in PORTABLE_PINS}}
