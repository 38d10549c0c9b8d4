"""A fine-tuning job killed mid-grid (SIGKILL, as a SLURM time limit ends it) resumes at its
next grid point from its work dir, with the scores an uninterrupted job gives."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from pipeline.files import read_json
from pipeline.finetune.grid_result import GridResult
from pipeline.finetune.resume import PointStore
from pipeline.finetune.run import command_line
from tests.conftest import REPO, without_timings
from tests.test_finetune_task_types import make_task, spec_json

GRID = {"learning_rates": [3e-3, 1e-3], "seeds": [0, 1], "max_steps": 40}


def finetune_command(init_dir: Path, task: Path, out: Path, work: Path) -> list[str]:
    spec = spec_json("sequence_classification", **GRID)
    return command_line(spec, init_dir, task, out, "--work-dir", str(work))


def test_a_killed_grid_resumes_at_its_next_point_with_identical_scores(init_dir, tmp_path):
    task = make_task("sequence_classification", tmp_path / "task")
    whole = tmp_path / "whole"
    subprocess.run(finetune_command(init_dir, task, whole, tmp_path / "whole_work"), cwd=REPO, check=True, capture_output=True)
    assert not (tmp_path / "whole_work").exists()  # removed once the output is written

    out, work = tmp_path / "killed", tmp_path / "work"
    process = subprocess.Popen(finetune_command(init_dir, task, out, work), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None and not list((work / "points").glob("*.json")):
        time.sleep(0.02)
    assert process.poll() is None, "the grid finished before it could be interrupted"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished = len(list((work / "points").glob("*.json")))
    assert 1 <= finished < 4 and not out.exists()

    resumed = subprocess.run(finetune_command(init_dir, task, out, work), cwd=REPO, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"resuming: {finished} grid point(s) finished by an earlier attempt" in resumed.stderr
    assert without_timings(read_json(out / "scores.json")) == without_timings(read_json(whole / "scores.json"))
    assert not work.exists()


def test_a_resume_state_of_other_inputs_is_discarded_whole(tmp_path):
    point = GridResult(1e-3, 0, 50.0, 40.0, 4, 1.0, {"accuracy": 50.0}, {"accuracy": 40.0}, [0.0, 100.0])
    store = PointStore(tmp_path / "work", "a" * 64)
    store.put(1e-3, 0, (point, {"nq": point}))
    assert PointStore(tmp_path / "work", "a" * 64).get(1e-3, 0) == (point, {"nq": point})
    assert PointStore(tmp_path / "work", "b" * 64).get(1e-3, 0) is None
