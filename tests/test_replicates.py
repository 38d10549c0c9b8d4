"""Pretraining replicates: several seeds per arm of the CLM-vs-MLM comparison, named apart,
each from its own seed's initial weights, pooled by the report into one estimate per arm
whose interval is over pretraining seeds."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from pipeline.analysis.replicates import pool_replicates
from pipeline.analysis.stats import t_critical
from pipeline.config.replicates import arm_of, is_random_init, replicate_name
from pipeline.errors import PipelineError
from pipeline.finetune.plan import finetunes
from pipeline.pretrain.plan import curve_checkpoints, plan_runs
from pipeline.workflow.configure import load_config
from tests.test_config import default_data


def test_replicate_names_read_back():
    assert [replicate_name("clm", i) for i in range(3)] == ["clm", "clm_r1", "clm_r2"]
    assert [arm_of(n) for n in ("clm", "clm_r2", "mlm_20", "mlm_20_r11", "x_r0")] == [
        ("clm", 0),
        ("clm", 2),
        ("mlm_20", 0),
        ("mlm_20", 11),
        ("x_r0", 0),
    ]
    assert is_random_init("random_r1") and is_random_init("random") and not is_random_init("clm_r1")


def replicated_config(replicates: int = 3):
    data = default_data()
    data["pretraining"]["replicates"] = replicates
    data["pretraining"].update(sizes=["tiny", "small"], checkpoint_steps=[240, 960])
    data["learning_curves"] = {"sizes": ["tiny", "small"], "runs": ["clm", "mlm", "clm25_mlm_480steps"]}
    return load_config(data)


def test_each_replicate_of_the_headline_runs_starts_from_its_own_seed_and_the_zoo_from_the_first():
    config = replicated_config()
    plans = plan_runs(config)
    for size in ("tiny", "small"):
        for objective in ("clm", "mlm"):
            runs = [plans[f"{replicate_name(objective, i)}-{size}"] for i in range(3)]
            assert [(p.objective, p.replicate, p.seed(config.seed), p.start.kind) for p in runs] == [
                (objective, i, config.seed + i, "initial") for i in range(3)
            ]
    assert not any(p.replicate for p in plans.values() if p.study != "objectives" or p.objective not in ("clm", "mlm"))
    assert "span_corruption_r1-tiny" not in plans and plans["clm25_mlm_480steps-tiny"].start.run == "clm-tiny"
    # Learning curves follow every replicate of the runs they name (two-stage runs have one).
    curves = {p.run for p, _ in curve_checkpoints(config, plans)}
    assert {"clm_r1-tiny", "mlm_r2-small", "clm25_mlm_480steps-tiny"} <= curves and "clm25_mlm_480steps_r1-tiny" not in curves


def test_a_task_that_names_a_run_takes_every_replicate_of_it():
    data = default_data()
    data["pretraining"]["replicates"] = 2
    data["finetuning"]["by_task"]["topic"] = {"runs": ["clm", "random"]}
    config = load_config(data)
    assert finetunes(config, "topic", "clm_r1", "tiny", "clm") and finetunes(config, "topic", "random_r1", "tiny", "random")
    assert not finetunes(config, "topic", "mlm_r1", "tiny", "mlm")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["pretraining"].update(replicates=0), "cfg.pretraining.replicates: 0 must be at least 1"),
        (lambda c: c["objectives"].update(mlm_r2={"kind": "mlm"}), "'mlm_r2' ends like a pretraining replicate's name"),
    ],
)
def test_bad_replicate_settings_are_refused(edit, message):
    data = default_data()
    edit(data)
    with pytest.raises(PipelineError, match=message):
        load_config(data, "cfg")


def score_rows(means: dict[str, float], n_seeds: int = 3, std_error: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "task": "topic",
                "family": "SC",
                "run": f"{name}-tiny",
                "run_name": name,
                "objective_kind": arm_of(name)[0],
                "size": "tiny",
                "best_learning_rate": 1e-3,
                "n_seeds": n_seeds,
                "test_mean": mean,
                "test_std_error": std_error,
                "test_df": 2.0,
                "test_low": math.nan,
                "test_high": math.nan,
            }
            for name, mean in means.items()
        ]
    )


def test_an_arm_of_replicates_pools_over_pretraining_seeds_and_a_single_run_stays_as_it_is():
    pooled = pool_replicates(score_rows({"clm": 50.0, "clm_r1": 60.0, "clm_r2": 70.0, "mlm": 40.0}), ["task"], 0.95).set_index("run")
    clm = pooled.loc["clm-tiny"]
    # Replicate means 50, 60, 70: mean 60, standard error 10 / sqrt(3), df 2.
    assert (clm["run_name"], clm["pretraining_seeds"], clm["test_mean"], clm["test_df"]) == ("clm", 3, 60.0, 2.0)
    assert clm["test_std_error"] == pytest.approx(10 / math.sqrt(3))
    assert clm["test_high"] - clm["test_mean"] == pytest.approx(t_critical(0.95, 2.0) * 10 / math.sqrt(3))
    mlm = pooled.loc["mlm-tiny"]
    assert (mlm["pretraining_seeds"], mlm["test_mean"], mlm["test_std_error"]) == (1, 40.0, 1.0)
    assert set(pooled.index) == {"clm-tiny", "mlm-tiny"}


def test_replicates_that_chose_different_learning_rates_leave_the_pooled_rate_blank():
    rows = score_rows({"clm": 50.0, "clm_r1": 52.0})
    rows.loc[1, "best_learning_rate"] = 3e-3
    pooled = pool_replicates(rows, ["task"], 0.95)
    assert math.isnan(pooled["best_learning_rate"].iloc[0])
