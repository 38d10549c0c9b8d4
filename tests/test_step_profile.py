"""bench/step_profile.py: a profiled window of training steps as time by kind of work (issue 55's "the
shortfall stated with its profile"). The GPU branch reads kernels the way torch's profiler hands them over
(each kernel on the host operator that launched it, and again as a device event); here it is fed events of
that shape, since no GPU is at hand. The CPU branch runs for real in tests/test_bench_loss_agreement.py."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

import pytest
import torch
from torch.autograd import DeviceType
from torch.autograd.profiler_util import Kernel

from pipeline.workflow.configure import REPOSITORY

loaded = importlib.util.spec_from_file_location("step_profile", REPOSITORY / "bench" / "step_profile.py")
step_profile = importlib.util.module_from_spec(loaded)
loaded.loader.exec_module(step_profile)

HEAD, OTHER = "LM head + loss", step_profile.OTHER


@pytest.mark.parametrize(
    "name, ancestors, kind",
    [
        ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>, true>", [], "attention"),
        ("triton_tem_fused_flex_attention_backward_zeros_1", [], "attention"),
        ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", [], "matmul"),
        ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNN", ["aten::mm", "aten::linear"], "matmul"),
        ("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor<c10::BFloat16, 2>>", [], "optimizer"),
        ("triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_0", ["CompiledFunction"], OTHER),
        ("Memcpy HtoD (Pageable -> Device)", [], "copy"),
        # a region decides over the kernel's own name: the fused head's matmuls, the optimizer's element-wise work
        ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNN", ["aten::mm", "LigerFusedLinearCrossEntropyFunction"], HEAD),
        ("aten::mm", ["aten::mm", "_LinearCrossEntropy", "aten::linear"], HEAD),
        ("aten::addcdiv_", ["aten::addcdiv_", "Optimizer.step#AdamW.step"], "optimizer"),
        ("aten::mul", ["aten::mul"], OTHER),
    ],
)
def test_kernels_and_operators_are_sorted_into_kinds_of_work(name, ancestors, kind):
    assert step_profile.kind_of(name, ancestors) == kind


def test_busy_time_counts_overlapping_kernels_once():
    assert step_profile.busy_seconds([(20.0, 30.0), (0.0, 10.0), (5.0, 15.0), (6.0, 7.0)]) == pytest.approx(25e-6)
    assert step_profile.busy_seconds([]) == 0.0


@dataclass
class Interval:
    start: float
    end: float

    def elapsed_us(self) -> float:
        return self.end - self.start


@dataclass
class Event:  # the fields of torch.autograd.profiler_util.FunctionEvent that the summary reads
    name: str
    device_type: DeviceType
    time_range: Interval
    cpu_parent: Event | None = None
    kernels: list = field(default_factory=list)
    is_user_annotation: bool = False


class Profiled:
    def __init__(self, events):
        self._events = events

    def events(self):
        return self._events


def test_a_gpu_window_is_time_by_kind_and_the_device_busy_share():
    """Two steps in 1,000 µs of wall time: the device busy 450 µs of them (two overlapping kernels counted
    once), and the 100 µs of a kernel that no host operator claims counted as other work, not lost."""
    optimizer = Event("Optimizer.step#AdamW.step", DeviceType.CPU, Interval(0, 900))
    head = Event("LigerFusedLinearCrossEntropyFunction", DeviceType.CPU, Interval(0, 400))
    host = [
        Event("aten::mm", DeviceType.CPU, Interval(0, 10), head, [Kernel("nvjet_tst_TNN", 0, 200.0)]),
        Event("aten::mm", DeviceType.CPU, Interval(20, 30), None, [Kernel("nvjet_tst_TNN", 0, 100.0)]),
        Event("aten::_flash_attention_forward", DeviceType.CPU, Interval(40, 50), None, [Kernel("flash_fwd_kernel", 0, 50.0)]),
        Event("aten::_fused_adamw_", DeviceType.CPU, Interval(60, 70), optimizer, [Kernel("multi_tensor_apply_kernel", 0, 50.0)]),
        head,
        optimizer,
    ]
    device = [  # (start, end) µs on the device; the annotation the profiler mirrors there is not a kernel
        Event("nvjet_tst_TNN", DeviceType.CUDA, Interval(0, 200)),
        Event("nvjet_tst_TNN", DeviceType.CUDA, Interval(150, 250)),
        Event("flash_fwd_kernel", DeviceType.CUDA, Interval(300, 350)),
        Event("multi_tensor_apply_kernel", DeviceType.CUDA, Interval(400, 450)),
        Event("triton_poi_fused_add_0", DeviceType.CUDA, Interval(500, 600)),
        Event("LigerFusedLinearCrossEntropyFunction", DeviceType.CUDA, Interval(0, 900), is_user_annotation=True),
    ]
    profile = step_profile.summarize(Profiled(host + device), torch.device("cuda"), wall_seconds=1e-3, steps=2)
    assert profile["device_busy_share"] == pytest.approx(0.45)  # 0-250, 300-350, 400-450, 500-600: 450 µs of 1,000
    seconds = profile["seconds_per_step_by_kind"]
    assert seconds == pytest.approx({"attention": 25e-6, HEAD: 100e-6, "matmul": 50e-6, "optimizer": 25e-6, "copy": 0.0, OTHER: 50e-6})
    assert sum(seconds.values()) * 2 == pytest.approx(500e-6)  # every kernel's whole time (the overlap too), once
    assert profile["wall_seconds_per_step"] == pytest.approx(5e-4)
    assert profile["longest"][0] == {"name": "nvjet_tst_TNN", "kind": HEAD, "seconds_per_step": 100e-6, "calls_per_step": 0.5}


def test_the_table_gives_each_kind_as_a_share_and_the_busy_device():
    profile = {
        "wall_seconds_per_step": 0.25,
        "device_busy_share": 0.8,
        "seconds_per_step_by_kind": {"attention": 0.05, HEAD: 0.05, "matmul": 0.1, "optimizer": 0.0, "copy": 0.0, OTHER: 0.0},
    }
    failed = {"error": "RuntimeError: CUPTI_ERROR_NOT_INITIALIZED"}
    rows = step_profile.table({"clm": profile, "mlm": {**profile, "device_busy_share": None}, "ul2": failed}).splitlines()
    assert rows[2] == "| clm | 0.250 | 80% | 25% | 25% | 50% | 0% | 0% | 0% |"
    assert rows[3].startswith("| mlm | 0.250 | — | 25% |")
    assert rows[4] == "| ul2 | profile failed: RuntimeError: CUPTI_ERROR_NOT_INITIALIZED |" + " |" * 7
    assert all(row.count("|") == rows[0].count("|") for row in rows)  # one column a cell, a failure's row too
