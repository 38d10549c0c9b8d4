"""Fine-tuning MFU (issue 55, item 5): bench/finetune_throughput.py times the real finetune job and
counts its FLOPs as the cost estimate counts a grid point; a GPU record of it replaces the assumed
fine-tuning MFU for its task type and size, on its GPU and (scaled) on another."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.config import FinetuningSpec, TaskSpec
from pipeline.finetune.lengths import padded_step_tokens, train_tokens
from pipeline.finetune.run_tokens import RunTokens
from pipeline.finetune.sweep import Sweep
from pipeline.finetune.task_data import read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.metrics import get_metric
from pipeline.model.backbone import read_backbone_spec
from pipeline.workflow import cost, measured_mfu
from pipeline.workflow.configure import REPOSITORY
from pipeline.workflow.cost import parameters, training_flops
from tests.test_finetune import make_task
from tests.test_finetune_task_types import make_task as make_typed_task

BENCH = REPOSITORY / "bench" / "finetune_throughput.py"
TASK = TaskSpec(family="SC", type="sequence_classification", metric="accuracy", data=None, description="test", max_length=64)


def test_the_counted_training_tokens_are_the_padded_tokens_a_grid_point_computes(init_dir, tokenizer, tmp_path, monkeypatch):
    """The bench's FLOPs rest on train_tokens: the sweep's own batches for that seed, each micro-batch padded to its longest."""
    stats, rows = read_task(make_task(tmp_path / "task"))
    task_type = get_task_type(TASK.type)(TaskContext(TASK, stats, tokenizer, "bidirectional", "mlm"))
    splits = {name: task_type.encode_split(split_rows) for name, split_rows in rows.items()}
    spec = FinetuningSpec(
        tasks=("t",), learning_rates=(1e-3,), seeds=(0,), batch_size=8, max_steps=5, micro_batch_size=4, group_by_length=False
    )
    computed = []
    accumulate = type(task_type).accumulate

    def counting(self, model, examples, micro_batch_size, autocast, weighting):
        for start in range(0, len(examples), micro_batch_size):
            micro = examples[start : start + micro_batch_size]
            computed.append(len(micro) * max(len(e.input_ids) for e in micro))
        return accumulate(self, model, examples, micro_batch_size, autocast, weighting)

    monkeypatch.setattr(type(task_type), "accumulate", counting)
    runner = Sweep(task_type, task_type.load_pretrained(str(init_dir)), splits, spec, get_metric("accuracy"))
    for seed in (0, 3):
        computed.clear()
        runner.run_point(1e-3, seed, "test")
        steps = spec.budget.trained_steps(len(splits["train"]))
        assert sum(computed) == train_tokens(splits["train"].examples, steps, spec, seed) > 0
    assert padded_step_tokens(splits["train"].examples, [0, 1, 2], None) == 3 * max(
        len(splits["train"].examples[i].input_ids) for i in range(3)
    )


@pytest.fixture(scope="module")
def bench_record(init_dir, tmp_path_factory) -> dict:
    """The bench on the CPU: the micro model fine-tuned on a sentiment-shaped task, two points of two steps."""
    inputs = tmp_path_factory.mktemp("inputs")
    make_task(inputs / "data" / "tasks" / "sentiment")
    out = inputs / "finetune.json"
    command = [sys.executable, str(BENCH), "--inputs", str(inputs), "--init", str(init_dir), "--tasks", "sentiment"]
    command += ["--steps", "2", "--points", "2", "--precision", "fp32", "--max-length", "32", "--threads", "1", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPOSITORY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| sentiment | sequence_classification | 2 |" in done.stdout
    return json.loads(out.read_text())


def test_the_bench_times_each_grid_point_of_the_real_job_and_counts_its_flops(bench_record, init_dir):
    row = bench_record["tasks"]["sentiment"]
    assert [p["seed"] for p in row["points"]] == [0, 1] and row["steps"] == 2
    protocol = {"precision": "fp32", "batch_size": 32, "micro_batch_size": 8, "group_by_length": False, "compile": False}
    assert bench_record["protocol"] == protocol and bench_record["complete"]  # written after each task, then whole
    matmul = parameters(read_backbone_spec(init_dir).size, read_backbone_spec(init_dir).vocab_size).non_embedding
    peak = bench_record["datasheet_peak_flops"]
    for point in row["points"]:
        assert point["seconds"] > 0 and point["train_tokens"] > 0 and point["scored_tokens"] > 0
        assert point["tokens_per_second"] == pytest.approx((point["train_tokens"] + point["scored_tokens"]) / point["seconds"])
        phases = point["phases"]  # the job's own timing of each phase, summing to its seconds
        assert set(phases) == {"set_up", "training", "scoring"} and sum(phases.values()) == pytest.approx(point["seconds"])
        assert point["set_up_seconds"] == phases["set_up"]
        assert point["training_mfu"] == pytest.approx(training_flops(matmul, point["train_tokens"]) / phases["training"] / peak)
        assert point["scoring_mfu"] == pytest.approx(2 * matmul * point["scored_tokens"] / phases["scoring"] / peak)
    for key in ("mfu_datasheet", "set_up_seconds", "training_mfu", "scoring_mfu"):  # the median of the points after the warm-up
        assert row[key] == row["points"][1][key]


PHASE_KEYS = ("set_up_seconds", "training_mfu", "scoring_mfu")


def gpu_record(record: dict, gpu: str, size: str, mfu: float, phases: tuple[float, float, float] | None = None) -> dict:
    """The CPU record as a GPU run of paper size ``size`` would have written it: with ``phases`` (set-up
    seconds, training and scoring MFU) timed apart, or without them, as records before they were."""
    changed = json.loads(json.dumps(record))
    changed["machine"] = f"AMD EPYC, 8 threads, GPU NVIDIA {gpu}; torch 2.11.0"
    changed["args"] |= {"device": "cuda", "size": size, "init": None}
    changed["protocol"] |= {"precision": "bf16_weights"}  # config/paper.yaml's
    for row in changed["tasks"].values():
        row["mfu_datasheet"] = mfu
        for key, value in zip(PHASE_KEYS, phases or (None,) * 3, strict=True):
            if phases is None:
                del row[key]
            else:
                row[key] = value
    return changed


def without_finetune_records(records: Path) -> None:
    """The scratch copy of bench/records with no fine-tuning record (the pretraining ones stay, for the GPU ratio)."""
    for path in records.glob("*/*.json"):
        record = json.loads(path.read_text())
        if isinstance(record, dict) and record.get("bench") == measured_mfu.FINETUNE_BENCH:  # not the browser check's list
            path.unlink()
    measured_mfu.finetune_measurements.cache_clear()


def plant(records: Path, name: str, record: dict) -> None:
    """``record`` in the scratch records as bench/records/finetune-test/``name``, read by the next lookup."""
    (records / "finetune-test").mkdir(exist_ok=True)
    (records / "finetune-test" / name).write_text(json.dumps(record))
    measured_mfu.finetune_measurements.cache_clear()


def test_a_gpu_record_replaces_the_assumed_fine_tuning_mfu_for_its_task_type_and_size(bench_record, scratch_records, paper):
    assumed = paper.hardware.assumed_finetune_mfu
    without_finetune_records(scratch_records)
    assert cost.finetune_mfu(paper, "sst2", "210m") == assumed  # no record yet
    plant(scratch_records, "cpu.json", bench_record)  # a CPU run: not a GPU's MFU
    assert measured_mfu.finetune_measurements() == ()
    legacy = gpu_record(bench_record, "H100 80GB HBM3", "210m", 0.123)  # the whole point's MFU alone
    plant(scratch_records, "h100.json", legacy)
    found = measured_mfu.measured_finetune_for(paper, "sst2", "210m")  # SST-2 is a sequence classification, as the stand-in
    assert found.mfu == 0.123 and found.record == "bench/records/finetune-test/h100.json" and not found.scaled_by
    assert cost.finetune_mfu(paper, "mnli", "210m") == 0.123
    hours = cost.finetuning_job_hours(paper, "sst2", "210m")
    assert hours == pytest.approx(cost.grid_flops(paper, "sst2", "210m") / (989e12 * 0.123) / 3600)
    for task, size in (("squad", "210m"), ("sst2", "610m")):  # another task type, another size: still assumed
        assert cost.finetune_mfu(paper, task, size) == assumed
    fp32 = dataclasses.replace(paper, finetuning=dataclasses.replace(paper.finetuning, precision="fp32"))
    assert cost.finetune_mfu(fp32, "sst2", "210m") == assumed  # measured in another precision
    sources = measured_mfu.finetune_mfu_sources(paper, [("sst2", "210m"), ("squad", "210m")])
    assert sources.startswith("210m sequence_classification 12.3% measured (bench/records/finetune-test/h100.json)")
    assert "timed on grid points of 2 steps" in sources and sources.endswith("20% MFU assumed elsewhere")


def test_a_record_of_the_phases_costs_a_point_of_any_length_as_set_up_steps_and_scoring(bench_record, scratch_records, paper):
    """A point of the jobs' steps is its set-up once, then its training and scoring FLOPs at their own MFUs;
    not the short bench point's whole MFU, in which the set-up and scoring weigh far more."""
    without_finetune_records(scratch_records)
    plant(scratch_records, "h100.json", gpu_record(bench_record, "H100 80GB HBM3", "210m", 0.01, phases=(2.0, 0.3, 0.5)))
    found = measured_mfu.measured_finetune_for(paper, "sst2", "210m")
    assert found.phases == measured_mfu.FinetunePhases(2.0, 0.3, 0.5)
    runs, peak = paper.finetuning.for_task("sst2").num_runs, 989e12
    capped = cost.run_flops(paper, "sst2", "210m")
    assert capped[1] == 0  # the cap counts no scoring
    assert cost.finetuning_job_hours(paper, "sst2", "210m") == pytest.approx(runs * (2.0 + capped[0] / (0.3 * peak)) / 3600)
    lengths = RunTokens("sst2", train_rows=1000, steps=1000, mean_tokens=31.25, train_tokens=1_000_000, scored_tokens=400_000)
    training, scoring = cost.run_flops(paper, "sst2", "210m", lengths)
    assert scoring > 0 and training + scoring == cost.grid_flops(paper, "sst2", "210m", lengths) / runs
    expected = runs * (2.0 + training / (0.3 * peak) + scoring / (0.5 * peak)) / 3600
    assert cost.finetuning_job_hours(paper, "sst2", "210m", lengths) == pytest.approx(expected)
    sources = measured_mfu.finetune_mfu_sources(paper, [("sst2", "210m")])
    assert sources.startswith("210m sequence_classification training 30.0%, scoring 50.0%, set-up 2.0 s a point measured")
    assert "timed on grid points" not in sources  # the short points' caveat is for records of the whole point alone


def test_a_record_of_compiled_layers_costs_only_jobs_that_compile(bench_record, scratch_records, paper):
    """finetuning.compile is part of the setting a record was measured in: records from before it were eager."""
    compiled = dataclasses.replace(paper, finetuning=dataclasses.replace(paper.finetuning, compile=True))
    without_finetune_records(scratch_records)
    eager_record = gpu_record(bench_record, "H100 80GB HBM3", "210m", 0.01)
    del eager_record["protocol"]["compile"]  # as records before the setting
    plant(scratch_records, "eager.json", eager_record)
    assert measured_mfu.measured_finetune_for(compiled, "sst2", "210m") is None
    compiled_record = gpu_record(bench_record, "H100 80GB HBM3", "210m", 0.05)
    compiled_record["protocol"]["compile"] = True
    plant(scratch_records, "compiled.json", compiled_record)
    assert measured_mfu.measured_finetune_for(compiled, "sst2", "210m").record.endswith("compiled.json")
    assert measured_mfu.measured_finetune_for(paper, "sst2", "210m").record.endswith("eager.json")


def test_another_gpu_s_record_is_scaled_by_the_two_gpus_pretraining_ratio(bench_record, scratch_records, paper):
    """The H100 never measured fine-tuning: the H200's record times the H100/H200 CLM ratio at a size both pretrained."""
    without_finetune_records(scratch_records)
    plant(scratch_records, "h200.json", gpu_record(bench_record, "H200", "210m", 0.2, (2.0, 0.3, 0.5)))
    ratio, how = measured_mfu.gpu_ratio(paper.hardware.gpu_name, "nvidia h200", "clm")
    found = measured_mfu.measured_finetune_for(paper, "sst2", "210m")
    assert found.mfu == pytest.approx(0.2 * ratio) and 0.5 < ratio < 1.5
    assert found.phases == measured_mfu.FinetunePhases(2.0, 0.3 * ratio, 0.5 * ratio)  # the set-up (copies, casts) as measured
    assert found.record.endswith("h200.json") and how in found.scaled_by
    assert "scaled from (bench/records/finetune-test/h200.json)" in measured_mfu.finetune_mfu_sources(paper, [("sst2", "210m")])


def test_news_qa_s_rows_fine_tuned_as_token_tagging_stand_in_for_the_paper_s_qa_type(init_dir, tmp_path, scratch_records, paper):
    """The paper fine-tunes SQuAD, SQuAD v2 and ReCoRD as EncodEval's token tagging; the embedded news_qa
    is extractive QA. The bench's news_qa_tagged fine-tunes news_qa's rows as qa_token_tagging, so a GPU
    record of it costs the paper's QA type."""
    inputs = tmp_path / "inputs"
    make_typed_task("extractive_qa", inputs / "data" / "tasks" / "news_qa")  # the QA rows both types read
    out = tmp_path / "record.json"
    command = [sys.executable, str(BENCH), "--inputs", str(inputs), "--init", str(init_dir), "--tasks", "news_qa_tagged"]
    command += ["--steps", "2", "--points", "1", "--precision", "fp32", "--max-length", "48", "--threads", "1", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPOSITORY)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(out.read_text())
    assert record["tasks"]["news_qa_tagged"]["type"] == "qa_token_tagging"
    without_finetune_records(scratch_records)
    plant(scratch_records, "h100.json", gpu_record(record, "H100 80GB HBM3", "210m", 0.05, (1.0, 0.2, 0.4)))
    for task in ("squad", "squad_v2", "record"):
        assert measured_mfu.measured_finetune_for(paper, task, "210m").phases == measured_mfu.FinetunePhases(1.0, 0.2, 0.4), task


def test_the_h200_s_records_cost_the_paper_s_210m_fine_tuning_of_every_stand_in_s_type(paper):
    """bench/records/gpu-speed-h200-2026-11-28b: the stand-ins at 210M on one H200 give the H100 estimate of
    their task types there (scaled by the two GPUs' CLM ratio), and the printout says how short their points
    were. SQuAD is not among them: the paper fine-tunes it as qa_token_tagging (EncodEval's), the stand-in
    news_qa is extractive_qa."""
    assert measured_mfu.measured_finetune_for(paper, "squad", "210m") is None
    jobs = [("sst2", "210m"), ("conll2003", "210m"), ("msmarco", "210m")]
    for task, size in jobs:
        found = measured_mfu.measured_finetune_for(paper, task, size)
        assert found.record.startswith("bench/records/gpu-speed-h200-2026-11-28b/finetune-210m-") and found.scaled_by, task
        assert 0.001 < found.mfu < 0.05 and found.steps == 8
    sources = measured_mfu.finetune_mfu_sources(paper, [*jobs, ("sst2", "610m")])
    assert "timed on grid points of 8 steps" in sources and sources.endswith("20% MFU assumed elsewhere")  # no 610M record
