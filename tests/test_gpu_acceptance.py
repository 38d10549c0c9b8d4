"""bench/gpu_acceptance.py stops at once, in one line, without cuda or without its inputs.

Its sections are dry-run on a CPU by hand (``--device cpu --size tiny --sequence-length 32``, 85 s:
too slow for the suite, and what they run, the stages, is tested in test_pretrain/test_finetune)."""

import subprocess
import sys

import pytest
import torch

from pipeline.configure import REPOSITORY

SCRIPT = REPOSITORY / "bench" / "gpu_acceptance.py"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without cuda")
def test_without_cuda_it_stops_at_once_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--json", str(tmp_path / "a.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: bench/gpu_acceptance.py needs a CUDA GPU, and torch {torch.__version__} sees none"
        " (torch.cuda.is_available() is False); run it on a GPU machine"
    ]
    assert not (tmp_path / "a.json").exists()


def test_missing_inputs_are_named(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--device", "cpu", "--inputs", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip() == f"error: {tmp_path / 'tokenizer'} is missing; make the inputs first (see the top of bench/gpu_acceptance.py)"
    )
