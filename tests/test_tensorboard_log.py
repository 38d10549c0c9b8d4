"""TensorBoard event files: what a pretraining run and a fine-tuning grid point write, that a resumed
run's curves carry no step twice, and that the switch leaves none."""

from __future__ import annotations

from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from pipeline.__main__ import main
from pipeline.tensorboard_log import ENVIRONMENT_VARIABLE, EVENTS_DIR, ScalarLog
from tests.conftest import pretrain_argv, pretrain_spec_json
from tests.test_finetune import finetune_spec, make_task

PRETRAINING_TAGS = {
    "train/loss",
    "train/learning_rate",
    "train/grad_norm",
    "train/tokens_per_second",
    "train/step_seconds",
    "heldout/loss",
    "heldout/yardstick",
}


def scalars(directory: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar tag of the event files under ``directory`` as TensorBoard reads them: (step, value)."""
    events = EventAccumulator(str(directory))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def test_a_reopened_log_drops_what_an_earlier_attempt_wrote_past_the_resumed_step(tmp_path):
    first = ScalarLog(tmp_path)
    for step in range(1, 6):
        first.add(step, {"train/loss": float(step), "heldout/loss": None})
    first.close()
    resumed = ScalarLog(tmp_path, purge_step=3)  # the saved state was at step 3: steps 3-5 are trained again
    for step in (3, 4):
        resumed.add(step, {"train/loss": 10.0 * step})
    resumed.close()
    assert scalars(tmp_path) == {"train/loss": [(1, 1.0), (2, 2.0), (3, 30.0), (4, 40.0)]}


def test_a_pretraining_run_writes_its_curves_beside_its_model(tokens_dir, init_dir, tmp_path):
    spec = pretrain_spec_json({"kind": "mlm", "mask_ratio": 0.4}, budget_steps=6, checkpoint_steps=[3])
    assert main(pretrain_argv(spec, tokens_dir, init_dir, tmp_path)) == 0
    found = scalars(tmp_path / "run" / EVENTS_DIR)
    assert set(found) == PRETRAINING_TAGS
    logged = [int(line.split(",")[0]) for line in (tmp_path / "run" / "log.csv").read_text().splitlines()[1:]]
    assert [step for step, _ in found["train/loss"]] == logged
    assert [step for step, _ in found["heldout/loss"]] == [3, 6]  # at each evaluation: the checkpoint and the end


def test_the_switch_leaves_no_event_file(tokens_dir, init_dir, tmp_path, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "0")
    assert main(pretrain_argv(pretrain_spec_json({"kind": "clm"}, budget_steps=4), tokens_dir, init_dir, tmp_path)) == 0
    assert (tmp_path / "run" / "summary.json").exists() and not (tmp_path / "run" / EVENTS_DIR).exists()


def test_each_fine_tuning_grid_point_has_its_curve(init_dir, tmp_path):
    task, seeds = make_task(tmp_path / "task"), [0, 1]
    spec = finetune_spec(learning_rates=[1e-3], seeds=seeds, max_steps=4)
    argv = ["finetune", "--spec", spec, "--model", str(init_dir), "--task-dir", str(task), "--out", str(tmp_path / "out")]
    assert main([*argv, "--work-dir", str(tmp_path / "work")]) == 0
    points = sorted(p.name for p in (tmp_path / "out" / EVENTS_DIR).iterdir())
    assert points == [f"lr0.001-seed{seed}" for seed in seeds]
    curve = scalars(tmp_path / "out" / EVENTS_DIR / points[0])
    assert set(curve) == {"train/loss", "validation/score"} and len(curve["train/loss"]) == curve["validation/score"][0][0]
