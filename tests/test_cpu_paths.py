"""The CPU kernels' code paths: the workflow pins the ones every x86-64 processor runs alike
(pipeline/cpu_paths.py), records them in every provenance.json, and refuses a mistyped mode."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from pipeline import cpu_paths

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(platform.machine().lower() not in cpu_paths.X86_64, reason="the pins are x86-64 instruction sets")

# After `import pipeline`: what the process's environment, torch and MKL say. MKL_VERBOSE prints
# the branch MKL's SGEMM actually took ("CNR:COMPATIBLE"), which an unhonoured MKL_CBWR does not.
# threadpoolctl names the core type OpenBLAS (numpy's and scipy's) dispatched on.
PROBE = """
import json, os, pipeline, torch, numpy, scipy.linalg
from threadpoolctl import threadpool_info
from pipeline.provenance import machine
a = torch.ones(8, 8); a @ a
openblas = sorted({pool["architecture"] for pool in threadpool_info() if pool["internal_api"] == "openblas"})
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "openblas": openblas, "machine": machine()}))
"""


def probe(**env: str) -> tuple[dict, str]:
    clean = {k: v for k, v in os.environ.items() if k not in cpu_paths.PORTABLE_PINS and k != cpu_paths.SWITCH}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, "MKL_VERBOSE": "1", **env}, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    return json.loads(last), done.stdout + done.stderr


def test_the_workflow_takes_the_portable_paths_unless_told_otherwise():
    seen, log = probe()
    assert seen["capability"] == "AVX2"
    assert "CNR:COMPATIBLE" in log
    assert seen["openblas"] == ["Haswell"]
    assert seen["machine"]["cpu_paths"] == {"mode": "portable", **cpu_paths.PORTABLE_PINS}


def test_native_paths_leave_every_library_its_own_choice():
    seen, log = probe(PIPELINE_CPU_PATHS="native")
    assert "CNR:OFF" in log
    assert seen["machine"]["cpu_paths"] == {"mode": "native", **{name: "unset" for name in cpu_paths.PORTABLE_PINS}}


def test_a_pin_the_user_set_stands_and_is_recorded():
    seen, _ = probe(ATEN_CPU_CAPABILITY="default")
    assert seen["machine"]["cpu_paths"]["ATEN_CPU_CAPABILITY"] == "default"
    assert seen["machine"]["cpu_paths"]["MKL_CBWR"] == "COMPATIBLE"


def test_a_mistyped_mode_is_refused_in_one_line():
    env = {**os.environ, cpu_paths.SWITCH: "portabel"}
    done = subprocess.run([sys.executable, "-m", "pipeline", "fetch", "--help"], env=env, cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: environment variable PIPELINE_CPU_PATHS='portabel' is not one of portable, native"
    assert not done.stdout
