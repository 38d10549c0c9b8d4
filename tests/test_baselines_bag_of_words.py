"""The bag-of-words reference: the fine-tuning run's examples and budget, C on validation, bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch

from pipeline.__main__ import main
from pipeline.baselines.bag_of_words import fine_tuning_examples
from pipeline.config import FinetuningSpec
from pipeline.files import read_json, write_json, write_jsonl
from pipeline.finetune.sweep import batch_order
from tests.conftest import record_task_splits

FILLER = "the committee met on tuesday to discuss budget for coming year a new film about family of musicians".split()
CUES = (["dull", "tired", "flat"], ["fresh", "bright", "warm"])  # label 0, label 1


def make_task(root: Path) -> Path:
    """Filler words and one cue word that decides the label: a bag of words learns it."""
    rng = random.Random(0)
    rows = []
    for i in range(300):
        label = i % 2
        words = rng.sample(FILLER, 6) + [rng.choice(CUES[label])]
        rng.shuffle(words)
        rows.append({"id": str(i), "text": " ".join(words) + ".", "label": label})
    for split, part in {"train": rows[:200], "validation": rows[200:250], "test": rows[250:]}.items():
        write_jsonl(root / f"{split}.jsonl", part)
    write_json(root / "stats.json", {"labels": ["negative", "positive"]})
    record_task_splits(root)
    return root


def spec(task_type: str = "sequence_classification", **finetuning) -> str:
    return json.dumps(
        {
            "task_name": "halves",
            "task": {
                "family": "SC",
                "type": task_type,
                "metric": "accuracy",
                "description": "test",
                "data": {"reader": "none", "artifact": "none"},
                "max_length": 24,
            },
            "budget": {"seeds": [0, 1], "batch_size": 8, **finetuning},
            "attention": "bidirectional",
            "bag_of_words": {"regularization": [0.1, 10.0]},
        }
    )


def run_stage(tmp_path, tokenizer_dir, name: str, **finetuning) -> dict:
    out = tmp_path / name
    argv = [
        "bag-of-words",
        "--spec",
        spec(**finetuning),
        "--task-dir",
        str(tmp_path / "task"),
        "--tokenizer",
        str(tokenizer_dir),
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    return read_json(out / "scores.json")


def test_learns_the_word_cues_deterministically_on_a_fine_tuning_runs_budget(tmp_path, tokenizer_dir):
    make_task(tmp_path / "task")
    num_train = len((tmp_path / "task" / "train.jsonl").read_text().splitlines())
    first, again = (run_stage(tmp_path, tokenizer_dir, name) for name in ("a", "b"))
    assert first == again
    assert [(p["regularization"], p["seed"]) for p in first["grid"]] == [(0.1, 0), (10.0, 0), (0.1, 1), (10.0, 1)]
    assert first["num_examples"] == num_train  # one epoch, as the fine-tuning run
    assert min(p["test"] for p in first["grid"] if p["regularization"] == 10.0) == 100.0  # one cue word decides the label
    assert run_stage(tmp_path, tokenizer_dir, "capped", max_steps=3)["num_examples"] == 3 * 8
    assert read_json(tmp_path / "a" / "provenance.json")["inputs"]["tokenizer"]["sha256"]


def test_its_examples_are_those_the_fine_tuning_run_with_the_same_seed_trains_on():
    lengths = torch.randint(3, 60, (5000,), generator=torch.Generator().manual_seed(0)).tolist()
    for max_steps, seed in ((10, 0), (60, 3), (1000, 1)):  # within a pool, across pools, the whole epoch
        finetuning = FinetuningSpec(tasks=("t",), learning_rates=(1e-3,), seeds=(seed,), batch_size=32, max_steps=max_steps)
        seen = torch.cat(batch_order(lengths, finetuning.budget.trained_steps(5000), 32, seed)).tolist()
        assert fine_tuning_examples(lengths, finetuning.budget, seed) == sorted(set(seen))
        assert len(set(seen)) == min(5000, max_steps * 32)


@pytest.mark.parametrize(
    ("task_type", "finetuning", "message"),
    [
        ("token_classification", {}, "bag-of-words: task 'halves' is token_classification, which has no bag-of-words baseline"),
        ("sequence_classification", {"max_steps": 1, "batch_size": 1}, "bag of words: seed 0's 1 training examples hold one label only"),
    ],
)
def test_bad_input_is_one_line_and_leaves_no_output(tmp_path, tokenizer_dir, capsys, task_type, finetuning, message):
    make_task(tmp_path / "task")
    out = tmp_path / "out"
    argv = [
        "bag-of-words",
        "--spec",
        spec(task_type, **finetuning),
        "--task-dir",
        str(tmp_path / "task"),
        "--tokenizer",
        str(tokenizer_dir),
        "--out",
        str(out),
    ]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"error: {message}"
    assert not out.exists()
