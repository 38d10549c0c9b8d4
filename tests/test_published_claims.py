"""Every claim judged on the study's published tables by the same checks that judge this run
(pipeline/analysis/published_results.py makes the tables into the results those checks read): the
verdicts the study's own numbers give, with its intervals, and the ones the tables cannot give said
as such."""

from __future__ import annotations

import pytest

from pipeline.analysis.claims import check_claims
from pipeline.analysis.claims.spec import read_claims
from pipeline.analysis.contract import Results
from pipeline.analysis.published_results import published_results, score_rows
from pipeline.external.published_tables import read_published_tables
from tests.conftest import REPO


@pytest.fixture(scope="module")
def claims():
    return read_claims(REPO / "config" / "claims.yaml")


@pytest.fixture(scope="module")
def verdicts(claims):
    return check_claims(claims, published_results(read_published_tables(), 0.95)).set_index("id")


def test_every_claim_has_a_verdict_on_the_tables(claims, verdicts):
    assert list(verdicts.index) == [claim.id for claim in claims]
    assert verdicts["evidence"].str.len().gt(0).all()
    measured = verdicts[verdicts["verdict"] != "not measured"]
    assert set(measured.index) == {"c01", "c02", "c04", "c05", "c08", "c09", "c11", "c18", "p01", "p02"}
    assert verdicts.loc["c10", "needed"] == "a MEAP run and a CLM run at the same budget, fine-tuned on NIAH tasks"  # not in the study
    assert verdicts.loc["c06", "needed"] == "CLM and MLM runs fine-tuned over an LR grid"
    assert "in the study's published tables (210M 212M, 610M 608M, 1B 1.19B parameters)" in verdicts.loc["c01", "evidence"]


def test_the_claims_the_study_s_own_numbers_refute(verdicts):
    """The three: SQuAD-v2 CLM never at 62.7, no +1.8 from a CLM base, and c04's lead far above 4.1."""
    assert verdicts.loc["c02", "verdict"] == "contradicted"
    assert "the claimed MLM 68.4 and CLM 62.7 lie within both runs' CIs on none of the rows" in verdicts.loc["c02", "evidence"]
    assert verdicts.loc["c09", "verdict"] == "contradicted"
    assert (
        "the claimed gain is judged at 12,000 CPT steps, the nearest to the claimed 10,000: the claimed 1.8 points lies within the CI"
        " in 0 of 4 comparisons" in verdicts.loc["c09", "evidence"]
    )
    c04 = verdicts.loc["c04"]
    assert c04["verdict"] == "contradicted" and "IR 610M: 2% −9.8 [−11.1, −8.4], 5% −17.2 [−18.4, −16.1]" in c04["evidence"]
    assert "the largest CLM lead is 17.2 [16.1, 18.4] points (IR 610M at 5%; claimed up to 4.1, its CI lies above it)" in c04["evidence"]


def test_the_claimed_magnitude_and_steps_are_judged_only_on_runs_of_the_claim_s_budget(claims):
    """The same curves as shares of a 1,440-step budget (the embedded default's): c04 is judged on
    its direction alone, which holds on SC, QA and IR and fails on TC (CLM still ahead at the end)."""
    results = published_results(read_published_tables(), 0.95)
    pretraining = results.tables["pretraining"]
    scaled = pretraining.assign(trained_steps=pretraining["trained_steps"].where(~pretraining["run"].isin(["clm-610M", "mlm-610M"]), 1440))
    shrunk = Results({**results.tables, "pretraining": scaled}, results.confidence, results.objective_params, results.measured_by)
    c04 = check_claims([claim for claim in claims if claim.id == "c04"], shrunk).iloc[0]
    assert c04["verdict"] == "mixed"
    assert "Only the direction is judged" in c04["evidence"] and "claimed up to 4.1, not judged" in c04["evidence"]


def test_comparisons_some_for_and_some_against_are_mixed_and_named(verdicts):
    """Where some comparisons hold and others fail, the verdict says "mixed" and names them."""
    c01 = verdicts.loc["c01"]
    assert c01["verdict"] == "mixed"
    assert c01["evidence"].endswith("mixed: holds for 3 of 6 (SC 210M, SC 610M, SC 1B); fails for 3 of 6 (QA 210M, QA 610M, QA 1B).")
    c11 = verdicts.loc["c11"]  # a claim about the gap: judged on its average, which widens; SC and QA widen, IR narrows, TC undecided
    assert c11["verdict"] == "contradicted" and "+3.8 → +8.2 (narrowing −4.4 [−4.9, −3.9])" in c11["evidence"]
    assert "holds for 1 of 4 (IR); fails for 2 of 4 (QA, SC); undecided for 1 of 4 (TC)" in c11["evidence"]
    c18 = verdicts.loc["c18"]  # the measured half holds on SC and IR, fails on TC at 610M: the claim is mixed, not merely open
    assert c18["verdict"] == "mixed" and "fails for 1 of 9 (TC 610M)" in c18["evidence"]
    p02 = verdicts.loc["p02"]
    assert (
        p02["verdict"] == "mixed"
        and "undecided for 2 of 12 (IR 610M after 12,000 CPT steps, IR 610M after 22,000 CPT steps)" in (p02["evidence"])
    )
    assert verdicts.loc["p01", "verdict"] == "inconclusive"
    assert "no universally best ratio: supported; larger models prefer higher ratios: inconclusive" in verdicts.loc["p01", "evidence"]


def test_the_two_stage_gain_is_judged_on_every_published_split_not_the_best(verdicts):
    """c08's 2.4 points: every split of every budget against MLM alone at that budget, per family
    (36 comparisons, none picked by its own score); it holds on QA only."""
    c08 = verdicts.loc["c08"]
    assert c08["verdict"] == "mixed" and "the claimed 2.4 points lies within the CI in 4 of 36 comparisons" in c08["evidence"]
    assert "QA 610M clm3k_mlm9k +2.3 [+1.6, +3.0]" in c08["evidence"]
    assert "each run is compared with the MLM run of its own step budget (12,000, 22,000, 42,000 steps)" in c08["evidence"]


def test_a_verdict_follows_the_numbers(claims):
    """Tables where the 610M CLM scores the claimed 62.7 on SQuAD-v2 and MLM 68.4: the claim's scores are found there."""
    tables = read_published_tables()
    squad = (tables["experiment"] == "mlm_vs_clm") & (tables["size"] == "610M") & (tables["dataset"] == "SQuAD-v2")
    tables.loc[squad & (tables["objective"] == "CLM"), ["mean", "ci"]] = (62.7, 1.0)
    tables.loc[squad & (tables["objective"] == "MLM") & (tables["masking"] == 40), ["mean", "ci"]] = (68.4, 1.0)
    c02 = check_claims([claim for claim in claims if claim.id == "c02"], published_results(tables, 0.95)).iloc[0]
    assert "lie within both runs' CIs on SQuAD-v2 610M" in c02["evidence"] and "SQuAD-v2 610M +5.7 [+4.5, +6.9]" in c02["evidence"]
    assert c02["verdict"] == "mixed"  # 5.7 within 610M's interval, outside 210M's and 1B's


def test_every_published_cell_is_one_score_of_one_run():
    """800 cells, 64 of them the models Tables 2-5 give again (the 42k ends of Tables 10-13 and the
    bases of Tables 14-17): 736 scores of 34 runs, the 610M CLM and MLM-40 with a curve of 6 checkpoints."""
    published = read_published_tables()
    runs, tasks, families = score_rows(published, 0.95)
    assert len(tasks) + len(families) == len(published) - 64 == 736
    assert len(runs) == 34 and {"clm3k_mlm9k-610M", "mlm_12k-610M", "mlm_cpt22k_on_clm-610M", "mlm_30-1B"} <= set(runs["run"])
    checkpoints = tasks[tasks["step"].notna()]
    assert set(checkpoints["run"]) == {"clm-610M", "mlm-610M"} and checkpoints["step"].nunique() == 6
    split = runs.set_index("run").loc["clm3k_mlm9k-610M"]
    assert (split["started_from_run"], split["first_step"], split["trained_steps"]) == ("clm-610M", 3000, 12000)
