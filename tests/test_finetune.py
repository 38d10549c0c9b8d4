"""Fine-tuning sweep: the protocol's step budget, determinism, output schema, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

from pipeline.__main__ import main
from pipeline.config import ExampleBudget
from pipeline.files import read_json, write_json, write_jsonl
from pipeline.finetune.selection import best_on_validation
from pipeline.finetune.sweep import batch_order
from tests.conftest import PARAGRAPHS, record_task_splits, without_timings

# Label = which half of PARAGRAPHS a sentence comes from: learnable from words alone.
SENTENCES = [(sentence.strip() + ".", index // 3) for index, p in enumerate(PARAGRAPHS) for sentence in p.split(". ")]


def make_task(root: Path) -> Path:
    rows = [{"id": str(i), "text": f"{text} Item {i % 7}.", "label": label} for i, (text, label) in enumerate(SENTENCES * 6)]
    for split, part in {"train": rows[::2], "validation": rows[1::4], "test": rows[3::4]}.items():
        write_jsonl(root / f"{split}.jsonl", part)
    write_json(root / "stats.json", {"labels": ["first", "second"]})
    record_task_splits(root)
    return root


def finetune_spec(**finetuning) -> str:
    return json.dumps(
        {
            "task_name": "halves",
            "task": {
                "family": "SC",
                "type": "sequence_classification",
                "metric": "accuracy",
                "description": "test",
                "data": {"reader": "none", "artifact": "none"},
                "max_length": 24,
            },
            "run": "random-micro",
            "objective": "random",
            "objective_kind": "random",
            "size": "micro",
            "finetuning": {"tasks": ["halves"], "learning_rates": [1e-3, 3e-3], "seeds": [0, 1], "batch_size": 8, **finetuning},
        }
    )


def test_step_budget_is_one_epoch_or_max_steps():
    budget = ExampleBudget(seeds=(0,), batch_size=32, max_steps=1000, max_epochs=1.0)
    assert budget.trained_steps(3200) == 100
    assert budget.trained_steps(3201) == 101
    assert budget.trained_steps(10**6) == 1000


def test_batches_cover_each_epoch_and_group_similar_lengths():
    rng = torch.Generator().manual_seed(1)
    lengths = torch.randint(3, 60, (1000,), generator=rng).tolist()
    order = batch_order(lengths, num_steps=40, batch_size=32, seed=0)
    first_epoch = order[:32]
    assert sorted(len(b) for b in first_epoch) == [8] + [32] * 31  # 1000 = 31 full batches + one of 8
    assert sorted(torch.cat(first_epoch).tolist()) == list(range(1000))  # every example once per epoch
    assert all(torch.equal(a, b) for a, b in zip(order, batch_order(lengths, 40, 32, seed=0)))
    assert not all(torch.equal(a, b) for a, b in zip(order, batch_order(lengths, 40, 32, seed=1)))
    padded = sum(len(b) * max(lengths[i] for i in b.tolist()) for b in first_epoch)
    random_batches = torch.randperm(1000, generator=rng).split(32)
    padded_random = sum(len(b) * max(lengths[i] for i in b.tolist()) for b in random_batches)
    assert padded < 0.7 * padded_random  # grouping cuts the padded token count


def test_random_batches_are_a_seeded_permutation_cut_in_order():
    """group_by_length: false (the paper config, the study's random sampler): each epoch's seeded
    permutation cut into consecutive batches, lengths ignored."""
    lengths = list(range(100))
    order = batch_order(lengths, num_steps=8, batch_size=32, seed=3, group_by_length=False)
    permutation = torch.randperm(100, generator=torch.Generator().manual_seed(3)).split(32)
    assert [b.tolist() for b in order[:4]] == [b.tolist() for b in permutation]  # 32, 32, 32, 4
    assert sorted(torch.cat(order[4:]).tolist()) == lengths  # the second epoch: every example once more
    grouped = batch_order(lengths, num_steps=4, batch_size=32, seed=3)
    assert [b.tolist() for b in grouped] != [b.tolist() for b in order[:4]]


def test_batch_order_stays_on_the_cpu_under_a_gpu_job_s_default_device():
    """A GPU fine-tuning job makes tensors on the GPU by default (finetune/run.py); the batch
    order must still be drawn, identically, from its CPU generator ("meta" stands in for cuda)."""
    lengths = list(range(3, 203))
    on_cpu = batch_order(lengths, num_steps=9, batch_size=32, seed=4)
    with torch.device("meta"):
        elsewhere = batch_order(lengths, num_steps=9, batch_size=32, seed=4)
    assert all(b.device.type == "cpu" and torch.equal(a, b) for a, b in zip(on_cpu, elsewhere, strict=True))


def test_sweep_is_deterministic_and_complete(init_dir, tmp_path):
    task = make_task(tmp_path / "task")
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert main(["finetune", "--spec", finetune_spec(), "--model", str(init_dir), "--task-dir", str(task), "--out", str(out)]) == 0
        outs.append(read_json(out / "scores.json"))
    a, b = outs
    assert [(g["learning_rate"], g["seed"]) for g in a["grid"]] == [(1e-3, 0), (1e-3, 1), (3e-3, 0), (3e-3, 1)]
    assert [(g["validation"], g["test"]) for g in a["grid"]] == [(g["validation"], g["test"]) for g in b["grid"]]
    num_train_rows = len((task / "train.jsonl").read_text().splitlines())
    assert all(0 <= g["test"] <= 100 and g["trained_steps"] == -(-num_train_rows // 8) for g in a["grid"])  # one epoch
    assert {k: a[k] for k in ("task", "family", "metric", "higher_is_better", "objective_kind", "attention")} == {
        "task": "halves",
        "family": "SC",
        "metric": "accuracy",
        "higher_is_better": True,
        "objective_kind": "random",
        "attention": "bidirectional",
    }
    assert read_json(tmp_path / "a" / "provenance.json")["inputs"]["model"]["sha256"]
    test_ids = "\n".join(json.loads(line)["id"] for line in (task / "test.jsonl").read_text().splitlines())
    assert a["test_examples_identity"] == hashlib.sha256(test_ids.encode()).hexdigest()  # which examples the per-example scores are of


def test_selection_seeds_run_the_full_grid_s_points_at_the_lr_they_choose(init_dir, tmp_path):
    """Seed 0 runs every LR, seeds 1 and 2 the one seed 0 chose on validation: the very
    points of the full grid, bit for bit, since a point depends on its (LR, seed) alone."""
    task = make_task(tmp_path / "task")
    grids = {}
    for name, selection in (("full", None), ("selected", [0])):
        spec = finetune_spec(learning_rates=[1e-2, 1e-3, 3e-2], seeds=[0, 1, 2], selection_seeds=selection, max_steps=6)
        assert main(["finetune", "--spec", spec, "--model", str(init_dir), "--task-dir", str(task), "--out", str(tmp_path / name)]) == 0
        grids[name] = without_timings(read_json(tmp_path / name / "scores.json"))
    chosen = best_on_validation((g["learning_rate"], g["validation"]) for g in grids["full"] if g["seed"] == 0)
    assert chosen == 1e-3  # neither end of the grid's order, so the test sees which LR seeds 1 and 2 ran
    expected = [g for g in grids["full"] if g["seed"] == 0] + [g for g in grids["full"] if g["seed"] > 0 and g["learning_rate"] == chosen]
    assert grids["selected"] == expected
    # Each record says which seeds chose and what they chose, so the tables read it instead of inferring it.
    recorded = {name: read_json(tmp_path / name / "scores.json") for name in grids}
    assert (recorded["selected"]["selection_seeds"], recorded["selected"]["chosen_learning_rate"]) == ([0], chosen)
    every_seed = best_on_validation((g["learning_rate"], g["validation"]) for g in grids["full"])
    assert (recorded["full"]["selection_seeds"], recorded["full"]["chosen_learning_rate"]) == ([0, 1, 2], every_seed)


def test_the_choice_is_the_best_mean_validation_and_a_tie_goes_to_the_smaller_value():
    assert best_on_validation([(1e-3, 70.0), (3e-3, 80.0), (1e-3, 90.0), (3e-3, 70.0)]) == 1e-3  # means 80 vs 75
    assert best_on_validation([(3e-3, 60.0), (1e-3, 60.0)]) == 1e-3


def test_causal_attention_switch_changes_the_model(init_dir, tmp_path):
    task = make_task(tmp_path / "task")
    scores = {}
    for attention in ("bidirectional", "causal"):
        out = tmp_path / attention
        spec = finetune_spec(attention=attention, learning_rates=[3e-3], seeds=[0], max_steps=30, max_epochs=20.0)
        assert main(["finetune", "--spec", spec, "--model", str(init_dir), "--task-dir", str(task), "--out", str(out)]) == 0
        scores[attention] = read_json(out / "scores.json")
    assert scores["causal"]["attention"] == "causal"
    assert scores["causal"]["grid"][0]["trained_steps"] == 30


def test_missing_split_is_one_line_error(init_dir, tmp_path, capsys):
    task = make_task(tmp_path / "task")
    (task / "test.jsonl").unlink()
    out = tmp_path / "out"
    assert main(["finetune", "--spec", finetune_spec(), "--model", str(init_dir), "--task-dir", str(task), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {task / 'test.jsonl'}: file not found"
    assert not out.exists()
    (task / "test.jsonl").write_text("")
    record_task_splits(task)  # an empty split as a stage would have recorded it
    assert main(["finetune", "--spec", finetune_spec(), "--model", str(init_dir), "--task-dir", str(task), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {task / 'test.jsonl'}: file is empty"


def test_a_non_finite_loss_ends_the_job_and_writes_no_scores(init_dir, tmp_path, capsys, monkeypatch):
    """A grid point whose loss turns NaN (an LR too large, a broken model) would score the
    untrained head; the job stops at it instead, naming it, and writes no scores.json."""
    from pipeline.finetune.task_types.sequence_classification import SequenceClassification

    loss = SequenceClassification.loss
    monkeypatch.setattr(SequenceClassification, "loss", lambda self, model, examples: loss(self, model, examples) * float("nan"))
    out = tmp_path / "out"
    assert (
        main(
            [
                "finetune",
                "--spec",
                finetune_spec(),
                "--model",
                str(init_dir),
                "--task-dir",
                str(make_task(tmp_path / "task")),
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: finetune random-micro on halves: the loss is nan at step 1 of learning rate 0.001, seed 0;"
        " nothing is written (lower the learning rate, or check the model it starts from)"
    )
    assert not out.exists()


def test_a_missing_checkpoint_is_named_never_looked_up_on_the_hub(tmp_path, capsys):
    """A learning-curve checkpoint gone from results/ is a local directory missing, not a hub id."""
    task = make_task(tmp_path / "task")
    missing = tmp_path / "checkpoints" / "step-000010"
    assert (
        main(["finetune", "--spec", finetune_spec(), "--model", str(missing), "--task-dir", str(task), "--out", str(tmp_path / "out")]) == 2
    )
    assert (
        capsys.readouterr().err.strip()
        == f"error: {missing}: directory missing; rerun the job that writes it (snakemake --forcerun <rule> or -f <its output>)"
    )


def test_compiled_layers_fine_tune_to_the_eager_scores(init_dir, tmp_path):
    """finetuning.compile: the transformer layers torch.compile'd in place, then every grid point (restored
    weights, a fresh head, batches of other lengths) runs through them: the eager run's scores, example by
    example (the compiled kernels round otherwise, too little to move a prediction here)."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    task = make_task(tmp_path / "task")
    grids, graphs = {}, {}
    for name, compiled in (("eager", False), ("compiled", True)):
        spec = finetune_spec(learning_rates=[1e-3], seeds=[0, 1], max_steps=4, compile=compiled)
        assert main(["finetune", "--spec", spec, "--model", str(init_dir), "--task-dir", str(task), "--out", str(tmp_path / name)]) == 0
        grids[name] = without_timings(read_json(tmp_path / name / "scores.json"))
        graphs[name] = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    assert graphs["eager"] == 0 and graphs["compiled"] > 0  # the compiled run compiled, the eager one did not
    assert len(grids["compiled"]) == 2
    for eager, compiled in zip(grids["eager"], grids["compiled"], strict=True):
        for scores in ("validation_scores", "test_scores"):
            assert compiled[scores] == pytest.approx(eager[scores], abs=1e-6)
        assert compiled["test_examples"] == eager["test_examples"]
