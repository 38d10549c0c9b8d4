"""The aggregate stage on small fake result trees."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from report_fakes import FakeTree, default_score, record, rewrite, score_formula, write_fake_results

from pipeline.__main__ import main
from pipeline.finetune.selection import best_on_validation


def aggregate(tmp_path: Path, **fake_options: object) -> dict[str, pd.DataFrame]:
    tree = write_fake_results(tmp_path, **fake_options)
    out = tmp_path / "results/tables"
    assert main(tree.aggregate_argv(out)) == 0
    return {path.stem: pd.read_csv(path) for path in out.glob("*.csv")}


def only(frame: pd.DataFrame, **where: object) -> pd.Series:
    selected = frame
    for column, value in where.items():
        selected = selected[selected[column] == value]
    assert len(selected) == 1, where
    return selected.iloc[0]


def test_writes_every_table_and_provenance(tmp_path: Path) -> None:
    tables = aggregate(tmp_path)
    expected = {
        "finetune_grid",
        "run_scores",
        "outside_scores",
        "scores",
        "metric_details",
        "family_scores",
        "comparison",
        "baselines",
        "lr_sensitivity",
        "objectives",
        "learning_curves",
        "curve_comparison",
        "pretraining",
        "tasks",
        "minimal_pairs",
        "minimal_pairs_comparison",
        "budget_trend",
        "budget_fit",
        "claims",
        "published_reference",
        "published_claims",
        "study_headline",
        "study_curve",
        "lr_means",
    }
    assert set(tables) == expected
    assert tables["learning_curves"].empty and tables["curve_comparison"].empty  # no curve_scores listed
    assert len(tables["finetune_grid"]) == 2 * 6 * 3 * 3  # tasks x runs x LRs x seeds
    provenance = json.loads((tmp_path / "results/tables/provenance.json").read_text())
    # the manifest, and the files it lists: scores, summaries, task stats, bag of words, minimal pairs; the claims
    assert len(provenance["inputs"]) == 1 + 12 + 4 + 2 + 1 + 6 + 1
    assert provenance["spec"]["report"]["confidence"] == 0.95


def test_best_learning_rate_is_chosen_on_validation_not_test(tmp_path: Path) -> None:
    def score(task: str, kind: str, size: str, rate: float, seed: int) -> tuple[float, float]:
        validation, test = default_score(task, kind, size, rate, seed)
        if rate == 1e-4:  # best on validation, worst on test
            return validation + 10.0, test - 10.0
        return validation, test

    tables = aggregate(tmp_path, score=score)
    row = only(tables["scores"], task="sentiment", run="clm-tiny")
    grid = tables["finetune_grid"]
    at_rate = grid[(grid["task"] == "sentiment") & (grid["run"] == "clm-tiny") & (grid["learning_rate"] == 1e-4)]
    assert row["best_learning_rate"] == 1e-4
    assert row["test_mean"] == pytest.approx(at_rate["test"].mean())
    assert row["test_mean"] < grid.loc[(grid["task"] == "sentiment") & (grid["run"] == "clm-tiny"), "test"].max() - 5


def test_scores_and_comparison_numbers(tmp_path: Path) -> None:
    tables = aggregate(tmp_path)
    row = only(tables["scores"], task="sentiment", run="mlm-tiny")
    # at LR 5e-4 the test scores are 73 + (-0.5, 0, 0.5): mean 73, s = 0.5, n = 3
    assert (row["test_mean"], row["n_seeds"]) == (73.0, 3)
    assert row["test_high"] - row["test_mean"] == pytest.approx(4.302653 * 0.5 / math.sqrt(3), abs=1e-5)
    family = only(tables["family_scores"], family="SC", run="mlm-tiny")
    assert family["test_mean"] == pytest.approx((73.0 + 83.0) / 2)
    assert family["test_std_error"] == pytest.approx(math.sqrt(2 * (0.5 / math.sqrt(3)) ** 2) / 2)
    gap = only(tables["comparison"], level="family", name="SC", size="tiny")
    assert gap["difference_mean"] == pytest.approx(3.0)
    assert gap["winner"] == "MLM"
    assert list(tables["comparison"]["size"].drop_duplicates()) == ["tiny", "small"]  # by parameter count


def test_winner_is_a_tie_when_the_interval_spans_zero(tmp_path: Path) -> None:
    def bonus(task: str, kind: str, size: str) -> float:
        return {"clm": 0.0, "mlm": 0.5, "random": -15.0}[kind]

    tables = aggregate(tmp_path, score=score_formula(bonus=bonus, seed_spread=4.0))
    row = only(tables["comparison"], level="task", name="sentiment", size="tiny")
    assert row["difference_low"] < 0 < row["difference_high"]
    assert row["winner"] == "tie"


def test_clm_wins_when_the_whole_interval_is_below_zero(tmp_path: Path) -> None:
    tables = aggregate(tmp_path, score=score_formula(bonus=lambda task, kind, size: {"clm": 3.0, "mlm": 0.0, "random": -15.0}[kind]))
    assert set(tables["comparison"]["winner"]) == {"CLM"}


def test_a_single_seed_gives_no_interval_and_no_winner(tmp_path: Path) -> None:
    tables = aggregate(tmp_path, seeds=(1,))
    assert set(tables["comparison"]["winner"]) == {"no CI"}
    assert tables["scores"]["test_low"].isna().all()


def test_baselines_and_lr_sensitivity(tmp_path: Path) -> None:
    tables = aggregate(tmp_path)
    base = only(tables["baselines"], task="topic", run="clm-small")
    assert (base["majority_test_score"], base["random_run"]) == (51.2, "random-small")
    assert base["minus_random_mean"] == pytest.approx(15.0)  # bonus 0 vs -15
    clm = only(tables["lr_sensitivity"], task="sentiment", run="clm-tiny")
    mlm = only(tables["lr_sensitivity"], task="sentiment", run="mlm-tiny")
    # penalty * log10(1e-4 / 5e-4)^2 is the worst LR point: 2 * 0.4886 (CLM), 4 * 0.4886 (MLM)
    assert clm["test_spread"] == pytest.approx(2 * math.log10(0.2) ** 2)
    assert mlm["test_spread"] == pytest.approx(4 * math.log10(0.2) ** 2)
    assert (clm["num_near_best"], mlm["num_near_best"]) == (3, 1)


def test_with_selection_seeds_the_lr_is_chosen_on_them_and_scored_on_every_seed(tmp_path: Path) -> None:
    """Seed 0 alone runs every LR; seeds 1 and 2 run at the LR seed 0 chose. Seed 0's
    validation prefers 2e-3; seeds 1 and 2 score so low there on validation that a mean
    over every point of an LR would pick 5e-4, an LR they never ran."""

    def score(task: str, kind: str, size: str, rate: float, seed: int) -> tuple[float, float]:
        validation, test = default_score(task, kind, size, rate, seed)
        if rate == 2e-3:
            return validation + (5.0 if seed == 0 else -10.0), test
        return validation, test

    tables = aggregate(tmp_path, score=score, selection_seeds=(0,))
    grid = tables["finetune_grid"]
    points = grid[(grid["task"] == "sentiment") & (grid["run"] == "clm-tiny")]
    assert sorted(zip(points["learning_rate"], points["seed"])) == [(1e-4, 0), (5e-4, 0), (2e-3, 0), (2e-3, 1), (2e-3, 2)]
    row = only(tables["scores"], task="sentiment", run="clm-tiny")
    assert (row["best_learning_rate"], row["n_seeds"]) == (2e-3, 3)
    assert row["test_mean"] == pytest.approx(points.loc[points["learning_rate"] == 2e-3, "test"].mean())
    assert row["validation_mean"] == pytest.approx(
        points.loc[(points["learning_rate"] == 2e-3) & (points["seed"] == 0), "validation"].item()
    )
    sensitivity = only(tables["lr_sensitivity"], task="sentiment", run="clm-tiny")
    seed_zero = points[points["seed"] == 0].set_index("learning_rate")["test"]
    assert (sensitivity["num_selection_seeds"], sensitivity["num_learning_rates"]) == (1, 3)
    assert sensitivity["test_spread"] == pytest.approx(seed_zero.max() - seed_zero.min())  # seed 0's points only


def test_a_grid_where_no_seed_ran_every_lr_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = write_fake_results(tmp_path)
    path = tree.scores[0]
    record = json.loads(path.read_text())
    record["grid"] = [p for p in record["grid"] if (p["learning_rate"] == 1e-4) == (p["seed"] == 0)]
    rewrite(path, record)
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1
    assert f"{path}: key 'grid' has no seed that ran every learning rate" in message
    assert not (tmp_path / "tables").exists()


def test_the_bag_of_words_reference_is_scored_at_the_c_chosen_on_validation(tmp_path: Path) -> None:
    baselines = aggregate(tmp_path)["baselines"]
    sentiment = baselines[baselines["task"] == "sentiment"]
    assert len(sentiment) == 4  # every pretrained run of the task carries its task's reference
    assert (sentiment["bag_of_words_mean"] == 67.0).all() and (sentiment["bag_of_words_examples"] == 800).all()  # C = 1: 66, 67, 68
    assert sentiment["bag_of_words_low"].iloc[0] == pytest.approx(67.0 - 4.302653 / math.sqrt(3), abs=1e-4)  # t(2) * s / sqrt(3), s = 1
    assert baselines.loc[baselines["task"] == "topic", ["bag_of_words_mean", "bag_of_words_examples"]].isna().all().all()


def test_malformed_bag_of_words_scores_are_a_one_line_error_naming_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = write_fake_results(tmp_path)
    record = json.loads(tree.bag_of_words[0].read_text())
    del record["grid"][2]["test"]
    rewrite(tree.bag_of_words[0], record)
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    assert capsys.readouterr().err.strip() == f"error: {tree.bag_of_words[0]}: missing key 'grid[2].test'"
    assert not (tmp_path / "tables").exists()


def test_the_bag_of_words_c_is_read_from_its_record_and_held_to_its_grid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The job records the C it chose; the aggregate takes that one and refuses a record whose grid
    would have chosen another, rather than choosing again."""
    tree = write_fake_results(tmp_path)
    record = json.loads(tree.bag_of_words[0].read_text())
    rewrite(tree.bag_of_words[0], record | {"best_regularization": 0.1})  # C = 0.1 is best on test, not on validation
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    expected = f"error: {tree.bag_of_words[0]}: key 'best_regularization' = 0.1 is not the C its grid's validation scores choose (1.0)"
    assert capsys.readouterr().err.strip() == expected
    assert not (tmp_path / "tables").exists()


def test_missing_key_in_scores_is_a_one_line_error_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = write_fake_results(tmp_path)
    broken = tree.scores[3]
    record = json.loads(broken.read_text())
    del record["grid"][1]["test"]
    rewrite(broken, record)
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1
    assert str(broken) in message and "grid[1].test" in message
    assert not (tmp_path / "tables").exists()


def test_ambiguous_runs_of_one_kind_are_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The zoo's many MLM-kind runs at tiny, and none named "mlm" to compare with CLM."""
    tree = write_fake_results(tmp_path, sizes=("tiny",), zoo_sizes=("tiny",))
    tree.scores = [path for path in tree.scores if path.parent.name != "mlm-tiny"]
    tree.summaries = [path for path in tree.summaries if path.parent.name != "mlm-tiny"]
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    assert "and none is named 'mlm': cannot choose" in capsys.readouterr().err


# ------------------------------------------------------------------ the objective zoo


@pytest.fixture(scope="module")
def zoo_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """One task, so a family average is its task's score: Δ intervals are easy to state."""
    root = tmp_path_factory.mktemp("zoo")
    tree = write_fake_results(root, tasks=("sentiment",), sizes=("tiny",), zoo_sizes=("tiny",))
    assert main(tree.aggregate_argv(root / "tables")) == 0
    return {path.stem: pd.read_csv(path) for path in (root / "tables").glob("*.csv")}


def test_objectives_rows_and_welch_differences(zoo_tables: dict[str, pd.DataFrame]) -> None:
    row = only(zoo_tables["objectives"], level="family", run="mlm_20-tiny")
    # test at LR 5e-4: 70 + bonus + (−0.5, 0, 0.5); mlm_20 +1, mlm +3, clm 0. se of a mean = 0.5 / sqrt(3), df 2;
    # a Welch difference of two such means: se sqrt(2) * 0.5 / sqrt(3), df 4, t(0.975, 4) = 2.776445.
    se = math.sqrt(2) * 0.5 / math.sqrt(3)
    assert (row["section"], row["test_mean"], row["mask_ratio"], row["mask_token_fraction"], row["random_token_fraction"]) == (
        "Masking ratio and 80/10/10",
        71.0,
        0.2,
        0.8,
        0.1,
    )
    assert (row["mlm_run"], row["minus_mlm_mean"], row["minus_mlm_df"]) == ("mlm-tiny", pytest.approx(-2.0), pytest.approx(4.0))
    assert row["minus_mlm_std_error"] == pytest.approx(se)
    assert row["minus_mlm_high"] == pytest.approx(-2.0 + 2.776445 * se, abs=1e-5)
    assert (row["versus_mlm"], row["versus_clm"]) == ("worse", "no difference resolved")  # +1.0 ± 1.13 against CLM


def test_objectives_sections_and_reference_points(zoo_tables: dict[str, pd.DataFrame]) -> None:
    family = zoo_tables["objectives"][zoo_tables["objectives"]["level"] == "family"]
    sections = list(family["section"].drop_duplicates())
    assert sections == [
        "Causal LM",
        "Masked LM",
        "Prefix LM and span denoisers",
        "Masking ratio and 80/10/10",
        "Two-stage CLM→MLM",
        "Continued pretraining",
    ]
    two_stage = family[family["section"] == "Two-stage CLM→MLM"]
    assert list(two_stage["run"]) == ["mlm-tiny", "clm25_mlm-tiny", "clm50_mlm-tiny", "clm75_mlm-tiny", "clm-tiny"]
    assert list(two_stage["clm_share"]) == [0.0, 0.25, 0.5, 0.75, 1.0] and list(two_stage["repeated"]) == [True, False, False, False, True]
    masking = family[family["section"] == "Masking ratio and 80/10/10"]
    assert list(masking["run_name"]) == ["mlm_20", "mlm_30", "mlm", "mlm_mask_only", "mlm_50"]
    assert (
        only(family, run="mlm-tiny", section="Masked LM")["versus_mlm"],
        only(family, run="clm-tiny", section="Causal LM")["versus_clm"],
    ) == ("reference", "reference")
    assert only(family, run="electra-tiny")["section"] == "Masked LM" and only(family, run="mlm_nsp-tiny")["mask_ratio"] == 0.4
    assert list(family.loc[family["study"] == "continued", "base_kind"]) == ["clm", "mlm"]
    assert len(zoo_tables["objectives"]) == 2 * len(family)  # the one task, and its family


def test_a_shorter_budget_is_measured_against_its_own_decay_branches(tmp_path: Path) -> None:
    """At 400 of 600 steps the split's references are CLM and MLM decayed at 400 (the two-stage
    section's 100% and 0% of that budget), not the 600-step runs the headline compares."""
    tables = aggregate(tmp_path, tasks=("sentiment",), sizes=("tiny",), zoo_sizes=("tiny",), budget_sizes=("tiny",))
    family = tables["objectives"][tables["objectives"]["level"] == "family"]
    two_stage = family[family["section"] == "Two-stage CLM→MLM"]
    assert list(zip(two_stage["run_name"], two_stage["trained_steps"], two_stage["clm_share"])) == [
        ("mlm_400steps", 400, 0.0),
        ("clm50_mlm_400steps", 400, 0.5),
        ("clm_400steps", 400, 1.0),
        ("mlm", 600, 0.0),
        ("clm25_mlm", 600, 0.25),
        ("clm50_mlm", 600, 0.5),
        ("clm75_mlm", 600, 0.75),
        ("clm", 600, 1.0),
    ]
    split = only(family, run="clm50_mlm_400steps-tiny")
    assert (split["mlm_run"], split["minus_mlm_mean"], split["clm_run"], split["minus_clm_mean"]) == (
        "mlm_400steps-tiny",
        pytest.approx(2.0),
        "clm_400steps-tiny",
        pytest.approx(4.0),
    )
    assert only(family, run="mlm_400steps-tiny")["versus_mlm"] == "reference"
    assert only(family, run="clm50_mlm-tiny")["mlm_run"] == "mlm-tiny" and only(family, run="mlm_cpt_on_clm-tiny")["mlm_run"] == "mlm-tiny"
    assert set(tables["comparison"]["mlm_run"]) == {"mlm-tiny"} and set(tables["comparison"]["clm_run"]) == {"clm-tiny"}


def test_pretraining_carries_the_new_summary_keys(zoo_tables: dict[str, pd.DataFrame]) -> None:
    runs = zoo_tables["pretraining"].set_index("run")
    assert runs.loc["clm50_mlm-tiny", ["run_name", "objective", "study", "first_step", "started_from_run"]].tolist() == [
        "clm50_mlm",
        "mlm",
        "two_stage",
        300,
        "clm-tiny",
    ]
    assert (
        runs.loc["ul2-tiny", "attention"] == "prefix" and runs.loc["mlm_cpt_on_clm-tiny", "description"] == "mlm_cpt_on_clm for 160 steps"
    )
    assert runs.loc["electra-tiny", ["heldout_metric_name", "heldout_metric_value"]].tolist() == ["replaced_token_detection_gain", 4.0]
    assert (zoo_tables["comparison"]["mlm_run"] == "mlm-tiny").all()  # the run named mlm, among many of kind mlm


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (
            lambda summary: summary.update(study="two-stage"),
            "'study' should be one of 'objectives', 'short_budget', 'two_stage', 'continued'",
        ),
        (lambda summary: summary.pop("first_step"), "missing key 'first_step'"),
        (lambda summary: summary["started_from"].pop("carry_optimizer"), "missing key 'started_from.carry_optimizer'"),
        (lambda summary: summary["started_from"].update(kind="scratch"), "key 'started_from.kind' should be one of"),
    ],
)
def test_malformed_summary_is_a_one_line_error_naming_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change, key: str
) -> None:
    tree = write_fake_results(tmp_path, tasks=("sentiment",), sizes=("tiny",), zoo_sizes=("tiny",))
    broken = next(path for path in tree.summaries if path.parent.name == "clm25_mlm-tiny")
    summary = json.loads(broken.read_text())
    change(summary)
    rewrite(broken, summary)
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and str(broken) in message and key in message


# ------------------------------------------------------------------ learning curves

LR_OFF = math.log10(1e-4 / 5e-4) ** 2  # squared decades of the LR 1e-4 off the formula's best, 5e-4


def small_lr_wins_at_checkpoints(task: str, name: str, size: str, rate: float, seed: int, fraction: float) -> tuple[float, float]:
    """At a checkpoint the LR 1e-4 is best on validation (+10), and every test score is 5 points lower."""
    validation, test = default_score(task, name, size, rate, seed)
    return validation + 10.0 * (rate == 1e-4), test - 5.0


def test_learning_curves_rescore_each_checkpoint_with_the_protocol(tmp_path: Path) -> None:
    tables = aggregate(
        tmp_path, tasks=("sentiment",), sizes=("tiny",), curve_sizes=("tiny",), curve_steps=(150,), curve=small_lr_wins_at_checkpoints
    )
    curves = tables["learning_curves"]
    tasks = curves[curves["level"] == "task"]
    assert tasks[["run", "step", "budget_fraction", "final", "best_learning_rate"]].values.tolist() == [
        ["clm-tiny", 150, 0.25, False, 1e-4],
        ["clm-tiny", 600, 1.0, True, 5e-4],
        ["mlm-tiny", 150, 0.25, False, 1e-4],
        ["mlm-tiny", 600, 1.0, True, 5e-4],
    ]
    # test at LR 1e-4: 70 + bonus − penalty * LR_OFF − 5, seeds ± 0.5; the final models are the headline's 70 and 73
    assert tasks["test_mean"].tolist() == pytest.approx([70 - 2 * LR_OFF - 5, 70, 73 - 4 * LR_OFF - 5, 73])
    assert tasks["test_high"].iloc[0] - tasks["test_mean"].iloc[0] == pytest.approx(4.302653 * 0.5 / math.sqrt(3), abs=1e-5)
    assert curves.loc[curves["level"] == "family", "test_mean"].tolist() == tasks["test_mean"].tolist()  # one task per family
    gap = only(tables["curve_comparison"], level="family", step=150)
    # (73 − 4 L − 5) − (70 − 2 L − 5) = 3 − 2 L; Welch over two 3-seed means: se sqrt(2) * 0.5 / sqrt(3), df 4
    assert (gap["mlm_run"], gap["clm_run"], gap["budget_fraction"], gap["final"]) == ("mlm-tiny", "clm-tiny", 0.25, False)
    assert (gap["difference_mean"], gap["difference_df"]) == (pytest.approx(3 - 2 * LR_OFF), pytest.approx(4.0))
    assert gap["difference_low"] == pytest.approx(3 - 2 * LR_OFF - 2.776445 * math.sqrt(2) * 0.5 / math.sqrt(3), abs=1e-5)
    assert gap["winner"] == "MLM"
    final = only(tables["curve_comparison"], level="family", step=600)
    headline = only(tables["comparison"], level="family")
    assert (
        final["final"]
        and final[["difference_mean", "difference_low", "winner"]].tolist()
        == headline[["difference_mean", "difference_low", "winner"]].tolist()
    )


def test_curve_comparison_pairs_only_the_headline_runs(tmp_path: Path) -> None:
    """A two-stage run with curves is of kind MLM too: it gets curve points, no comparison."""
    tables = aggregate(
        tmp_path, tasks=("sentiment",), sizes=("tiny",), zoo_sizes=("tiny",), curve_sizes=("tiny",), curve_runs=("clm", "clm25_mlm")
    )
    family = tables["learning_curves"][tables["learning_curves"]["level"] == "family"]
    assert family[["run", "step"]].values.tolist() == [
        ["clm-tiny", 150],
        ["clm-tiny", 300],
        ["clm-tiny", 600],
        ["clm25_mlm-tiny", 300],
        ["clm25_mlm-tiny", 600],
    ]
    assert tables["curve_comparison"].empty


def test_aggregate_runs_without_curve_scores(tmp_path: Path) -> None:
    """A plan without learning curves lists no curve_scores; a final model's null pretraining_step is accepted."""
    tree = write_fake_results(tmp_path, sizes=("tiny",))
    record = json.loads(tree.scores[0].read_text())
    rewrite(tree.scores[0], {**record, "pretraining_step": None})
    tree.curve_scores = []
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 0
    assert pd.read_csv(tmp_path / "tables/learning_curves.csv").empty


def curve_tree(tmp_path: Path) -> FakeTree:
    return write_fake_results(tmp_path, sizes=("tiny",), curve_sizes=("tiny",))


def assert_one_line_error(tree: FakeTree, tmp_path: Path, capsys: pytest.CaptureFixture[str], *parts: str) -> None:
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and all(part in message for part in parts), message
    assert not (tmp_path / "tables").exists()


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda record: record.pop("pretraining_step"), "missing key 'pretraining_step'"),
        (lambda record: record.update(pretraining_step=True), "key 'pretraining_step' should be int"),
        (lambda record: record.update(pretraining_step="150"), "key 'pretraining_step' should be int"),
        (
            lambda record: record.update(pretraining_step=0),
            "key 'pretraining_step' = 0 is not strictly between the first step (0) and trained_steps (600) of run 'clm-tiny'",
        ),
        (lambda record: record.update(pretraining_step=600), "key 'pretraining_step' = 600 is not strictly between"),
        (
            lambda record: record.update(run="clm2-tiny", objective="clm2"),
            "key 'run' = 'clm2-tiny' has no summary.json among the summaries",
        ),
        (lambda record: record["grid"][0].pop("validation"), "missing key 'grid[0].validation'"),
    ],
)
def test_malformed_curve_scores_are_a_one_line_error_naming_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change, key: str
) -> None:
    tree = curve_tree(tmp_path)
    broken = tree.curve_scores[0]
    record = json.loads(broken.read_text())
    change(record)
    rewrite(broken, record)
    assert_one_line_error(tree, tmp_path, capsys, str(broken), key)


def test_a_repeated_checkpoint_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = curve_tree(tmp_path)
    copy = tmp_path / "elsewhere/scores.json"
    copy.parent.mkdir()
    copy.write_text(tree.curve_scores[0].read_text())
    record(copy, json.loads((tree.curve_scores[0].parent / "provenance.json").read_text())["spec"])
    tree.curve_scores.append(copy)
    assert_one_line_error(tree, tmp_path, capsys, str(copy), "step 150 is also in", str(tree.curve_scores[0]))


def test_checkpoint_scores_given_as_final_scores_are_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = curve_tree(tmp_path)
    checkpoint = tree.curve_scores.pop()
    tree.scores.append(checkpoint)
    assert_one_line_error(
        tree,
        tmp_path,
        capsys,
        str(checkpoint),
        "'pretraining_step' = 300: an intermediate checkpoint's scores belong in the manifest's curve_scores",
    )


def test_a_checkpoint_missing_a_task_its_other_checkpoints_have_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = curve_tree(tmp_path)
    tree.curve_scores = [path for path in tree.curve_scores if path.parts[-4:-1] != ("topic", "mlm-tiny", "step-300")]
    assert_one_line_error(
        tree, tmp_path, capsys, "run 'mlm-tiny' has curve scores for tasks sentiment, topic at step 150 but sentiment at step 300"
    )


def test_a_task_kept_off_the_curves_leaves_them_and_their_final_point(tmp_path: Path) -> None:
    """by_task.<task>.learning_curves: false: no checkpoint of any run has the task, so the
    curves (their final point included) are over the other tasks; the headline keeps it."""
    tree = curve_tree(tmp_path)
    tree.curve_scores = [path for path in tree.curve_scores if "topic" not in path.parts]
    out = tmp_path / "results/tables"
    assert main(tree.aggregate_argv(out)) == 0
    curves, scores = (pd.read_csv(out / f"{name}.csv") for name in ("learning_curves", "scores"))
    assert set(curves.loc[curves["level"] == "task", "name"]) == {"sentiment"} and "topic" in set(scores["task"])
    final_family = curves[(curves["level"] == "family") & curves["final"]].set_index("run")["test_mean"]
    final_sentiment = curves[(curves["level"] == "task") & curves["final"]].set_index("run")["test_mean"]
    assert final_family.to_dict() == pytest.approx(final_sentiment.to_dict())  # SC's final point: sentiment alone


def test_metric_details_follow_the_chosen_learning_rate(tmp_path: Path) -> None:
    """Every number of a task's metric is reported at the LR the headline chose, over the same seeds."""
    tables = aggregate(tmp_path)
    details, scores = tables["metric_details"], tables["scores"]
    assert set(details["key"]) == {"accuracy", "half"}
    for _, score in scores.iterrows():
        headline = only(details, task=score["task"], run=score["run"], key="accuracy")
        half = only(details, task=score["task"], run=score["run"], key="half")
        assert headline["best_learning_rate"] == score["best_learning_rate"]
        assert headline["test_mean"] == pytest.approx(score["test_mean"])
        assert half["test_mean"] == pytest.approx(score["test_mean"] / 2)
        assert half["test_high"] - half["test_low"] == pytest.approx((score["test_high"] - score["test_low"]) / 2)


def test_a_run_missing_a_task_of_a_family_gets_no_family_average(tmp_path: Path) -> None:
    """A config may fine-tune some runs on some tasks only; a partial family average would
    mix task sets, so the run keeps its task scores and loses only the family average."""
    tree = write_fake_results(tmp_path)
    tree.scores = [path for path in tree.scores if path.parent.name != "random-small" or path.parent.parent.name != "topic"]
    out = tmp_path / "results/tables"
    assert main(tree.aggregate_argv(out)) == 0
    families, scores = pd.read_csv(out / "family_scores.csv"), pd.read_csv(out / "scores.csv")
    assert "random-small" not in set(families["run"]) and "random-tiny" in set(families["run"])
    assert only(scores, task="sentiment", run="random-small")["n_seeds"] == 3


def test_minimal_pairs_count_wins_and_pair_them_with_the_random_twin(tmp_path: Path) -> None:
    tables = aggregate(tmp_path)
    pairs, versus = tables["minimal_pairs"], tables["minimal_pairs_comparison"]
    clm = only(pairs, run="clm-tiny", kind="all")
    # 30 of 40 pairs won; random init wins 20 of the same pairs under the same (causal) score
    assert (clm["method"], clm["num_pairs"], clm["accuracy_mean"], clm["random_run"]) == (
        "sentence_log_likelihood",
        40,
        75.0,
        "random-tiny",
    )
    assert clm["minus_random_mean"] == pytest.approx(25.0) and clm["versus_random"] == "better"
    # per kind: clm wins 14 of the 20 swaps
    assert only(pairs, run="clm-tiny", kind="adjacent_swap")["accuracy_mean"] == 70.0
    assert math.isnan(only(pairs, run="random-tiny", kind="all", method="pseudo_log_likelihood")["minus_random_mean"])
    gap = only(versus, size="tiny", kind="all")
    assert (gap["mlm_method"], gap["clm_method"], gap["difference_mean"]) == (
        "pseudo_log_likelihood",
        "sentence_log_likelihood",
        pytest.approx(15.0),
    )
    assert gap["difference_mde"] > 0 and gap["winner"] in ("MLM", "tie")


def test_minimal_pairs_scored_on_other_pairs_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = write_fake_results(tmp_path)
    record = json.loads(tree.minimal_pairs[0].read_text())
    record["pair_ids"] = list(reversed(record["pair_ids"]))
    rewrite(tree.minimal_pairs[0], record)
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    assert "key 'pair_ids' differs" in capsys.readouterr().err and not (tmp_path / "tables").exists()


@pytest.mark.parametrize("kind", ["scores", "curve_scores", "bag_of_words", "minimal_pairs", "summaries", "task_stats"])
def test_a_result_edited_after_its_job_is_refused_before_any_table(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """One test score edited from its value to 99.0 once moved a task's test mean in the tables and the
    report; now every input is held to the sha256 its job recorded, naming the file, both hashes and the job."""
    tree = write_fake_results(tmp_path, curve_sizes=("tiny",))
    path = getattr(tree, kind)[0]
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text(path.read_text().replace('"test": ', '"test": 99.0, "was": ', 1) if kind.endswith("scores") else path.read_text() + " ")
    after = hashlib.sha256(path.read_bytes()).hexdigest()
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 2
    message = capsys.readouterr().err.strip()
    assert message == (
        f"error: {path}: sha256 {after} is not the {before} {path.parent / 'provenance.json'} recorded when it was written; "
        f"it changed since: rerun the job that made {path.parent} (snakemake -f <its output>)"
    )
    assert not (tmp_path / "tables").exists()


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda grid: [p for p in grid if p["seed"] != 2], "key 'grid' lacks seed 2 at learning rate 0.0001, which its job's config runs"),
        (
            lambda grid: [*grid, {**grid[0], "learning_rate": 0.1}],
            "key 'grid' holds learning rate 0.1 seed 0, which its job's config does not",
        ),
        (lambda grid: [{**grid[0], "test": grid[0]["test"] + 1}, *grid[1:]], "key 'grid[0].test_scores.accuracy' = "),
    ],
)
def test_a_grid_is_checked_against_its_job_s_config_and_its_two_copies_of_a_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit, problem: str
) -> None:
    tree = write_fake_results(tmp_path)
    scores = json.loads(tree.scores[0].read_text())
    rewrite(tree.scores[0], {**scores, "grid": edit(scores["grid"])})
    assert_one_line_error(tree, tmp_path, capsys, f"{tree.scores[0]}: {problem}")


def test_the_learning_rate_a_grid_chose_is_read_from_its_record_and_held_to_its_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """scores.json records the rate the study's rule takes and the seeds that chose it; the tables use
    that record, and a record whose choice is not what its selection seeds' validation scores give (or
    whose selection seeds are not its job's) is refused in one line."""
    tree = write_fake_results(tmp_path)
    record = json.loads(tree.scores[0].read_text())
    chosen = record["chosen_learning_rate"]
    assert chosen == best_on_validation((p["learning_rate"], p["validation"]) for p in record["grid"])
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 0
    scores = pd.read_csv(tmp_path / "tables" / "run_scores.csv")
    row = scores[(scores["task"] == record["task"]) & (scores["run"] == record["run"])].iloc[0]
    assert row["best_learning_rate"] == chosen
    other = next(p["learning_rate"] for p in record["grid"] if p["learning_rate"] != chosen)
    rewrite(tree.scores[0], {**record, "chosen_learning_rate": other})
    message = f"key 'chosen_learning_rate' = {other} is not the rate its selection seeds' validation scores choose ({chosen})"
    assert_one_line_error(tree, tmp_path / "again", capsys, f"{tree.scores[0]}: {message}")
    rewrite(tree.scores[0], {**record, "selection_seeds": [0]})
    assert_one_line_error(
        tree, tmp_path / "third", capsys, f"{tree.scores[0]}: key 'selection_seeds' = [0] is not the job's configured [0, 1, 2]"
    )
