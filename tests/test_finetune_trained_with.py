"""A task scored on another task's fine-tuned models (``TaskSpec.trained_with``), as the study
scores nq and mldr_en on its MS MARCO models: one fine-tuning job trains, and scores every
grid point's model on each task trained with it; ``finetune-evaluated`` writes each one's
scores.json out of that job's."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pipeline.__main__ import main
from pipeline.errors import PipelineError
from pipeline.files import read_json, write_json, write_jsonl
from pipeline.workflow.configure import load_config, merge, read_configs
from tests.conftest import REPO, record_task_splits, without_timings
from tests.test_finetune_task_types import make_task, spec_json

JUDGED = {"metric": "encodeval_ndcg_at_10", "also_metrics": ["ndcg_at_10"]}


def judged_task(root: Path, train_from: Path) -> Path:
    """A judged retrieval task (queries ranked against documents.jsonl) whose training rows are ``train_from``'s."""
    root.mkdir(parents=True)
    shutil.copy(train_from / "train.jsonl", root / "train.jsonl")
    corpus = [{"id": f"doc{i}", "document": f"Report {100 + i}: a sentence about item {i}."} for i in range(12)]
    write_jsonl(root / "validation.jsonl", [{"id": "v0", "query": "item 1 report", "relevant": ["doc1"]}])
    write_jsonl(root / "test.jsonl", [{"id": "t0", "query": "item 4", "relevant": ["doc4", "doc5"]}])
    write_jsonl(root / "documents.jsonl", corpus)
    write_json(root / "stats.json", {"labels": []})
    record_task_splits(root)
    return root


def with_evaluated(spec: str, name: str) -> str:
    """``spec`` (of the trainer) scoring ``name`` too, a judged task trained with it."""
    plain = json.loads(spec)
    judged = {**plain["task"], **JUDGED, "trained_with": plain["task_name"]}
    return json.dumps({**plain, "evaluated": {name: judged}})


def test_the_trainer_s_models_score_the_evaluated_task_as_its_own_fine_tuning_would(init_dir, tmp_path):
    """Scoring another task changes nothing of the trainer's grid; and the evaluated task's scores
    are those its own fine-tuning on the same rows gives: same models, scored the same way."""
    trainer = make_task("retrieval", tmp_path / "msmarco")
    judged = judged_task(tmp_path / "nq", trainer)
    alone = tmp_path / "alone"
    assert (
        main(["finetune", "--spec", spec_json("retrieval"), "--model", str(init_dir), "--task-dir", str(trainer), "--out", str(alone)]) == 0
    )
    own_spec = json.dumps({**json.loads(spec_json("retrieval", task_keys=JUDGED)), "task_name": "nq"})
    by_itself = tmp_path / "by_itself"
    assert main(["finetune", "--spec", own_spec, "--model", str(init_dir), "--task-dir", str(judged), "--out", str(by_itself)]) == 0

    both = tmp_path / "both"
    command = ["finetune", "--spec", with_evaluated(spec_json("retrieval"), "nq"), "--model", str(init_dir), "--task-dir", str(trainer)]
    assert main([*command, "--evaluated-task-dir", f"nq={judged}", "--out", str(both)]) == 0
    scores = read_json(both / "scores.json")
    assert without_timings(scores) == without_timings(read_json(alone / "scores.json"))
    assert main(["finetune-evaluated", "--trained", str(both), "--task", "nq", "--out", str(tmp_path / "nq_scores")]) == 0
    evaluated = read_json(tmp_path / "nq_scores" / "scores.json")
    assert (evaluated["task"], evaluated["trained_on"], evaluated["metric"]) == ("nq", "retrieval", "encodeval_ndcg_at_10")
    assert without_timings(evaluated) == without_timings(read_json(by_itself / "scores.json"))
    assert [(p["learning_rate"], p["seed"]) for p in evaluated["grid"]] == [(p["learning_rate"], p["seed"]) for p in scores["grid"]]


def test_the_written_out_scores_are_refused_if_the_trainer_s_changed_or_lack_the_task(init_dir, tmp_path, capsys):
    trainer = make_task("retrieval", tmp_path / "msmarco")
    judged = judged_task(tmp_path / "nq", trainer)
    both = tmp_path / "both"
    command = ["finetune", "--spec", with_evaluated(spec_json("retrieval"), "nq"), "--model", str(init_dir), "--task-dir", str(trainer)]
    assert main([*command, "--evaluated-task-dir", f"nq={judged}", "--out", str(both)]) == 0
    assert main(["finetune-evaluated", "--trained", str(both), "--task", "mldr_en", "--out", str(tmp_path / "x")]) != 0
    assert "has no 'mldr_en' (scored there: nq)" in capsys.readouterr().err
    scores = read_json(both / "scores.json")
    scores["evaluated"]["nq"]["grid"][0]["test"] = 100.0
    write_json(both / "scores.json", scores)
    assert main(["finetune-evaluated", "--trained", str(both), "--task", "nq", "--out", str(tmp_path / "y")]) != 0
    assert "sha256" in capsys.readouterr().err and not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_a_task_dir_for_each_evaluated_task_is_required(init_dir, tmp_path, capsys):
    trainer = make_task("retrieval", tmp_path / "msmarco")
    command = ["finetune", "--spec", with_evaluated(spec_json("retrieval"), "nq"), "--model", str(init_dir), "--task-dir", str(trainer)]
    assert main([*command, "--out", str(tmp_path / "out")]) != 0
    assert "give NAME=DIR once for each task of the spec's evaluated (['nq'])" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tasks": {"nq": {"trained_with": "nowhere"}}}, "tasks.nq.trained_with: 'nowhere' is not defined"),
        ({"tasks": {"nq": {"trained_with": "sst2"}}}, "tasks.nq.trained_with: 'sst2' must be a retrieval task that fine-tunes itself"),
        ({"finetuning": {"tasks": ["sst2", "nq"]}}, "tasks.nq.trained_with: 'msmarco' is not in finetuning.tasks"),
        ({"finetuning": {"by_task": {"nq": {"max_steps": 10}}}}, "finetuning.by_task.nq: 'nq' is scored on 'msmarco''s fine-tuned models"),
        ({"tasks": {"sst2": {"trained_with": "qqp"}}}, "tasks.sst2: 'trained_with' goes with type 'retrieval'"),
    ],
)
def test_a_trained_with_that_cannot_hold_is_refused(change, message):
    with pytest.raises(PipelineError, match=re.escape(message)):
        load_config(merge(read_configs([str(REPO / "config" / "paper.yaml")]), change))


def test_the_paper_config_scores_nq_and_mldr_en_on_ms_marco_s_models():
    config = load_config(read_configs([str(REPO / "config" / "paper.yaml")]))
    assert config.evaluated_with("msmarco") == ("nq", "mldr_en")
    assert [config.trainer_of(task) for task in ("msmarco", "nq", "mldr_en", "sst2")] == ["msmarco", "msmarco", "msmarco", "sst2"]


def test_an_evaluated_task_takes_exactly_its_trainer_s_models():
    """Every finetune_evaluated job reads a fine-tuning job the plan has, and no more models are
    scored than the trainer fine-tunes (a runs filter on msmarco filters nq and mldr_en too)."""
    from pipeline.workflow.configure import resolve
    from pipeline.workflow.targets import every_job

    data = merge(read_configs([str(REPO / "config" / "paper.yaml")]), {"finetuning": {"by_task": {"msmarco": {"runs": ["mlm"]}}}})
    jobs = list(every_job(resolve(data, "paper")))
    planned = {job.output for job in jobs}
    evaluated = [job for job in jobs if job.rule == "finetune_evaluated"]
    trained = {job.output for job in jobs if job.rule.startswith("finetune") and job.wildcards.get("task") == "msmarco"}
    assert len(evaluated) == 2 * len(trained) > 0
    for job in evaluated:
        assert job.output.replace(f"/{job.wildcards['task']}/", "/msmarco/") in planned
