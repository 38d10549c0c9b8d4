"""The cost estimate: parameter counts, FLOPs, memory check, and the paper config's dry run printing them."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pipeline.analysis.study_cells import STUDY_SIZES
from pipeline.config import SizeSpec
from pipeline.model.backbone import BackboneSpec, build_language_model, count_parameters
from pipeline.workflow import cost
from pipeline.workflow.configure import read_configs, resolve
from pipeline.workflow.cost import (
    data_stage_cost,
    over_memory,
    parameters,
    peak_memory,
)
from pipeline.workflow.cost_printout import plan_costs
from pipeline.workflow.measured_mfu import measured_for, measured_mfu, setting_of
from pipeline.workflow.rule_params import RULES, gpu_jobs
from pipeline.workflow.targets import every_job
from tests.conftest import REPO


@pytest.mark.parametrize("attention", ["causal", "bidirectional"])
def test_parameter_counts_match_the_built_model(attention):
    size = SizeSpec(num_layers=2, hidden_size=96, num_heads=6, num_kv_heads=2, ffn_size=160)  # grouped-query attention
    model = build_language_model(BackboneSpec(size, 500, 64, 0, 1, 2, 3), attention, seed=0)
    counts = parameters(size, 500)
    assert (counts.total, counts.non_embedding, counts.non_embedding + counts.embedding) == count_parameters(model)


def test_paper_sizes_are_the_study_sizes(paper):
    # "210M" counts the non-embedding parameters and one 128,256 x 768 embedding matrix.
    assert parameters(paper.sizes["210m"], 128256).non_embedding + 128256 * 768 == pytest.approx(210e6, rel=0.02)
    assert parameters(paper.sizes["610m"], 128256).non_embedding + 128256 * 1152 == pytest.approx(610e6, rel=0.02)
    # the study's cells are compared at its Table 1 architectures' own counts, which these sizes are
    for size, (_, count) in STUDY_SIZES.items():
        counts = parameters(paper.sizes[size], 128256)
        assert counts.non_embedding + counts.embedding == count, size


def test_the_estimate_costs_every_job_of_every_registered_gpu_rule(paper_plan) -> None:
    """The rows come from the rule registration (``@rule(..., gpu=...)``): one per GPU rule with jobs,
    pretraining one per study, each counting exactly its rule's jobs; no rule is named in cost.py."""
    rows = {cost.stage: cost.jobs for cost in plan_costs(paper_plan.config, paper_plan)}
    planned = Counter(job.rule for job in every_job(paper_plan) if job.rule in gpu_jobs())
    assert sum(jobs for stage, jobs in rows.items() if stage.startswith("pretrain (")) == planned.pop("pretrain")
    assert {stage: jobs for stage, jobs in rows.items() if not stage.startswith("pretrain (")} == dict(planned)
    assert {"minimal_pairs", "finetune_outside"} <= set(planned)  # the rules the hand-kept list left out or renamed
    source = Path(cost.__file__).read_text()
    assert [rule for rule in RULES if re.search(rf"""["']{rule}["']""", source)] == []


def test_pretraining_flops_are_six_n_tokens_the_head_at_its_loss_positions(paper, paper_plan):
    """6 x N x tokens, N the non-embedding parameters plus the LM head at the share of positions it
    runs on under sparse prediction: all of them (less one) for CLM, the mask ratio for MLM."""
    costs = {c.stage: c for c in plan_costs(paper, paper_plan)}
    runs = costs["pretrain (objectives)"]
    assert runs.jobs == 3 * 5  # clm, mlm and the three other masking ratios at three sizes
    tokens_per_run = 42000 * 1152 * 2048
    assert runs.tokens == 15 * tokens_per_run
    head_shares = {"clm": 2047 / 2048, "mlm": 0.4, "mlm_20": 0.2, "mlm_30": 0.3, "mlm_50": 0.5}

    def flops(size: str, objective: str) -> float:
        counts = parameters(paper.sizes[size], 128256)
        return 6 * (counts.non_embedding + counts.lm_head * head_shares[objective]) * tokens_per_run

    every = [(size, objective) for size in ("210m", "610m", "1b") for objective in head_shares]
    assert runs.flops == pytest.approx(sum(flops(size, objective) for size, objective in every), rel=1e-4)
    hardware = paper.hardware
    # every size's CLM and MLM kinds at the MFU its records give the H100 (pipeline.workflow.measured_mfu)
    mfu = {(p.size, p.objective): measured_for(paper, p).mfu for p in paper_plan.plans.values() if p.study == "objectives"}
    seconds = sum(flops(size, objective) / mfu[size, objective] for size, objective in every)
    assert runs.gpu_hours == pytest.approx(seconds / (hardware.gpu_peak_tflops * 1e12) / 3600, rel=1e-4)
    assert costs["finetune"].runs == costs["finetune"].jobs * 6 * 5  # the study's 6 learning rates x 5 seeds


@pytest.mark.parametrize("size", ["210m", "610m", "1b"])
@pytest.mark.parametrize("objective", ["clm", "mlm"])
def test_a_measured_run_is_costed_at_its_measured_tokens_per_second(paper, paper_plan, objective, size):
    """The round trip the estimate rests on: a run measured in bench/records (2,048 tokens, bf16,
    the study's vocabulary, MLM at 40%, the micro-batch the config's jobs use) costs its tokens
    over the record's tokens per second on that GPU (the H200). Counting MLM's head at every
    position would cost it ~1.4x that."""
    import json

    from pipeline.workflow.configure import REPOSITORY
    from pipeline.workflow.cost import pretraining_gpu_hours, pretraining_tokens
    from pipeline.workflow.cost_printout import on_gpu

    h200 = on_gpu(paper, "h200")
    plan = next(p for p in paper_plan.plans.values() if p.study == "objectives" and p.size == size and p.objective == objective)
    found = measured_mfu(h200.hardware.gpu_name, size, objective, setting_of(h200, size))
    tokens_per_second = json.loads((REPOSITORY / found.record).read_text())["summary"][objective]["ours"]["tokens_per_second"]
    hours = pretraining_tokens(plan, h200) / tokens_per_second / 3600
    assert pretraining_gpu_hours(h200, plan) == pytest.approx(hours, rel=1e-3)


def test_memory_is_checked_against_the_gpu(paper, paper_plan):
    plans = paper_plan.plans
    assert over_memory(paper, plans) == []
    compute = dataclasses.replace(paper.pretraining.compute, micro_batch_size=128, by_size={})
    greedy = dataclasses.replace(paper, pretraining=dataclasses.replace(paper.pretraining, compute=compute))
    assert "210m" in over_memory(greedy, plans)
    dense = dataclasses.replace(
        greedy,
        pretraining=dataclasses.replace(
            greedy.pretraining, compute=dataclasses.replace(compute, micro_batch_size=8, sparse_prediction=False)
        ),
    )
    sparse_logits = peak_memory(paper, plans, "210m", 8).logits_gb
    assert peak_memory(dense, plans, "210m", 8).logits_gb > sparse_logits  # MLM's sparse prediction does not save CLM's logits
    assert (
        peak_memory(paper, plans, "1b", 8).states_gb < peak_memory(paper, plans, "1b", 1).states_gb / 4
    )  # FSDP shards weights and AdamW state


def test_the_data_stage_costs_the_expected_tokens_at_the_measured_rates(paper):
    data = data_stage_cost(paper)
    hardware = paper.hardware
    assert (data.num_shards, data.tokens, data.token_bytes) == (64, 1e11, 4)  # Llama-3's 128,256 ids need uint32
    assert data.cpu_hours == pytest.approx(1e11 / hardware.data_tokens_per_cpu_second / 3600)
    assert (data.text_gb, data.tokens_gb) == pytest.approx((1e11 * hardware.data_text_bytes_per_token / 1e9, 400.0))
    assert data_stage_cost(resolve(read_configs([]), "default").config) is None  # the default states no expected size


def test_paper_dry_run_prints_the_estimate_and_starts_torchrun():
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "all", "--configfile", "config/paper.yaml", "-n", "-p"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "GPU-hours" in output and "Peak memory per GPU" in output and "EXCEEDS" not in output
    assert "64 prepare_corpus + 64 pack jobs over 1e+11 tokens" in output and "GB of tokens (uint32)" in output
    for rule in ("prepare_corpus", "pack"):  # one job per shard
        assert len({line for line in output.splitlines() if line.startswith(f"rule {rule}:")}) == 1
        assert sum(line.startswith(f"rule {rule}:") for line in output.splitlines()) == 64
    assert "-m torch.distributed.run --standalone --nproc-per-node 8 -m pipeline pretrain" in output and "--device cuda" in output
    assert "gpu=8, runtime=4320" in output  # the longest, 1B, run: 62 h x 1.25, capped at max_job_hours
    assert "Job requests (pipeline/workflow/job_resources.py" in output
    finetune_commands = [line for line in output.splitlines() if "-m pipeline finetune " in line]
    assert finetune_commands and all("--device cuda" in line for line in finetune_commands)  # hardware.finetune_gpus: 1
    assert "This was a dry-run" in output


def test_the_estimate_takes_the_measured_mfu_where_a_record_exists_and_says_which(paper):
    """bench/records: the H100's 210M CLM and MLM at micro-batch 8 replace the assumed 40%; the
    H200's newest record (by this repository's history) wins over its older one; a size never
    measured on a GPU has no measurement of its own, and neither has a setting measured otherwise
    than the config's jobs run (another micro-batch, length, precision, vocabulary, attention kernel or head)."""
    from pipeline.workflow.measured_mfu import Setting, measured_mfu, setting_of

    assert setting_of(paper, "210m") == Setting(32, 2048, "bf16", 128256, attention="flex", lm_head="liger")
    assert setting_of(paper, "1b") == Setting(8, 2048, "bf16", 128256)  # sdpa and the chunked head: its only record of both objectives
    paper_210m = Setting(micro_batch_size=8, sequence_length=2048, precision="bf16", vocab_size=128256)
    h100 = measured_mfu("H100 80GB SXM", "210m", "clm", paper_210m)
    assert h100.mfu == pytest.approx(0.2167, abs=1e-4) and h100.record.startswith("bench/records/gpu_acceptance-h100-")
    assert measured_mfu("H200", "210m", "mlm", paper_210m).record.endswith("-at-ca3139a.json")  # not the older 8b36565 run
    assert measured_mfu("H100 80GB SXM", "610m", "clm", setting_of(paper, "610m")) is None
    assert measured_mfu("A100", "210m", "clm", paper_210m) is None
    for other in (
        dataclasses.replace(paper_210m, micro_batch_size=4),
        dataclasses.replace(paper_210m, sequence_length=1024),
        dataclasses.replace(paper_210m, precision="fp32"),
        dataclasses.replace(paper_210m, vocab_size=32000),
        dataclasses.replace(paper_210m, attention="flex"),  # flex was measured at 32 alone
        dataclasses.replace(paper_210m, lm_head="liger"),
    ):
        assert measured_mfu("H100 80GB SXM", "210m", "clm", other) is None, other


def test_fine_tuning_fits_a_gpu_by_its_micro_batch(paper, paper_plan):
    """The paper's 1B fine-tuned 32 examples of 2,028 tokens at once would not fit an 80 GB GPU;
    its micro-batches of 8 (the study's 4 x 8) do."""
    from pipeline.workflow.cost import finetune_peak_memory, over_memory

    assert all(finetune_peak_memory(paper, size).fits for size in ("210m", "610m", "1b"))
    whole = dataclasses.replace(paper, finetuning=dataclasses.replace(paper.finetuning, micro_batch_size=None))
    assert not finetune_peak_memory(whole, "1b").fits and "1b fine-tuning" in over_memory(whole, paper_plan.plans)


H200_RECORDS = [
    *(f"gpu-speed-h200-2026-11-28/{name}" for name in ("mb8", "mb16", "mb32", "liger", "610m-mb8", "1b-mb8")),
    *(f"gpu-speed-h200-2026-11-28b/{name}" for name in ("base", "flexliger", "packed", "610m-mb16")),
]


@pytest.mark.parametrize("record", H200_RECORDS)
def test_the_memory_estimate_agrees_with_every_measured_peak(paper, paper_plan, record):
    """The H200's jobs'-path records (the chunked or the Liger head, SDPA or FlexAttention, packed blocks or
    split samples, layers compiled, bf16, one GPU): the estimate of their size at their micro-batch and kernels
    is within 10% of the measured peak (it was 2.8x at 210M, micro-batch 8, when it counted every position's
    logits, which neither sparse head holds)."""
    import json

    from pipeline.workflow.configure import REPOSITORY

    measured = json.loads((REPOSITORY / "bench/records" / f"{record}.json").read_text())
    args = measured["args"]
    kernels = {"attention": args.get("attention", "sdpa"), "lm_head": args["lm_head"]}
    compute = dataclasses.replace(
        paper.pretraining.compute, micro_batch_size=args["micro_batch_size"], **kernels, by_size={}, sharding="ddp"
    )
    samples = args.get("samples", "packed")  # before --samples: packed blocks
    config = dataclasses.replace(paper, pretraining=dataclasses.replace(paper.pretraining, compute=compute, samples=samples))
    estimate = peak_memory(config, paper_plan.plans, args["size"], world_size=1)
    for kind, sides in measured["summary"].items():
        assert estimate.total_gb == pytest.approx(sides["ours"]["peak_memory_gb"], rel=0.10), kind


def test_every_size_s_jobs_run_in_a_setting_a_record_measured(paper):
    """config/paper.yaml's micro-batch per size is one a record measured on the jobs' path (the
    H200's), so the estimate's MFU is the jobs' own, not an assumption."""
    for size in paper.pretraining.sizes:
        for kind in ("clm", "mlm"):
            assert measured_mfu("H200", size, kind, setting_of(paper, size)) is not None, (size, kind)


def test_a_task_without_a_published_record_is_costed_at_the_cap_and_named_so():
    from pipeline.workflow.cost_printout import lengths_text
    from pipeline.workflow.record_lengths import with_records

    resolved = resolve(read_configs([]), "default")  # the embedded default's tasks: none of the study's datasets
    assert with_records(resolved.config, {}) == {}
    text = "\n".join(lengths_text(resolved.config, resolved.plans, {}))
    assert "with no record and not prepared here" in text
