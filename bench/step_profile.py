"""Where a training step's time goes: a ``torch.profiler`` window over the timed steps of one run,
its time by kind of work (issue 55: when no lever reaches the goal, "the shortfall stated with its profile").

On a GPU the window's device kernels are sorted into kinds of work (matmuls, attention, LM head and loss,
optimizer, copies, the rest: element-wise work, norms and reductions, most of it compiled fusions): by the
region that launched them (the optimizer's step, the fused head and its loss), else by their names. The
device's busy share of the window is the union of its kernels' intervals over the window's wall time: what is
not busy is the device waiting for the host (launch overhead, synchronisations, Python). On a CPU the same
kinds come from the operators' own (self) time, and there is no separate device to be idle.

The profiler slows the host, so a profiled run's wall time is not a throughput measurement: tokens/s come from
the unprofiled repeats; the profile says how the device spends them.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.autograd import DeviceType

# Kinds of work by kernel or operator name, lower-cased; the first kind with a matching fragment wins.
KINDS = (
    ("attention", ("flash", "flex_attention", "fmha", "attention", "sdpa")),
    ("LM head + loss", ("liger", "cross_entropy", "log_softmax", "logsumexp", "nll_loss")),
    ("matmul", ("gemm", "nvjet", "cutlass", "xmma", "aten::mm", "aten::addmm", "aten::bmm", "aten::matmul")),
    ("optimizer", ("adam", "multi_tensor_apply", "foreach")),
    ("copy", ("memcpy", "memset", "aten::copy_", "aten::_to_copy")),
)
OTHER = "other (element-wise, norms, reductions)"
TOP = 12  # the longest kernels (or operators) named in the record


def region_of(ancestors: Sequence[str]) -> str | None:
    """The kind of work a region around an operator makes of it, whatever its kernels: the optimizer's step
    (torch.optim's "Optimizer.step#AdamW.step" annotation) and the sparse LM head with its loss (the chunked
    head's ``_LinearCrossEntropy`` function, Liger's ``LigerFusedLinearCrossEntropyFunction``: their
    matmuls are the head's)."""
    for name in ancestors:
        if name.startswith("Optimizer."):
            return "optimizer"
        if "crossentropy" in name.lower().replace("_", ""):
            return "LM head + loss"
    return None


def kind_of(name: str, ancestors: Sequence[str] = ()) -> str:
    """The kind of work of the kernel or operator ``name`` launched within the operators ``ancestors``
    (innermost first): its region's (:func:`region_of`), else by name (:data:`KINDS`, else :data:`OTHER`)."""
    lowered = name.lower()
    return region_of(ancestors) or next((kind for kind, fragments in KINDS if any(fragment in lowered for fragment in fragments)), OTHER)


def start(device: torch.device) -> torch.profiler.profile:
    """A started profiler of ``device``'s work (and the host's, which launches it)."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    profiler = torch.profiler.profile(activities=activities)
    profiler.start()
    return profiler


def busy_seconds(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by the union of (start, end) ``intervals`` in microseconds: kernels of several
    streams that overlap count once."""
    covered, reach = 0.0, float("-inf")
    for begin, end in sorted(intervals):
        if end > reach:
            covered += end - max(begin, reach)
            reach = end
    return covered / 1e6


def ancestry(event) -> list[str]:
    """The names of ``event`` and the operators around it, innermost first."""
    names = []
    while event is not None:
        names.append(event.name)
        event = event.cpu_parent
    return names


def summarize(profiler: torch.profiler.profile, device: torch.device, wall_seconds: float, steps: int) -> dict:
    """The stopped ``profiler``'s window of ``steps`` steps in ``wall_seconds``: seconds a step by kind of
    work, the longest kernels (operators on a CPU), and on a GPU the device's busy share of the window."""
    events = profiler.events()
    host = [e for e in events if e.device_type == DeviceType.CPU]
    if device.type == "cuda":
        # each kernel as the host operator that launched it holds it (so its regions are known), in microseconds;
        # an operator's ancestry walked once for all its kernels
        timed = []
        for event in (e for e in host if e.kernels):
            ancestors = ancestry(event)
            timed += [(kernel.name, kernel.duration, ancestors) for kernel in event.kernels]
        # the kernels themselves on the device, not the annotations the profiler mirrors onto it
        kernels = [e for e in events if e.device_type == DeviceType.CUDA and not e.is_user_annotation]
        busy = busy_seconds([(e.time_range.start, e.time_range.end) for e in kernels])
        unattributed = sum(e.time_range.elapsed_us() for e in kernels) - sum(duration for _, duration, _ in timed)
        timed.append(("(kernels no host operator holds)", max(unattributed, 0.0), []))
    else:
        timed = [(e.name, e.self_cpu_time_total, ancestry(e)) for e in host]
        busy = None
    by_name: dict[tuple[str, str], tuple[float, int]] = {}  # (kind, name) -> (seconds, calls)
    by_kind = dict.fromkeys([kind for kind, _ in KINDS] + [OTHER], 0.0)
    for name, microseconds, ancestors in timed:
        kind = kind_of(name, ancestors)
        by_kind[kind] += microseconds / 1e6 / steps
        seconds, calls = by_name.get((kind, name), (0.0, 0))
        by_name[kind, name] = (seconds + microseconds / 1e6, calls + 1)
    longest = sorted(by_name.items(), key=lambda item: -item[1][0])[:TOP]
    return {
        "device": device.type,
        "steps": steps,
        "wall_seconds_per_step": wall_seconds / steps,
        "device_busy_share": None if busy is None else busy / wall_seconds,
        "seconds_per_step_by_kind": by_kind,
        "longest": [
            {"name": name, "kind": kind, "seconds_per_step": seconds / steps, "calls_per_step": calls / steps}
            for (kind, name), (seconds, calls) in longest
        ],
    }


def table(profiles: dict[str, dict]) -> str:
    """A markdown table of each objective's profile: its kinds of work as shares of their sum, and the
    device's busy share of the wall time (or why it failed: an ``error`` in its place)."""
    kinds = [kind for kind, _ in KINDS] + [OTHER]
    lines = [
        "| objective | wall s/step (profiled) | device busy | " + " | ".join(kinds) + " |",
        "|---|---:|---:|" + "---:|" * len(kinds),
    ]
    for objective, profile in profiles.items():
        if "error" in profile:
            lines.append(f"| {objective} | profile failed: {profile['error'][:200]} |" + " |" * (len(kinds) + 1))
            continue
        by_kind = profile["seconds_per_step_by_kind"]
        total = sum(by_kind.values()) or 1.0
        busy = profile["device_busy_share"]
        lines.append(
            f"| {objective} | {profile['wall_seconds_per_step']:.3f} | {'—' if busy is None else f'{busy:.0%}'} | "
            + " | ".join(f"{by_kind[kind] / total:.0%}" for kind in kinds)
            + " |"
        )
    return "\n".join(lines)
