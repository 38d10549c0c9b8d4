"""How the aggregate stage builds each result table declared in :mod:`.table_schema`, by its
name: a function of the sources and of the tables built before it (its ``needs``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

import pandas as pd

from pipeline.analysis.budget_trend import fit_table, trend_table
from pipeline.analysis.claims import check_claims
from pipeline.analysis.comparisons import baseline_table, comparison_table, in_order, objectives_table
from pipeline.analysis.contract import PUBLISHED_CLAIM_COLUMNS, Results
from pipeline.analysis.curves import curve_comparison_table, learning_curve_table
from pipeline.analysis.published_results import published_results
from pipeline.analysis.replicates import arm_names, pool_replicates
from pipeline.analysis.runs import reference_runs, run_placements
from pipeline.analysis.scoring import detail_table, family_table, lr_means_table, lr_sensitivity_table, score_table
from pipeline.analysis.sources import Sources
from pipeline.analysis.study_cells import curve_gaps, headline_gaps, our_cells, published_beside
from pipeline.analysis.zero_shot import minimal_pairs_comparison, minimal_pairs_table
from pipeline.external.published_tables import read_published_tables
from pipeline.registry import Registry

Built = Mapping[str, pd.DataFrame]
Build = Callable[[Sources, Built], pd.DataFrame]
BUILDS: Registry[Build] = Registry("table build")


def builds(name: str) -> Callable[[Build], Build]:
    """Register the decorated function as the build of the table ``name``."""

    def register(build: Build) -> Build:
        return BUILDS.add(name, build, __name__)

    return register


@builds("pretraining")
def pretraining(sources: Sources, built: Built) -> pd.DataFrame:
    return sources.pretraining


@builds("tasks")
def tasks(sources: Sources, built: Built) -> pd.DataFrame:
    return sources.tasks


@builds("finetune_grid")
def finetune_grid(sources: Sources, built: Built) -> pd.DataFrame:
    return in_order("finetune_grid", sources.grid.drop(columns="test_scores"), sources.pretraining)


@builds("run_scores")
def run_scores(sources: Sources, built: Built) -> pd.DataFrame:
    return in_order("run_scores", score_table(sources.grid, sources.confidence), sources.pretraining)


@builds("scores")
def scores(sources: Sources, built: Built) -> pd.DataFrame:
    return pool_replicates(built["run_scores"], ["task"], sources.confidence)


@builds("family_scores")
def family_scores(sources: Sources, built: Built) -> pd.DataFrame:
    # Families per replicate first, then pooled: a replicate that is good on one task of a
    # family tends to be good on the others, and pooling the family means keeps that.
    pooled = pool_replicates(family_table(built["run_scores"], sources.confidence), ["family"], sources.confidence)
    return in_order("family_scores", pooled, sources.pretraining)


@builds("outside_scores")
def outside_scores(sources: Sources, built: Built) -> pd.DataFrame:
    return score_table(sources.outside_grid, sources.confidence)


@builds("lr_means")
def lr_means(sources: Sources, built: Built) -> pd.DataFrame:
    return lr_means_table(built["finetune_grid"], sources.confidence)


@builds("lr_sensitivity")
def lr_sensitivity(sources: Sources, built: Built) -> pd.DataFrame:
    return in_order("lr_sensitivity", lr_sensitivity_table(sources.grid), sources.pretraining)


@builds("metric_details")
def metric_details(sources: Sources, built: Built) -> pd.DataFrame:
    return in_order("metric_details", detail_table(sources.grid, built["run_scores"], sources.confidence), sources.pretraining)


@builds("comparison")
def comparison(sources: Sources, built: Built) -> pd.DataFrame:
    table = comparison_table(built["scores"], built["family_scores"], sources.pretraining, sources.tasks, sources.confidence)
    return in_order("comparison", table, sources.pretraining)


@builds("baselines")
def baselines(sources: Sources, built: Built) -> pd.DataFrame:
    table = baseline_table(built["scores"], sources.tasks, sources.bag_of_words, sources.confidence)
    return in_order("baselines", table, sources.pretraining)


@builds("objectives")
def objectives(sources: Sources, built: Built) -> pd.DataFrame:
    # An arm's pooled row carries replicate 0's name, so the sections place replicate 0 only.
    pretraining = sources.pretraining
    first_replicates = pretraining[arm_names(pretraining["run_name"]) == pretraining["run_name"]]
    table = objectives_table(
        built["scores"],
        built["family_scores"],
        run_placements(first_replicates, sources.objective_params),
        reference_runs(first_replicates),
        sources.confidence,
    )
    return in_order("objectives", table, pretraining).astype({"section": str})


@builds("learning_curves")
def learning_curves(sources: Sources, built: Built) -> pd.DataFrame:
    table = learning_curve_table(sources.curve_grid, built["run_scores"], sources.pretraining, sources.confidence)
    return in_order("learning_curves", table, sources.pretraining)


@builds("curve_comparison")
def curve_comparison(sources: Sources, built: Built) -> pd.DataFrame:
    table = curve_comparison_table(
        sources.curve_grid, built["run_scores"], built["comparison"], sources.pretraining, sources.tasks, sources.confidence
    )
    return in_order("curve_comparison", table, sources.pretraining)


@builds("minimal_pairs")
def minimal_pairs(sources: Sources, built: Built) -> pd.DataFrame:
    kinds = {
        **dict(zip(sources.outside_grid["run"], sources.outside_grid["objective_kind"])),
        **sources.pretraining.set_index("run")["objective_kind"].to_dict(),
    }
    return minimal_pairs_table(sources.pair_outcomes, kinds, sources.confidence)


@builds("minimal_pairs_comparison")
def minimal_pairs_comparison_build(sources: Sources, built: Built) -> pd.DataFrame:
    return minimal_pairs_comparison(sources.pair_outcomes, built["minimal_pairs"], sources.confidence)


@builds("budget_trend")
def budget_trend(sources: Sources, built: Built) -> pd.DataFrame:
    tables = (built[name] for name in ("learning_curves", "curve_comparison", "comparison", "minimal_pairs", "minimal_pairs_comparison"))
    return trend_table(*tables, sources.pretraining, sources.confidence)


@builds("budget_fit")
def budget_fit(sources: Sources, built: Built) -> pd.DataFrame:
    return fit_table(built["budget_trend"], sources.confidence)


@functools.cache
def study_published(confidence: float) -> Results:
    """The study's published tables as the tables the claims read (built once per aggregate)."""
    return published_results(read_published_tables(), confidence)


@builds("published_claims")
def published_claims(sources: Sources, built: Built) -> pd.DataFrame:
    return check_claims(sources.claims, study_published(sources.confidence))[PUBLISHED_CLAIM_COLUMNS]


@builds("published_reference")
def published_reference(sources: Sources, built: Built) -> pd.DataFrame:
    tables = (built[name] for name in ("pretraining", "scores", "family_scores", "learning_curves"))
    return published_beside(read_published_tables(), our_cells(*tables, sources.objective_params, sources.protocols))


@builds("study_headline")
def study_headline(sources: Sources, built: Built) -> pd.DataFrame:
    return headline_gaps(built["comparison"], study_published(sources.confidence).tables["comparison"])


@builds("study_curve")
def study_curve(sources: Sources, built: Built) -> pd.DataFrame:
    return curve_gaps(study_published(sources.confidence).tables["curve_comparison"])


@builds("claims")
def claims(sources: Sources, built: Built) -> pd.DataFrame:
    return check_claims(sources.claims, Results(dict(built), sources.confidence, sources.objective_params, sources.measured_by))
