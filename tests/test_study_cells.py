"""This run's cells beside the study's published ones, and config/paper.yaml as the study's own
experiment: its plan fills every one of the 200 models and checkpoints the study published."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from pipeline.analysis.contract import NOT_RUN, OUTSIDE, WITHIN
from pipeline.analysis.published_results import published_results
from pipeline.analysis.study_cells import headline_gaps, our_cells, published_beside, study_keys
from pipeline.external.published_tables import KEY, read_published_tables
from pipeline.external.study_protocol import STUDY_PROTOCOL
from pipeline.report.published_reference_tables import summary_line
from pipeline.workflow.configure import read_configs, resolve
from pipeline.workflow.cost_printout import plan_costs
from tests.conftest import REPO

PAPER = str(REPO / "config" / "paper.yaml")


def plan_rows(resolved) -> list[tuple[dict, float, str]]:
    """(pretraining.csv row, masking ratio, base kind) of every planned run, as the aggregate stage would read them."""
    config, plans = resolved.config, resolved.plans
    rows = []
    for plan in plans.values():
        objective = config.objectives[plan.objective]
        base = plans[plan.start.run].objective if plan.start.run in plans else ""
        row = {
            "run": plan.run,
            "size": plan.size,
            "study": plan.study,
            "trained_steps": plan.last_step,
            "schedule_steps": plan.schedule_steps,
            "first_step": plan.first_step,
            "objective_kind": objective["kind"],
        }
        rows.append((row, objective.get("mask_ratio", math.nan), config.objectives[base]["kind"] if base else ""))
    return rows


def test_the_paper_plan_is_the_study_s_38_models_and_its_figure_11_split(paper_plan):
    studies = pd.Series([plan.study for plan in paper_plan.plans.values()]).value_counts().to_dict()
    assert studies == {"objectives": 15, "two_stage": 14, "continued": 6, "short_budget": 4}  # 15 + 17 + 6, and 1B's 10k+32k
    assert [plan.run for plan in paper_plan.plans.values() if plan.size == "1b" and plan.study == "two_stage"] == ["clm10k_mlm-1b"]
    assert {plan.size for plan in paper_plan.plans.values() if plan.study in ("continued", "short_budget")} == {"610m"}
    one_b = paper_plan.config.sizes["1b"]
    assert (one_b.num_layers, one_b.ffn_size, one_b.hidden_size) == (28, 5120, 1728)  # the paper's Table 1
    assert sorted({(plan.run, step) for plan, step in paper_plan.curve_points}) == [
        (run, step) for run in ("clm-610m", "mlm-610m") for step in (1000, 2000, 5000, 10000, 20000, 40000)
    ]
    costs = {cost.stage: cost for cost in plan_costs(paper_plan.config, paper_plan)}
    # 39 models and 3 untrained baselines x 10 datasets trained on, and 12 checkpoints x 10: each its
    # 6 LRs x 5 seeds (nq and mldr_en are scored on MS MARCO's fine-tuned models, as in the study)
    assert (costs["finetune"].jobs, costs["finetune"].runs) == (420, 12_600)
    assert (costs["finetune_checkpoint"].jobs, costs["finetune_checkpoint"].runs) == (120, 3_600)


def test_the_paper_plan_fills_every_model_the_study_published(paper_plan):
    """Each of the 200 published (model, checkpoint) rows of Tables 2-17 is a run or checkpoint of the plan."""
    published = read_published_tables().drop_duplicates(KEY)
    budget_steps = paper_plan.config.pretraining.budget_steps
    planned = set()
    for row, mask_ratio, base_kind in plan_rows(paper_plan):
        steps = [None] + [step for plan, step in paper_plan.curve_points if plan.run == row["run"]]
        for step in steps:
            planned |= {tuple(key[c] for c in KEY[1:]) for key in study_keys(row, step, budget_steps, mask_ratio, base_kind)}
    wanted = {tuple(row[c] for c in KEY[1:]) for _, row in published.iterrows()}
    assert len(wanted) == 50 and wanted <= planned  # 50 models and checkpoints, each in 4 tables (one per family)


def test_the_beyond_overlay_adds_the_other_sizes_and_the_zoo(paper_plan):
    beyond = resolve(read_configs([PAPER, str(REPO / "config" / "paper_beyond.yaml")]), "beyond")
    assert set(paper_plan.plans) < set(beyond.plans)
    added = {plan.run for plan in beyond.plans.values()} - set(paper_plan.plans)
    assert {"clm3k_mlm_12000steps-210m", "mlm_cpt_on_clm_2000steps-1b", "ul2-210m"} <= added


# the study's settings, as scores.json records them
STUDY_SC = {"task_type": "sequence_classification", **STUDY_PROTOCOL, "trained_on": None}


def fake_tables(
    mean: float, size: str = "210m", steps: int = 42_000, low: float = math.nan, high: float = math.nan, protocol: dict | None = None
):
    """A CLM and an MLM-40 run of ``steps``, fine-tuned on the study's three SC datasets at ``mean``
    under ``protocol`` (the study's by default)."""
    pretraining = pd.DataFrame(
        [
            {
                "run": f"{name}-{size}",
                "size": size,
                "study": "objectives",
                "trained_steps": steps,
                "schedule_steps": steps,
                "stopped_before_decay": False,
                "budget_steps": steps,
                "first_step": 0,
                "objective_kind": name,
                "started_from_run": None,
                "num_study_parameters": 210e6,
                "num_tokens": steps * 2304 * 1024,
            }
            for name in ("clm", "mlm")
        ]
    )
    scores = pd.DataFrame(
        [
            {"task": task, "family": "SC", "run": f"{name}-{size}", "test_mean": mean, "test_low": low, "test_high": high}
            for task in ("sst2", "qqp", "mnli")
            for name in ("clm", "mlm")
        ]
    )
    families = pd.DataFrame(
        [
            {"family": "SC", "run": f"{name}-{size}", "tasks": "mnli qqp sst2", "test_mean": mean, "test_low": low, "test_high": high}
            for name in ("clm", "mlm")
        ]
    )
    curves = pd.DataFrame(columns=["level", "name", "family", "run", "step", "final", "test_mean", "test_low", "test_high"])
    protocols = {task: {**STUDY_SC, "trained_on": task, **(protocol or {})} for task in ("sst2", "qqp", "mnli")}
    return pretraining, scores, families, curves, {f"mlm-{size}": {"mask_ratio": 0.4}}, protocols


def test_a_run_at_the_study_s_scale_is_within_or_outside_its_interval():
    cells = published_beside(read_published_tables(), our_cells(*fake_tables(90.2, low=89.0, high=91.4)))
    produced = cells[cells["verdict"] != NOT_RUN].set_index(["objective", "dataset"])
    assert len(produced) == 8  # 210M CLM and MLM-40 on SST-2, QQP, MNLI and their Average (Table 2)
    assert produced.loc[("MLM", "SST-2"), "verdict"] == WITHIN  # 90.44 ± 0.71
    assert produced.loc[("CLM", "SST-2"), "verdict"] == WITHIN  # 90.00 ± 0.30
    assert produced.loc[("CLM", "QQP"), "verdict"] == OUTSIDE
    assert produced.loc[("MLM", "SST-2"), "difference"] == pytest.approx(90.2 - 90.44)
    assert produced["comparable"].all()  # the study's scale and its fine-tuning protocol
    assert summary_line(cells).startswith("Of the study's 800 published cells, this run produced 8: 2 within the study's interval, 6")


def test_a_cell_fine_tuned_otherwise_than_the_study_says_how():
    cells = published_beside(read_published_tables(), our_cells(*fake_tables(90.2, protocol={"precision": "fp32", "text": "cleaned"})))
    produced = cells[cells["verdict"] != NOT_RUN]
    assert not produced["comparable"].any()
    assert set(produced["not_comparable_because"]) == {
        "precision fp32 here, bf16_weights in the study; text cleaned here, raw in the study"
    }


def test_an_ir_model_counts_as_the_study_s_only_when_fine_tuned_on_ms_marco():
    from pipeline.external.study_protocol import protocol_differences

    ir = {"task_type": "retrieval", **STUDY_PROTOCOL}
    assert protocol_differences("IR", {**ir, "trained_on": "msmarco"}, "msmarco") == []
    assert protocol_differences(
        "IR", {**ir, "trained_on": "msmarco", "batches": "grouped by length", "rows": "deduplicated"}, "msmarco"
    ) == [
        "rows deduplicated here, all in the study",
        "batches grouped by length here, random in the study",
    ]
    assert protocol_differences("IR", {**ir, "trained_on": "nq"}, "nq") == [
        "IR models fine-tuned by task nq here; the study scores those it fine-tuned on msmarco"
    ]
    assert protocol_differences("QA", {**ir, "task_type": "extractive_qa"}, None) == [
        "QA head differs: extractive_qa here, qa_token_tagging in the study"
    ]


def test_a_shrunk_run_is_matched_by_its_role_and_says_it_is_not_comparable():
    """Six steps of six stand for the study's 42k: the rehearsal's 210m fills the 210M cells."""
    cells = published_beside(read_published_tables(), our_cells(*fake_tables(50.0, steps=6)))
    produced = cells[cells["verdict"] != NOT_RUN]
    assert len(produced) == 8 and set(produced["steps"]) == {42_000}
    assert produced["not_comparable_because"].str.contains("x its tokens").all()


def test_sizes_the_study_does_not_have_produce_no_cell():
    cells = published_beside(read_published_tables(), our_cells(*fake_tables(90.0, size="tiny")))
    assert (cells["verdict"] == NOT_RUN).all() and len(cells) == 800
    assert "this run produced none (800 not run): it has none of the study's sizes" in summary_line(cells)


def test_the_headline_sets_the_study_s_own_gap_beside_each_row_it_published():
    comparison = pd.DataFrame(
        [
            {"size": "210m", "level": "family", "name": "SC", "family": "SC"},
            {"size": "1b", "level": "task", "name": "squad_v2", "family": "QA"},
            {"size": "tiny", "level": "family", "name": "SC", "family": "SC"},  # not a size of the study
            {"size": "210m", "level": "task", "name": "sentiment", "family": "SC"},  # not a dataset of the study
        ]
    )
    gaps = headline_gaps(comparison, published_results(read_published_tables(), 0.95).tables["comparison"])
    gaps = gaps.set_index(["size", "level", "name"])["difference_mean"]
    assert set(gaps.index) == {("210m", "family", "SC"), ("1b", "task", "squad_v2")}
    assert gaps["210m", "family", "SC"] == pytest.approx(84.89 - 82.80)  # Table 2: SC average, MLM-40 minus CLM
    assert gaps["1b", "task", "squad_v2"] == pytest.approx(74.96 - 57.99)


def test_a_run_stopped_before_its_decay_is_a_learning_curve_cell_at_its_step():
    """The one-GPU tier's runs: 1,000 steps of a 42,000-step schedule, undecayed. Their final models
    are the study's 1k checkpoints (Table 6), not its 42k models, and at its scale they compare."""
    pretraining, scores, families, curves, params, protocols = fake_tables(80.0, size="610m", steps=1000, low=79.0, high=81.0)
    pretraining = pretraining.assign(schedule_steps=42_000, stopped_before_decay=True, budget_steps=42_000, num_study_parameters=610e6)
    cells = published_beside(read_published_tables(), our_cells(pretraining, scores, families, curves, params, protocols))
    produced = cells[cells["verdict"] != NOT_RUN]
    assert set(produced["experiment"]) == {"data_efficiency"} and set(produced["steps"]) == {1000} and set(produced["table"]) == {6}
    assert len(produced) == 8 and produced["comparable"].all()
    assert produced.set_index(["objective", "dataset"]).loc[("MLM", "SST-2"), "study_mean"] == pytest.approx(81.06)
