"""Each claim checker's verdict on constructed results."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from report_fakes import BONUS, LR_PENALTY, SIZE_BONUS, FakeTree, curve_formula, score_formula, write_fake_results

from pipeline.analysis.aggregate import build_tables, read_sources
from pipeline.analysis.claims import check_claims
from pipeline.analysis.claims.curves import c04_verdict, crossing, faster_verdict, threshold_bracket
from pipeline.analysis.claims.registry import KINDS
from pipeline.analysis.claims.spec import read_claims
from pipeline.analysis.claims.verdicts import Verdict
from pipeline.analysis.contract import FLOOR_MARGIN, Results
from pipeline.analysis.runs import tokens_from_initialisation
from pipeline.analysis.stats import Estimate
from pipeline.errors import PipelineError

CLAIMS_FILE = Path(__file__).resolve().parents[1] / "config" / "claims.yaml"
CLAIMS = {claim.id: claim for claim in read_claims(CLAIMS_FILE)}


def check(claim_id: str, results: Results) -> Verdict:
    """The verdict on claim ``claim_id`` of config/claims.yaml: its kind's check with its parameters."""
    claim = CLAIMS[claim_id]
    return KINDS[claim.kind].check(results, claim.params)


def results_of(tree: FakeTree) -> Results:
    files = {"scores": tree.scores, "summaries": tree.summaries, "task_stats": tree.task_stats, "curve_scores": tree.curve_scores}
    return build_tables(read_sources(files, 0.95))


def fake(tmp_path: Path, **options: object) -> Results:
    return results_of(write_fake_results(tmp_path, **options))


def mlm_ahead_by(gap_tiny: float, gap_small: float | None = None, seed_spread: float = 1.0, task: str | None = None):
    """A score formula where MLM − CLM is ``gap_tiny`` at tiny and ``gap_small`` at
    small (on every task, or only on ``task``; elsewhere 3 points)."""

    def bonus(name: str, kind: str, size: str) -> float:
        gap = (gap_tiny if size == "tiny" else gap_small if gap_small is not None else gap_tiny) if task in (None, name) else 3.0
        return {"clm": 0.0, "mlm": gap, "random": -15.0}[kind]

    return score_formula(bonus=bonus, seed_spread=seed_spread)


def verdict(claim_id: str, results: Results) -> str:
    return check(claim_id, results).verdict


@pytest.fixture(scope="module")
def standard(tmp_path_factory: pytest.TempPathFactory) -> Results:
    """The fake's default formula: MLM 3 points ahead of CLM at both sizes, no zoo."""
    return fake(tmp_path_factory.mktemp("standard"))


# ------------------------------------------------------------------ c01


def test_c01_supported_when_the_gap_is_positive_and_inside_2_3_to_5_7(tmp_path: Path) -> None:
    outcome = check("c01", fake(tmp_path, score=mlm_ahead_by(4.0)))
    assert outcome.verdict == "supported"
    assert "SC tiny +4.0" in outcome.evidence and "scale" in outcome.evidence and "no QA task" in outcome.evidence


def test_c01_contradicted_when_clm_wins(tmp_path: Path) -> None:
    assert verdict("c01", fake(tmp_path, score=mlm_ahead_by(-3.0))) == "contradicted"


def test_c01_contradicted_when_the_ci_excludes_the_claimed_range(tmp_path: Path) -> None:
    assert verdict("c01", fake(tmp_path, score=mlm_ahead_by(10.0))) == "contradicted"


def test_c01_inconclusive_when_the_ci_spans_zero(tmp_path: Path) -> None:
    assert verdict("c01", fake(tmp_path, score=mlm_ahead_by(0.5, seed_spread=6.0))) == "inconclusive"


def test_every_claim_row_states_the_power_of_the_comparisons_behind_its_verdict(tmp_path: Path) -> None:
    """detectable: the largest minimum detectable effect among what the check judged; for an
    inconclusive verdict, the fine-tuning seeds per arm that would decide (one pretraining run per arm here)."""
    results = fake(tmp_path, score=mlm_ahead_by(0.5, seed_spread=6.0))
    rows = check_claims([CLAIMS["c01"]], results).set_index("id")
    c01 = rows.loc["c01"]
    assert c01["verdict"] == "inconclusive" and c01["decide_unit"] == "fine-tuning seeds"
    family = results.tables["comparison"][results.tables["comparison"]["level"] == "family"]
    assert c01["detectable"] >= family["difference_mde"].max() - 1e-9 > 0
    assert c01["to_decide"] > results.tables["scores"]["n_seeds"].min()
    decided = check_claims([CLAIMS["c01"]], fake(tmp_path / "decided", score=mlm_ahead_by(4.0, seed_spread=0.5))).iloc[0]
    assert decided["verdict"] == "supported" and decided["detectable"] > 0 and decided["to_decide"] != decided["to_decide"]


def test_c01_mixed_when_sizes_disagree_naming_which_holds(tmp_path: Path) -> None:
    outcome = check("c01", fake(tmp_path, score=mlm_ahead_by(4.0, -4.0)))
    assert outcome.verdict == "mixed" and "; mixed: holds for " in outcome.evidence and "; fails for " in outcome.evidence


# ------------------------------------------------------------------ c02, c03


def test_c02_not_measured_without_a_qa_task(standard: Results) -> None:
    outcome = check("c02", standard)
    assert outcome.verdict == "not measured" and "unanswerable" in outcome.needed


def test_c02_measured_when_a_qa_task_exists(tmp_path: Path) -> None:
    results = fake(tmp_path, tasks=("sentiment", "squad"), families={"squad": "QA"}, unanswerable={"squad": 60}, score=mlm_ahead_by(5.5))
    assert verdict("c02", results) == "supported"  # 5.7 lies within 5.5 ± 1.1


def test_c02_is_not_measured_by_a_qa_task_without_unanswerable_questions(tmp_path: Path) -> None:
    """news_qa (every question answerable, token-position F1) is QA, and c01 reads it; c02 is
    about SQuAD 2.0's unanswerable questions and its F1, which news_qa does not measure."""
    results = fake(
        tmp_path, tasks=("sentiment", "news_qa"), families={"news_qa": "QA"}, unanswerable={"news_qa": 0}, score=mlm_ahead_by(2.0)
    )
    outcome = check("c02", results)
    assert outcome.verdict == "not measured" and "unanswerable" in outcome.needed
    assert "no QA (with unanswerable questions) task has both an MLM and a CLM run" in outcome.evidence
    assert "QA tiny" in check("c01", results).evidence


def test_c03_uses_the_topic_task_and_says_so(tmp_path: Path) -> None:
    outcome = check("c03", fake(tmp_path, score=mlm_ahead_by(3.0)))
    assert outcome.verdict == "contradicted"  # MLM ahead: CLM − MLM = −3
    assert "AG News is absent" in outcome.evidence and "topic" in outcome.evidence


def test_c03_supported_when_clm_edges_out_mlm(tmp_path: Path) -> None:
    assert verdict("c03", fake(tmp_path, score=mlm_ahead_by(-1.5))) == "supported"  # CI [0.4, 2.6] holds 0.8


def test_c03_not_measured_without_a_topic_task(tmp_path: Path) -> None:
    assert verdict("c03", fake(tmp_path, tasks=("sentiment",))) == "not measured"


# ------------------------------------------------------------------ c06, c07


def penalties(clm: dict[str, float], mlm: dict[str, float]):
    """LR penalty per task for CLM and MLM (random keeps the default)."""
    return score_formula(penalty=lambda task, kind: {"clm": clm, "mlm": mlm}.get(kind, {}).get(task, LR_PENALTY[kind]))


def test_c07_supported_when_clm_spread_is_about_37_percent_lower(tmp_path: Path) -> None:
    # reductions 1 − 2/4 = 50% and 1 − 2.5/4 = 37.5% per (task, size): mean 43.75, CI ~[32, 55]
    results = fake(tmp_path, score=penalties(clm={"sentiment": 2.0, "topic": 2.5}, mlm={"sentiment": 4.0, "topic": 4.0}))
    assert verdict("c07", results) == "supported"


def test_c07_contradicted_when_the_ci_excludes_37_percent(tmp_path: Path) -> None:
    results = fake(tmp_path, score=penalties(clm={"sentiment": 0.4, "topic": 0.5}, mlm={"sentiment": 4.0, "topic": 4.0}))
    assert verdict("c07", results) == "contradicted"  # ~88% lower, CI far above 37%


def test_c07_inconclusive_when_tasks_disagree(tmp_path: Path) -> None:
    results = fake(tmp_path, score=penalties(clm={"sentiment": 2.0, "topic": 4.0}, mlm={"sentiment": 4.0, "topic": 2.0}))
    assert verdict("c07", results) == "inconclusive"  # +50% and −100%


def test_c06_supported_in_direction_when_clm_has_more_near_best_learning_rates(standard: Results) -> None:
    # CLM: all 3 LRs within 1 point; MLM: only the best -> saving 1 − 1/3 = 66.7% in every pair
    outcome = check("c06", standard)
    assert outcome.verdict == "supported"
    assert "sentiment tiny 3 vs 1" in outcome.evidence and "cannot resolve the claimed 58%" in outcome.evidence


def test_c06_contradicted_when_mlm_has_more_near_best_learning_rates(tmp_path: Path) -> None:
    results = fake(tmp_path, score=penalties(clm={"sentiment": 4.0, "topic": 4.0}, mlm={"sentiment": 0.5, "topic": 0.5}))
    assert verdict("c06", results) == "contradicted"  # saving 1 − 3/1 = −200% in every pair


def test_c06_inconclusive_when_pairs_disagree(tmp_path: Path) -> None:
    results = fake(tmp_path, score=penalties(clm={"sentiment": 0.5, "topic": 4.0}, mlm={"sentiment": 4.0, "topic": 0.5}))
    assert verdict("c06", results) == "inconclusive"


def test_c06_not_measured_with_a_single_pair(tmp_path: Path) -> None:
    assert verdict("c06", fake(tmp_path, tasks=("sentiment",), sizes=("tiny",))) == "not measured"


# ------------------------------------------------------------------ c11, c12, c18


def test_c11_supported_when_the_gap_shrinks_with_size(tmp_path: Path) -> None:
    assert verdict("c11", fake(tmp_path, score=mlm_ahead_by(5.0, 1.0))) == "supported"


def test_c11_contradicted_when_the_gap_widens(tmp_path: Path) -> None:
    assert verdict("c11", fake(tmp_path, score=mlm_ahead_by(1.0, 5.0))) == "contradicted"


def test_c11_inconclusive_when_the_change_is_within_noise(tmp_path: Path) -> None:
    assert verdict("c11", fake(tmp_path, score=mlm_ahead_by(3.0, 3.0))) == "inconclusive"


def test_c11_not_measured_with_one_size(tmp_path: Path) -> None:
    assert verdict("c11", fake(tmp_path, sizes=("tiny",))) == "not measured"


def test_c12_not_measured_at_a_40_percent_masking_ratio(standard: Results) -> None:
    outcome = check("c12", standard)
    assert outcome.verdict == "not measured"
    assert "mlm-tiny 40.0% (configured 40%)" in outcome.evidence and outcome.needed == "an MLM run at a 15% masking ratio"


def bert_masking(tmp_path: Path, mlm_fraction: float) -> Results:
    tree = write_fake_results(tmp_path)
    for path in tree.summaries:
        summary = json.loads(path.read_text())
        if summary["objective_kind"] == "mlm":  # trained at BERT's 15%
            params = {**summary["objective_params"], "mask_ratio": 0.15}
            path.write_text(json.dumps({**summary, "loss_fraction": mlm_fraction, "objective_params": params}))
    return build_tables(read_sources({"scores": tree.scores, "summaries": tree.summaries, "task_stats": tree.task_stats}, 0.95))


def test_c12_supported_at_bert_masking(tmp_path: Path) -> None:
    assert check("c12", bert_masking(tmp_path, 0.151)).verdict == "supported"


def test_c12_contradicted_when_a_fraction_departs_from_its_configuration(tmp_path: Path) -> None:
    assert check("c12", bert_masking(tmp_path, 0.25)).verdict == "contradicted"


def test_c18_inconclusive_even_when_mlm_wins_classification(tmp_path: Path) -> None:
    outcome = check("c18", fake(tmp_path, score=mlm_ahead_by(3.0)))
    assert outcome.verdict == "inconclusive"
    assert "only for causal and prefix-attention models" in outcome.evidence and "clm-tiny 73.5" in outcome.evidence


def test_c18_contradicted_when_clm_wins_classification(tmp_path: Path) -> None:
    assert verdict("c18", fake(tmp_path, score=mlm_ahead_by(-3.0))) == "contradicted"


# ------------------------------------------------------------------ the claims file


def test_unmeasurable_claims_say_what_they_need(standard: Results) -> None:
    table = check_claims([CLAIMS["c04"], CLAIMS["c17"]], standard).set_index("id")
    assert table.loc["c04", "verdict"] == "not measured" and "intermediate" in table.loc["c04", "needed"]
    assert table.loc["c17", "verdict"] == "not measured" and "GPU" in table.loc["c17", "needed"]


@pytest.mark.parametrize(
    ("check_block", "message"),
    [
        (
            "{kind: objective_gapp, leader: mlm}",
            r"claims.yaml: claim c01.check.kind: unknown kind 'objective_gapp' \(kinds: .*objective_gap",
        ),
        ("{leader: mlm}", r"claims.yaml: claim c01.check.kind: missing required key"),
        (
            "{kind: objective_gap, leader: mlm, families: [SC], claimed_gapp: [1, 2]}",
            r"claims.yaml: claim c01.check.claimed_gapp: unknown key",
        ),
        ("{kind: objective_gap, leader: mlm, families: [SC]}", r"claims.yaml: claim c01.check: give claimed_gap or claimed_scores"),
        ("{kind: two_stage_gain, claimed_gain: lots}", r"claims.yaml: claim c01.check.claimed_gain: expected a number, got 'lots'"),
    ],
)
def test_a_typo_in_a_check_names_the_file_claim_and_key(tmp_path: Path, check_block: str, message: str) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text(f"- {{id: c01, source: s, claim: c, measure: m, status: s, check: {check_block}}}\n")
    with pytest.raises(PipelineError, match=message):
        read_claims(path)


def test_a_claim_id_used_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    entry = "- {id: c01, source: s, claim: c, measure: m, status: s, check: {kind: gap_narrows_with_size}}\n"
    path.write_text(entry * 2)
    with pytest.raises(PipelineError, match="claim c01: id 'c01' is used twice"):
        read_claims(path)


def test_every_claim_of_the_project_file_gets_a_verdict(zoo_results: Results) -> None:
    claims = list(CLAIMS.values())
    table = check_claims(claims, zoo_results)
    assert len(table) == len(claims) and table["verdict"].isin(["supported", "contradicted", "inconclusive", "not measured"]).all()
    assert table["evidence"].str.len().gt(0).all()


def test_a_claim_missing_a_field_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text("- {id: c01, source: s, claim: c, measure: m}\n")
    with pytest.raises(PipelineError, match=r"claims.yaml: claim c01.status: missing required key"):
        read_claims(path)


# ------------------------------------------------------------------ the objective zoo

ZOO_CLAIMS = ("c08", "c09", "c10", "c13", "c14", "c15", "c16", "p01", "p02")


def zoo(tmp_path: Path, **changes: float) -> Results:
    """The zoo at tiny beside CLM and MLM at tiny and small; ``changes`` override run bonuses."""
    bonus = {**BONUS, **changes}
    return fake(tmp_path, zoo_sizes=("tiny",), score=score_formula(bonus=lambda task, name, size: bonus[name] + SIZE_BONUS[size]))


def test_c08_judges_each_budget_against_its_own_mlm_run(tmp_path: Path) -> None:
    """With a 400-step budget beside the 600-step one, every split of each budget is compared
    with the MLM run decayed at that budget, not with the 600-step MLM run (which would make the
    400-step split +0.0): +2.0 [+1.3, +2.7] at 400 holds the claimed +2.4, the 600-step splits
    (+1.5 [+0.8, +2.2] the best) exclude it, so the verdict is mixed, naming which. No split is
    picked by its own score."""
    results = fake(tmp_path, zoo_sizes=("tiny",), budget_sizes=("tiny",))
    outcome = check("c08", results)
    assert outcome.verdict == "mixed"
    assert "clm50_mlm_400steps +2.0 [+1.3, +2.7]" in outcome.evidence and "clm50_mlm +1.5 [+0.8, +2.2]" in outcome.evidence
    assert "mixed: holds for 1 of 4 (SC tiny clm50_mlm_400steps); fails for 3 of 4 (SC tiny clm25_mlm" in outcome.evidence
    assert "best" not in outcome.evidence
    assert "each run is compared with the MLM run of its own step budget (400, 600 steps)" in outcome.evidence


@pytest.fixture(scope="module")
def zoo_results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    return zoo(tmp_path_factory.mktemp("zoo"))


def test_every_zoo_claim_gets_its_verdict_when_its_runs_exist(zoo_results: Results) -> None:
    # the fake's bonuses (report_fakes.BONUS), ± 0.7 points at 95% over two tasks of three seeds
    expected = {
        "c08": "contradicted",  # every split excludes the claimed 2.4 (clm50_mlm, the best, +1.5 [+0.8, +2.2])
        "c09": "supported",
        "p02": "supported",  # CPT on CLM − on MLM +1.0 [+0.3, +1.7]
        "c10": "not measured",  # no needle-in-a-haystack task (see the test below)
        "c13": "inconclusive",  # MLM − MLM+NSP +0.5 [−0.2, +1.2]
        "c14": "inconclusive",  # span corruption − MLM +0.5
        "c15": "contradicted",  # UL2 − ELECTRA −2.0
        "c16": "inconclusive",  # 80/10/10 − 100% [MASK] +0.5
        "p01": "not measured",  # one family at one size
    }
    outcomes = {claim: check(claim, zoo_results) for claim in ZOO_CLAIMS}
    assert {claim: outcome.verdict for claim, outcome in outcomes.items()} == expected
    assert "clm25_mlm +1.0 [+0.3, +1.7]" in outcomes["c08"].evidence
    assert "lies within the CI in 0 of 3 comparisons" in outcomes["c08"].evidence
    assert (
        "only the direction is judged" in outcomes["c09"].evidence and "both runs compared pretrained 160 steps" in outcomes["c09"].evidence
    )
    assert "NIAH" in outcomes["c10"].evidence and "NIAH" in outcomes["c10"].needed
    assert "span_corruption-tiny 1.54M vs mlm-tiny 1.23M (1.25x)" in outcomes["c14"].evidence
    assert "vs electra (best of 11)" in outcomes["c15"].evidence
    assert "20% 76.0 [75.4, 76.6]" in outcomes["p01"].evidence and "the sweep at two or more sizes" in outcomes["p01"].needed


def test_zoo_claims_at_a_shorter_budget_compare_runs_of_that_budget(tmp_path: Path) -> None:
    """The from-scratch zoo at 400 steps beside CLM and MLM at 600 and their 400-step decay branches
    (from step 300). c15's competitors trained 400 steps: the 600-step MLM, made the strongest run here,
    is not one (it was picked, with every 600-step run, before). The decay branch's positions count from
    initialisation: 400 steps', as many as MLM+NSP's, so c13 lists no difference in positions (it said
    4.00x, its own 100 steps against 400) and c14 the 1.25x of span corruption's longer examples."""
    bonus = {**BONUS, "mlm": 9.0}
    results = fake(
        tmp_path,
        zoo_sizes=("tiny",),
        budget_sizes=("tiny",),
        zoo_steps=400,
        score=score_formula(bonus=lambda task, name, size: bonus[name] + SIZE_BONUS[size]),
    )
    c13, c14, c15 = (check(claim, results) for claim in ("c13", "c14", "c15"))
    assert "vs electra (best of 11)" in c15.evidence and "all 12 runs compared pretrained 400 steps" in c15.evidence
    assert "positions processed" not in c13.evidence and "both runs compared pretrained 400 steps" in c13.evidence
    assert "positions processed span_corruption-tiny 1.02M vs mlm_400steps-tiny 819k (1.25x)" in c14.evidence


def test_tokens_from_initialisation_count_what_a_run_inherited() -> None:
    """A decay branch and a split add their base's positions up to their branch step, a continued run all
    of its base's; a base's own inheritance is carried along; an outside start is not known."""
    table = pd.DataFrame(
        [
            ("clm", "initial", None, None, 0, 1000, 1000 * 8),
            ("clm_400", "checkpoint", "clm", 300, 300, 400, 100 * 8),
            ("split", "checkpoint", "clm_400", 350, 350, 400, 50 * 8),
            ("cpt", "final", "clm", None, 0, 160, 160 * 8),
            ("outside_cpt", "outside", None, None, 0, 160, 160 * 8),
        ],
        columns=["run", "started_from_kind", "started_from_run", "started_from_step", "first_step", "trained_steps", "num_tokens"],
    )
    assert tokens_from_initialisation(table).to_dict() == pytest.approx(
        {"clm": 8000, "clm_400": 3200, "split": 3200, "cpt": 9280, "outside_cpt": math.nan}, nan_ok=True
    )


def test_c10_judges_meap_against_clm_on_the_needle_family(tmp_path: Path) -> None:
    """With a NIAH-family task, MEAP − CLM is judged there (the fake: meap +1.0 over clm's bonus)."""
    bonus = {**BONUS, "meap": BONUS["clm"] + 3.0}
    results = fake(
        tmp_path,
        zoo_sizes=("tiny",),
        tasks=("sentiment", "needle"),
        families={"needle": "NIAH"},
        score=score_formula(bonus=lambda task, name, size: bonus[name] + SIZE_BONUS[size]),
    )
    outcome = check("c10", results)
    assert outcome.verdict == "supported"
    assert (
        "NIAH tiny meap +3.0" in outcome.evidence
        and "relative change NIAH tiny +" in outcome.evidence
        and "claimed +19.3%" in outcome.evidence
    )


def test_zoo_claims_are_not_measured_without_their_runs(standard: Results) -> None:
    for claim in ZOO_CLAIMS:
        outcome = check(claim, standard)
        assert outcome.verdict == "not measured" and outcome.needed, claim


@pytest.mark.parametrize(
    ("claim", "changes", "expected"),
    [
        ("c08", {"clm25_mlm": 5.4}, "mixed"),  # +2.4 over MLM for clm25_mlm; the other splits exclude it
        ("c09", {"mlm_cpt_on_mlm": 6.0}, "contradicted"),  # the MLM base ahead
        ("c13", {"mlm_nsp": 5.0}, "contradicted"),  # NSP ahead of MLM
        ("c14", {"span_corruption": 5.0}, "supported"),
        ("c15", {"ul2": 6.0}, "supported"),  # 2 points above ELECTRA, the best other objective
        ("c16", {"mlm_mask_only": 1.0}, "supported"),  # 80/10/10 2 points ahead
    ],
)
def test_zoo_claim_verdicts_follow_the_intervals(tmp_path: Path, claim: str, changes: dict[str, float], expected: str) -> None:
    assert verdict(claim, zoo(tmp_path, **changes)) == expected


def test_p01_judges_the_parts_that_two_sizes_make_testable(tmp_path: Path) -> None:
    """Tiny prefers 30%, small 50% (each resolved): no universal best, and the larger
    model prefers higher ratios; with no IR family the claim cannot be supported."""
    ratios = {
        "tiny": {"mlm_20": 1.0, "mlm_30": 5.0, "mlm": 3.0, "mlm_50": 1.5},
        "small": {"mlm_20": 0.0, "mlm_30": 1.0, "mlm": 3.0, "mlm_50": 5.0},
    }
    score = score_formula(bonus=lambda task, name, size: ratios[size].get(name, BONUS[name]))
    outcome = check("p01", fake(tmp_path, zoo_sizes=("tiny", "small"), score=score))
    assert outcome.verdict == "inconclusive"
    assert (
        "no universally best ratio: supported" in outcome.evidence and "larger models prefer higher ratios: supported" in outcome.evidence
    )
    assert outcome.needed == "the sweep on an IR family"


# ------------------------------------------------------------------ learning curves (c04, c05)


def gap(mean: float) -> Estimate:
    """A difference of ± 1.1 points at 95% (se 0.5, df 10)."""
    return Estimate(mean, 0.5, 10.0, 0.95)


@pytest.mark.parametrize(
    ("means", "expected"),
    [
        ({0.25: -3, 0.5: 0, 1.0: 3}, (0.25, 1.0)),  # CLM ahead, then no difference resolved, then MLM ahead
        ({0.25: -3, 0.5: 3, 1.0: 3}, (0.25, 0.5)),
        ({0.1: -3, 0.25: -3, 0.5: 0, 0.75: 3, 1.0: -3}, (0.25, 0.75)),  # the first time MLM is ahead counts
        ({0.25: 3, 0.5: -3, 1.0: 3}, (None, 0.25)),  # MLM ahead from the start
        ({0.25: -3, 1.0: -3}, (1.0, None)),  # MLM never ahead
        ({0.25: 0, 1.0: 0}, (None, None)),
    ],
)
def test_crossing_brackets_the_first_resolved_lead_change(means: dict[float, float], expected: tuple) -> None:
    assert crossing([(share, gap(mean)) for share, mean in means.items()]) == expected


@pytest.mark.parametrize(
    ("means", "expected"),
    [
        ({0.25: -3, 0.5: 0, 1.0: 3}, "supported"),
        ({0.25: 3, 1.0: 3}, "contradicted"),  # MLM ahead before the claimed crossover (36% of the budget)
        ({0.5: 3, 1.0: 3}, "inconclusive"),  # ... after it, MLM may have overtaken earlier, as claimed
        ({0.25: -3, 1.0: -3}, "contradicted"),  # CLM still ahead at the end
        ({0.25: 0, 1.0: 3}, "inconclusive"),
        ({0.5: -3, 1.0: 3}, "supported"),  # the direction only: a late crossover still has CLM first
    ],
)
def test_c04_judges_clm_ahead_early_and_mlm_ahead_late(means: dict[float, float], expected: str) -> None:
    assert c04_verdict([(share, gap(mean)) for share, mean in means.items()], CLAIMS["c04"].params.crossover_share) == expected


def test_time_to_threshold_brackets_and_their_order() -> None:
    final = Estimate(75.0, 0.3, 4.0, 0.95)
    # 60 and 66 are below 90% of 75 (67.5), 72 is above it: reached between 50% and 75% of the budget
    assert threshold_bracket(
        [(0.25, Estimate(60.0, 0.3, 4.0, 0.95)), (0.5, Estimate(66.0, 0.3, 4.0, 0.95)), (0.75, Estimate(72.0, 0.3, 4.0, 0.95))], final, 0.9
    ) == (0.5, 0.75)
    assert threshold_bracket([(0.5, Estimate(67.5, 0.3, 4.0, 0.95))], final, 0.9) == (0.0, 1.0)  # unresolved: anywhere
    assert faster_verdict((0.0, 0.25), (0.25, 1.0)) == "supported"
    assert faster_verdict((0.5, 1.0), (0.0, 0.5)) == "contradicted"
    assert faster_verdict((0.0, 0.5), (0.25, 1.0)) == "inconclusive"  # overlapping: the checkpoints cannot separate them


def curves(tmp_path: Path, lag: dict[str, float] | None = None, mlm_gap: float = 3.0, **options: object) -> Results:
    """CLM and MLM at tiny with checkpoints at 25% and 50% of the budget (report_fakes.curve_formula)."""
    score = mlm_ahead_by(mlm_gap)
    curve = curve_formula(score, lag) if lag else curve_formula(score)
    return fake(tmp_path, sizes=("tiny",), curve_sizes=("tiny",), score=score, curve=curve, **options)


def test_c04_and_c05_supported_when_clm_leads_early_and_gets_there_first(tmp_path: Path) -> None:
    results = curves(tmp_path)  # MLM − CLM −4.5 at 25%, −2 at 50%, +3 at the end
    c04, c05 = check("c04", results), check("c05", results)
    assert (c04.verdict, c05.verdict) == ("supported", "supported")
    assert "25% −4.5 [−5.2, −3.8], 50% −2.0 [−2.7, −1.3], final +3.0 [+2.3, +3.7]" in c04.evidence
    assert (
        "MLM overtakes CLM between 50% and 100% of the budget" in c04.evidence
        and "12% and 36% of the study's 42,000-step budget" in c04.evidence
    )
    assert "both runs compared pretrained 600 steps" in c04.evidence and "scale" in c04.evidence and c04.needed == ""
    # 90% of the final SC average: CLM 67.5 (70.5 at 25%: reached), MLM 70.2 (66 at 25%: not; 70 at 50%: unresolved)
    assert "SC tiny: CLM 0%–25%, MLM 25%–100%" in c05.evidence and "cannot be resolved" in c05.evidence


def test_c04_contradicted_when_clm_is_still_ahead_at_the_end(tmp_path: Path) -> None:
    assert verdict("c04", curves(tmp_path, mlm_gap=-3.0)) == "contradicted"


def test_c04_asks_for_an_earlier_checkpoint_when_the_first_is_past_the_claimed_crossover(tmp_path: Path) -> None:
    outcome = check("c04", curves(tmp_path, curve_steps=(300,)))
    assert outcome.verdict == "supported" and outcome.needed == "a checkpoint before 36% of the budget for SC tiny"


def test_c05_contradicted_when_mlm_gets_there_first(tmp_path: Path) -> None:
    # CLM: 63 and 67 against 67.5 (below, unresolved); MLM: 73.5 against 70.2 at 25% (reached)
    assert verdict("c05", curves(tmp_path, lag={"clm": 16.0, "mlm": 6.0})) == "contradicted"


def test_c05_inconclusive_when_the_checkpoints_cannot_separate_the_runs(tmp_path: Path) -> None:
    assert verdict("c05", curves(tmp_path, lag={"clm": 10.0, "mlm": 10.0})) == "inconclusive"  # both between 0% and 50%


@pytest.mark.parametrize("claim", ["c04", "c05"])
def test_curve_claims_not_measured_without_both_curves(standard: Results, tmp_path: Path, claim: str) -> None:
    for results in (standard, curves(tmp_path, curve_runs=("clm",))):
        outcome = check(claim, results)
        assert outcome.verdict == "not measured" and "learning_curves: {sizes: [tiny], runs: [clm, mlm]}" in outcome.needed


def test_a_qa_task_at_the_trivial_baseline_judges_nothing(tmp_path: Path) -> None:
    """Both runs below the task's trivial baseline (the fake's 51.2): the MLM − CLM gap on
    it is left out of c01 and makes c02 inconclusive, whatever its interval says."""
    results = fake(
        tmp_path,
        tasks=("sentiment", "cloze"),
        families={"cloze": "QA"},
        unanswerable={"cloze": 60},
        score=score_formula(bonus=lambda task, name, size: (-40.0 if task == "cloze" else 0.0) + BONUS[name] + SIZE_BONUS[size]),
    )
    assert results.tables["scores"].loc[results.tables["scores"]["task"] == "cloze", "test_high"].max() < 51.2
    c02 = check("c02", results)
    assert c02.verdict == "inconclusive" and "trivial baseline" in c02.evidence
    assert "left out, as neither run beat the trivial baseline by 1 point: QA tiny, QA small" in check("c01", results).evidence


def test_a_qa_task_a_hair_above_the_trivial_baseline_still_judges_nothing(tmp_path: Path) -> None:
    """Both runs 0.4 points above the baseline (51.2) with tight seeds: their CIs exclude
    the baseline but stay within FLOOR_MARGIN of it, so c02 is still inconclusive."""
    results = fake(
        tmp_path,
        tasks=("sentiment", "cloze"),
        families={"cloze": "QA"},
        unanswerable={"cloze": 60},
        score=score_formula(
            bonus=lambda task, name, size: (51.6 - 60.0) if task == "cloze" else BONUS[name] + SIZE_BONUS[size],
            seed_spread=0.1,
        ),
    )
    cloze = results.tables["scores"][
        (results.tables["scores"]["task"] == "cloze") & results.tables["scores"]["objective_kind"].isin(["clm", "mlm"])
    ]
    assert (cloze["test_low"] > 51.2).all() and (cloze["test_low"] < 51.2 + FLOOR_MARGIN).all()
    assert check("c02", results).verdict == "inconclusive"
    floored = results.tables["comparison"][results.tables["comparison"]["name"] == "cloze"]
    assert floored["at_floor"].all() and (floored["floor"] == 51.2).all()  # the headline calls these rows no evidence
    assert not results.tables["comparison"].loc[results.tables["comparison"]["name"] == "sentiment", "at_floor"].any()
