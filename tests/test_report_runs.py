"""Which run each run is measured against, and which sections repeat which reference, when
the zoo trains a shorter budget than the headline CLM and MLM (config/default.yaml)."""

from __future__ import annotations

import pandas as pd

from pipeline import strict
from pipeline.analysis.runs import MASKING, TWO_STAGE, reference_runs, run_placements
from pipeline.objectives import parse_objective

OBJECTIVES = {
    "clm": {"kind": "clm"},
    "mlm": {"kind": "mlm", "mask_ratio": 0.4},
    "mlm_20": {"kind": "mlm", "mask_ratio": 0.2},
    "meap": {"kind": "meap"},
}


def objective_params(runs: pd.DataFrame) -> dict[str, dict]:
    """Each run's parsed objective parameters, as its summary.json records them."""
    return {run: strict.to_plain(parse_objective(OBJECTIVES[objective]).params) for run, objective in zip(runs["run"], runs["objective"])}


def run(name: str, kind: str, study: str, trained_steps: int, first_step: int = 0, base: str = "") -> dict[str, object]:
    objective = kind if study != "objectives" else name
    return {
        "run": f"{name}-tiny",
        "run_name": name,
        "size": "tiny",
        "objective": objective,
        "objective_kind": kind,
        "study": study,
        "trained_steps": trained_steps,
        "first_step": first_step,
        "started_from_run": base and f"{base}-tiny",
    }


def default_shape() -> pd.DataFrame:
    """CLM and MLM at 1,440 steps, the zoo and a split at 480, decayed branches at 480, CPT."""
    return pd.DataFrame(
        [
            run("clm", "clm", "objectives", 1440),
            run("mlm", "mlm", "objectives", 1440),
            run("mlm_20", "mlm", "objectives", 480),
            run("meap", "meap", "objectives", 480),
            run("clm_480steps", "clm", "short_budget", 480, 384, "clm"),
            run("mlm_480steps", "mlm", "short_budget", 480, 384, "mlm"),
            run("clm50_mlm_480steps", "mlm", "two_stage", 480, 240, "clm"),
            run("mlm_cpt_on_clm", "mlm", "continued", 160, 0, "clm"),
        ]
    )


def test_zoo_runs_of_a_shorter_budget_are_measured_against_clm_and_mlm_decayed_at_it() -> None:
    references = reference_runs(default_shape())
    short = {"clm": "clm_480steps-tiny", "mlm": "mlm_480steps-tiny"}
    full = {"clm": "clm-tiny", "mlm": "mlm-tiny"}
    assert references["mlm_20-tiny"] == references["meap-tiny"] == references["clm50_mlm_480steps-tiny"] == short
    assert references["clm-tiny"] == references["mlm-tiny"] == references["mlm_cpt_on_clm-tiny"] == full


def test_a_section_repeats_the_references_of_its_runs_budget_only() -> None:
    placements = run_placements(default_shape(), objective_params(default_shape()))
    masking = placements[placements["section"] == MASKING]
    assert list(zip(masking["run"], masking["repeated"])) == [("mlm_20-tiny", False), ("mlm_480steps-tiny", True)]
    assert masking.set_index("run").loc["mlm_480steps-tiny", "mask_ratio"] == 0.4
    two_stage = placements[placements["section"] == TWO_STAGE]
    # The branches live in the two-stage section already: the 1,440-step runs are not repeated there.
    assert sorted(zip(two_stage["run"], two_stage["clm_share"], two_stage["repeated"])) == [
        ("clm50_mlm_480steps-tiny", 0.5, False),
        ("clm_480steps-tiny", 1.0, False),
        ("mlm_480steps-tiny", 0.0, False),
    ]
