"""The one-GPU tier (config/one_gpu.yaml): the study's first 1,000 steps of 610M CLM and MLM-40,
planned as runs stopped before their schedule's decay, costed on one H100 and one H200 from the
measured records, fine-tuning costed from measured lengths where the tasks are prepared."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pipeline.analysis.claims.curves import c04_verdict
from pipeline.analysis.stats import Estimate
from pipeline.errors import PipelineError
from pipeline.finetune.lengths import padded_step_tokens
from pipeline.finetune.task_types.retrieval import RetrievalExample
from pipeline.schedules import learning_rate
from pipeline.workflow.configure import read_configs, resolve
from pipeline.workflow.cost import pretraining_gpu_hours, pretraining_tokens
from pipeline.workflow.cost_printout import GPU_MODELS, format_estimate, on_gpu, plan_costs
from pipeline.workflow.measured_mfu import Setting, measured_mfu, setting_of, transferred_mfu
from pipeline.workflow.record_lengths import with_records
from tests.conftest import REPO

TIER = [str(REPO / "config" / "paper.yaml"), str(REPO / "config" / "one_gpu.yaml")]


@pytest.fixture(scope="module")
def tier():
    return resolve(read_configs(TIER), "one_gpu")


def test_the_tier_is_the_study_s_first_thousand_steps_of_610m_clm_and_mlm_40(tier):
    config = tier.config
    assert sorted(tier.plans) == ["clm-610m", "mlm-610m"] and tier.curve_points == []
    for plan in tier.plans.values():
        assert (plan.first_step, plan.last_step, plan.schedule_steps) == (0, 1000, 42_000)
        # Table 1's shape and tokens per step, WSD's warmup: step 1,000 trains at half the peak rate
        assert config.sizes["610m"] == dataclasses.replace(
            config.sizes["610m"], num_layers=26, hidden_size=1152, num_kv_heads=6, ffn_size=4096
        )
        assert pretraining_tokens(plan, config) == 1000 * 1152 * 2048
        assert learning_rate(999, plan.schedule_steps, plan.schedule) == pytest.approx(5e-4 * 1000 / 2000, rel=1e-2)
    assert config.pretraining.samples == "split" and config.objectives["mlm"]["mask_ratio"] == 0.4
    assert config.finetuning.num_runs == 6 * 5  # the study's full grid: every LR on every seed
    reduced = resolve(read_configs([*TIER, str(REPO / "config" / "one_gpu_reduced.yaml")]), "one_gpu_reduced").config
    assert reduced.finetuning.num_runs == 6 + 4  # the opt-in: every LR on seed 0, seeds 1-4 at the one it picks


def overlay(tmp_path, text: str) -> list[str]:
    path = tmp_path / "overlay.yaml"
    path.write_text(text)
    return [*TIER, str(path)]


@pytest.mark.parametrize(
    "text, message",
    [
        ("pretraining: {stop_at_step: 42000}", "stop_at_step 42000 must be below budget_steps 42000"),
        ("pretraining: {checkpoint_steps: [1000]}", "checkpoint_steps [1000] must lie strictly between 0 and stop_at_step 1000"),
        (
            "two_stage: {sizes: [610m], first: clm, second: mlm, first_stage_fractions: [0.5], optimizer_state: carry}",
            "pretraining.stop_at_step 1000: runs ['clm50_mlm-610m'] start from steps or final models",
        ),
    ],
)
def test_what_a_stopped_run_cannot_feed_is_refused_in_one_line(tmp_path, text, message):
    with pytest.raises((PipelineError, ValueError), match=message.replace("[", r"\[").replace("]", r"\]")):
        resolve(read_configs(overlay(tmp_path, text)), "one_gpu")


def test_pretraining_is_costed_at_the_measured_tokens_per_second_on_the_h200(tier):
    """The H200's 610M record (bench/records/gpu-speed-h200-2026-11-28b, the study's vocabulary, length and
    split samples, micro-batch 16, bf16, FlexAttention, Liger's head) turned back into hours: 2.36B tokens over its tokens per second."""
    config = on_gpu(tier.config, "h200")
    record = json.loads((REPO / "bench/records/gpu-speed-h200-2026-11-28b/610m-mb16.json").read_text())
    for plan in tier.plans.values():
        kind = config.objectives[plan.objective]["kind"]
        tokens_per_second = record["summary"][kind]["ours"]["tokens_per_second"]
        assert pretraining_gpu_hours(config, plan) == pytest.approx(pretraining_tokens(plan, config) / tokens_per_second / 3600, rel=1e-3)


def test_the_h100_is_costed_from_the_h200_at_the_two_gpus_measured_ratio(tier):
    """No H100 record at 610M: the H200's there, times H100 / H200 measured at 210M in one setting."""
    config = on_gpu(tier.config, "h100")
    setting = setting_of(config, "610m")
    assert measured_mfu(config.hardware.gpu_name, "610m", "clm", setting) is None
    h200 = measured_mfu(GPU_MODELS["h200"]["gpu_name"], "610m", "clm", setting).mfu
    paper_210m = Setting(micro_batch_size=8, sequence_length=2048, precision="bf16", vocab_size=128256)  # both GPUs measured it
    ratio = measured_mfu("H100", "210m", "clm", paper_210m).mfu / measured_mfu("H200", "210m", "clm", paper_210m).mfu
    found = transferred_mfu(config.hardware.gpu_name, "610m", "clm", setting)
    assert found.scaled_by.startswith(f"clm x {ratio:.2f}, the H100/H200 ratio at 210m") and found.mfu == pytest.approx(h200 * ratio)
    assert 0.8 < ratio < 1.0
    assert "scaled from" in format_estimate(config, tier, "one_gpu.yaml")


def test_an_attempt_off_the_jobs_path_is_not_their_speed(scratch_records):
    """The Liger head's records (210M, micro-batch 32) are the speed of a config that trains with that head
    (pretraining.compute.lm_head: liger), never of one with the chunked head; Liger's layers are an attempt
    the trainer does not take; a record from before --liger-layers (mb32's: no such key) ran without them."""
    from pipeline.workflow.measured_mfu import Setting, measurements

    record = json.loads((scratch_records / "gpu-speed-h200-2026-11-28" / "mb32.json").read_text())
    assert "liger_layers" not in record["args"]
    record["args"]["liger_layers"] = True
    (scratch_records / "gpu-speed-h200-2026-11-28" / "zz-layers.json").write_text(json.dumps(record))
    assert any(m.record.endswith("/mb32.json") for m in measurements())
    assert not any(m.record.endswith("/zz-layers.json") for m in measurements())
    assert measured_mfu("H200", "210m", "clm", Setting(32, 2048, "bf16", 128256), "packed").record.endswith("/mb32.json")
    # a config training split samples: the record that trained them (the second lease's), not the packed one
    assert measured_mfu("H200", "210m", "clm", Setting(32, 2048, "bf16", 128256), "split").record.endswith("28b/base.json")
    liger = measured_mfu("H200", "210m", "clm", Setting(32, 2048, "bf16", 128256, lm_head="liger"), "packed")
    assert liger.record.endswith("28b/packed.json") and liger.mfu == pytest.approx(0.356, abs=5e-4)  # the newer of two


def test_the_estimate_says_whether_the_tier_fits_its_day_on_either_grid(tier):
    lengths = with_records(tier.config, {})
    text = format_estimate(tier.config, tier, "one_gpu.yaml", lengths)
    hours = sum(cost.gpu_hours for cost in plan_costs(tier.config, tier, lengths))
    budget = f"budget: 48 GPU-hours on one H100 80GB SXM; this plan {hours:,.1f}: fits, {48 - hours:,.1f} to spare"
    assert f"{budget} (fine-tuning from published lengths where not measured)" in text
    reduced = resolve(read_configs([*TIER, str(REPO / "config" / "one_gpu_reduced.yaml")]), "reduced")
    reduced_hours = sum(cost.gpu_hours for cost in plan_costs(reduced.config, reduced, lengths))
    said = "(every rate on seed 0, the other seeds at the rate it chooses: 10 runs, cells marked for it) would make the plan"
    assert f"{said} {reduced_hours:,.1f}" in text
    assert "at the cap" not in text


def test_every_study_task_is_costed_from_its_record_without_the_hub(tier, capsys):
    """No task prepared, no hub: each trained task's grid point from its dataset's published rows and
    lengths; the one-epoch tasks at their real steps (CoNLL's 14,042 rows: 439 of 32; UNER's 12,543: 392)."""
    from pipeline.__main__ import main

    lengths = with_records(tier.config, {})
    trained = [task for task in tier.config.finetuning.tasks if tier.config.tasks[task].trained_with is None]
    assert sorted(lengths) == sorted(trained) and len(trained) == 10  # nq and mldr_en are scored within msmarco's
    assert (lengths["conll2003"].steps, lengths["uner_en"].steps, lengths["sst2"].steps) == (439, 392, 1000)
    assert {tokens.source for tokens in lengths.values()} == {"record"}
    # MS MARCO's grid point scores its judged queries and passages, and NQ's and MLDR's on its models
    assert lengths["msmarco"].scored_tokens > 7_023 * 8 + 16_697 * 73 + 3_452 * 12 + 4_201 * 103
    assert main(["cost", "--configfile", *TIER, "--gpu", "h100", "h200"]) == 0
    printed = capsys.readouterr().out
    assert "at the cap" not in printed and printed.count("full grid: every rate on every seed") == 2
    assert "on H100 80GB SXM" in printed and "on H200 141GB" in printed


def test_padded_step_tokens_pad_each_micro_batch_to_its_longest():
    class Example:
        def __init__(self, length):
            self.input_ids = [0] * length

    examples = [Example(n) for n in (3, 10, 4, 4)]
    assert padded_step_tokens(examples, [0, 1, 2, 3], None) == 4 * 10
    assert padded_step_tokens(examples, [0, 1, 2, 3], 2) == 2 * 10 + 2 * 4
    pairs = [RetrievalExample([1] * 2, [1] * 9), RetrievalExample([1] * 5, [1] * 3)]
    assert padded_step_tokens(pairs, [0, 1], None) == 2 * 5 + 2 * 9  # queries and documents each to their own longest


def test_a_curve_ending_before_the_crossover_cannot_support_c04():
    clm_ahead, mlm_ahead = Estimate(-3.0, 0.4, 4, 0.95), Estimate(3.0, 0.4, 4, 0.95)  # MLM - CLM, CIs clear of 0
    assert c04_verdict([(0.024, clm_ahead)], crossover=15 / 42) == "inconclusive"
    assert c04_verdict([(0.024, mlm_ahead)], crossover=15 / 42) == "contradicted"
    assert c04_verdict([(0.024, clm_ahead), (1.0, mlm_ahead)], crossover=15 / 42) == "supported"
