"""Each claim checker's verdict on constructed results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_report_fakes import LR_PENALTY, FakeTree, score_formula, write_fake_results

from pipeline.errors import PipelineError
from pipeline.report.aggregate import Results, build_results
from pipeline.report.claims import CHECKERS, Claim, check_claims, read_claims

OBJECTIVES = {"clm": {"kind": "clm"}, "mlm": {"kind": "mlm", "mask_ratio": 0.4}}


def results_of(tree: FakeTree) -> Results:
    return build_results(tree.scores, tree.summaries, tree.task_stats, 0.95, OBJECTIVES)


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
    return CHECKERS[claim_id](results).verdict


# ------------------------------------------------------------------ c01


def test_c01_supported_when_the_gap_is_positive_and_inside_2_3_to_5_7(tmp_path: Path) -> None:
    outcome = CHECKERS["c01"](fake(tmp_path, score=mlm_ahead_by(4.0)))
    assert outcome.verdict == "supported"
    assert "SC tiny +4.0" in outcome.evidence and "scale" in outcome.evidence and "no QA task" in outcome.evidence


def test_c01_contradicted_when_clm_wins(tmp_path: Path) -> None:
    assert verdict("c01", fake(tmp_path, score=mlm_ahead_by(-3.0))) == "contradicted"


def test_c01_contradicted_when_the_ci_excludes_the_claimed_range(tmp_path: Path) -> None:
    assert verdict("c01", fake(tmp_path, score=mlm_ahead_by(10.0))) == "contradicted"


def test_c01_inconclusive_when_the_ci_spans_zero(tmp_path: Path) -> None:
    assert verdict("c01", fake(tmp_path, score=mlm_ahead_by(0.5, seed_spread=6.0))) == "inconclusive"


def test_c01_inconclusive_when_sizes_disagree(tmp_path: Path) -> None:
    assert verdict("c01", fake(tmp_path, score=mlm_ahead_by(4.0, -4.0))) == "inconclusive"


# ------------------------------------------------------------------ c02, c03


def test_c02_not_measured_without_a_qa_task(tmp_path: Path) -> None:
    outcome = CHECKERS["c02"](fake(tmp_path))
    assert outcome.verdict == "not measured" and "unanswerable" in outcome.needed


def test_c02_measured_when_a_qa_task_exists(tmp_path: Path) -> None:
    results = fake(tmp_path, tasks=("sentiment", "squad"), families={"squad": "QA"}, score=mlm_ahead_by(5.5))
    assert verdict("c02", results) == "supported"  # 5.7 lies within 5.5 ± 1.1


def test_c03_uses_the_topic_task_and_says_so(tmp_path: Path) -> None:
    outcome = CHECKERS["c03"](fake(tmp_path, score=mlm_ahead_by(3.0)))
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


def test_c06_supported_in_direction_when_clm_has_more_near_best_learning_rates(tmp_path: Path) -> None:
    # CLM: all 3 LRs within 1 point; MLM: only the best -> saving 1 − 1/3 = 66.7% in every pair
    outcome = CHECKERS["c06"](fake(tmp_path))
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


def test_c12_not_measured_at_a_40_percent_masking_ratio(tmp_path: Path) -> None:
    outcome = CHECKERS["c12"](fake(tmp_path))
    assert outcome.verdict == "not measured"
    assert "mlm-tiny 40.0% (configured 40%)" in outcome.evidence and outcome.needed == "an MLM run at a 15% masking ratio"


def bert_masking(tmp_path: Path, mlm_fraction: float) -> Results:
    tree = write_fake_results(tmp_path)
    for path in tree.summaries:
        summary = json.loads(path.read_text())
        if summary["objective_kind"] == "mlm":
            path.write_text(json.dumps({**summary, "loss_fraction": mlm_fraction}))
    return build_results(tree.scores, tree.summaries, tree.task_stats, 0.95, {**OBJECTIVES, "mlm": {"kind": "mlm", "mask_ratio": 0.15}})


def test_c12_supported_at_bert_masking(tmp_path: Path) -> None:
    assert CHECKERS["c12"](bert_masking(tmp_path, 0.151)).verdict == "supported"


def test_c12_contradicted_when_a_fraction_departs_from_its_configuration(tmp_path: Path) -> None:
    assert CHECKERS["c12"](bert_masking(tmp_path, 0.25)).verdict == "contradicted"


def test_c18_inconclusive_even_when_mlm_wins_classification(tmp_path: Path) -> None:
    outcome = CHECKERS["c18"](fake(tmp_path, score=mlm_ahead_by(3.0)))
    assert outcome.verdict == "inconclusive"
    assert "only for causal models" in outcome.evidence and "clm-tiny 73.5" in outcome.evidence


def test_c18_contradicted_when_clm_wins_classification(tmp_path: Path) -> None:
    assert verdict("c18", fake(tmp_path, score=mlm_ahead_by(-3.0))) == "contradicted"


# ------------------------------------------------------------------ the claims file


def test_unmeasurable_and_unknown_claims(tmp_path: Path) -> None:
    claims = [Claim("c04", "seed", "CLM ahead early.", "m", "s"), Claim("z99", "seed", "Unknown.", "m", "s")]
    table = check_claims(claims, fake(tmp_path)).set_index("id")
    assert table.loc["c04", "verdict"] == "not measured" and "intermediate" in table.loc["c04", "needed"]
    assert table.loc["z99", "verdict"] == "not measured" and table.loc["z99", "evidence"] == "no checker for this claim id"


def test_every_claim_of_the_project_file_gets_a_verdict(tmp_path: Path) -> None:
    claims = read_claims(Path(__file__).resolve().parents[1] / "config/claims.yaml")
    table = check_claims(claims, fake(tmp_path))
    assert len(table) == len(claims) and table["verdict"].isin(["supported", "contradicted", "inconclusive", "not measured"]).all()
    assert table["evidence"].str.len().gt(0).all()


def test_a_claim_missing_a_field_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text("- {id: c01, source: s, claim: c, measure: m}\n")
    with pytest.raises(PipelineError, match=r"claims.yaml\[0\].status: missing required key"):
        read_claims(path)
