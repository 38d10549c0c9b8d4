"""The result tables' schema: every table is declared once (analysis/table_schema.py) and built by
name (analysis/table_builds.py); a new one reaches the CSVs, the claim checks' Results and its
report section with no edit anywhere else."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pytest
from report_fakes import write_fake_results

from pipeline.__main__ import main
from pipeline.analysis.inputs import SUMMARY_FIELDS
from pipeline.analysis.table_builds import BUILDS
from pipeline.analysis.table_schema import SCHEMAS, TableSchema, build_order
from pipeline.finetune.grid_result import GridResult
from pipeline.report.displays import DISPLAYS, Display
from pipeline.report.render import report_sections
from pipeline.report.tables import Table, row
from tests.conftest import REPO

EVERY_SECTION = {anchor for anchor, _ in report_sections([], has_objectives=True, has_outside=True, has_study=True)}


def test_every_table_has_columns_a_description_known_needs_and_one_build() -> None:
    assert len(SCHEMAS) >= 19
    for name, table in SCHEMAS.items():
        assert table.name == name and table.description and table.columns
        assert len(set(table.columns)) == len(table.columns), f"{name}: a column twice"
        assert set(table.needs) <= set(SCHEMAS), f"{name} needs an undeclared table"
    assert sorted(BUILDS) == sorted(SCHEMAS), set(BUILDS) ^ set(SCHEMAS)


# Each count of steps has one name wherever it is written: the config, the records and the tables.
STEP_COUNTS = {
    "budget_steps": "a config's whole step budget (pretraining, the zoo, continued pretraining)",
    "schedule_steps": "the steps of one run's learning-rate schedule",
    "trained_steps": "the optimizer steps a run trained (a pretraining run, a fine-tuning grid point)",
    "max_steps": "the most steps a fine-tuning run may train (its cap; an epoch may stop it first)",
    "num_warmup_steps": "a schedule's warmup",
    "num_decay_steps": "a schedule's decay",
    "checkpoint_steps": "the steps at which a run keeps a checkpoint",
    "first_stage_steps": "the steps a two-stage split trains its first objective",
    "resume_every_steps": "how often resumable state is written",
    "clm_steps": "a study cell's steps of CLM (the key of the study's two-stage tables)",
    "mlm_steps": "a study cell's steps of MLM (the same)",
    "cpt_steps": "a study cell's steps of continued pretraining (the key of its Tables 14-17)",
}


def test_each_count_of_steps_has_one_name_in_config_records_and_tables() -> None:
    """``num_steps`` once meant the schedule in the config, the steps trained in summary.json and
    a fine-tuning grid point, and the schedule again in learning_curves.csv."""
    schema = json.loads((REPO / "config" / "schema.json").read_text())
    config_keys = {key for key, _ in walk_properties(schema)}
    table_columns = {column for table in SCHEMAS.values() for column in table.columns}
    record_fields = {field.name for field in dataclasses.fields(GridResult)} | set(SUMMARY_FIELDS)
    for where, names in (("config", config_keys), ("tables", table_columns), ("records", record_fields)):
        assert "num_steps" not in names, where
        assert {name for name in names if name.endswith("_steps")} <= set(STEP_COUNTS), where


def walk_properties(schema: Mapping) -> list[tuple[str, Mapping]]:
    """Every (key, sub-schema) of a JSON schema's properties, nested and under its definitions."""
    found = []
    for key, value in schema.items():
        if key == "properties":
            found += [(name, sub) for name, sub in value.items()]
        if isinstance(value, Mapping):
            found += walk_properties(value)
    return found


def test_every_display_goes_in_a_section_the_report_has() -> None:
    for name, display in DISPLAYS.items():
        assert display.section in EVERY_SECTION, f"{name}: no report section {display.section!r}"


def test_every_display_named_by_a_table_is_rendered_and_every_rendered_one_is_named() -> None:
    """A table names its displays (the aggregate side imports no rendering); the report renders
    exactly those: none missing, none left over that no table shows."""
    named = [display for table in SCHEMAS.values() for display in table.displays]
    assert sorted(named) == sorted(DISPLAYS), set(named) ^ set(DISPLAYS)


def test_a_table_is_built_after_every_table_it_needs() -> None:
    order = [table.name for table in build_order()]
    assert sorted(order) == sorted(SCHEMAS)
    for table in build_order():
        assert all(order.index(need) < order.index(table.name) for need in table.needs)


def test_needs_that_cannot_be_met_are_refused() -> None:
    orphan = TableSchema("orphan", "never built", ("a",), ("no_such_table",))
    with SCHEMAS.extra(orphan.name, orphan), pytest.raises(ValueError, match="orphan"):
        build_order()


def test_a_table_declared_or_built_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="result table 'scores' registered twice"):
        SCHEMAS.add("scores", SCHEMAS["scores"])
    with pytest.raises(ValueError, match="table build 'scores' registered twice"):
        BUILDS.add("scores", BUILDS["scores"])


def runs_per_size(sources: object, built: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    counts = built["pretraining"].groupby("size")["run"].count()
    return pd.DataFrame({"size": counts.index, "runs": counts.to_numpy()})


def runs_per_size_display(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    rows = tuple(row(item["size"], f"{item['runs']} runs") for _, item in frames["runs_per_size"].iterrows())
    return [Table("Pretrained runs per size (a table registered by the test)", ("Size", "Runs"), rows)]


def test_a_new_table_is_one_declaration_one_build_and_one_display(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new entry of pipeline/analysis/table_schema.py, its function in table_builds.py and its
    entry in pipeline/report/displays.py do, done here in the test: the table is built, written, read
    back and shown in its section."""
    table = TableSchema("runs_per_size", "per size: how many runs were pretrained", ("size", "runs"), ("pretraining",), ("runs_per_size",))
    monkeypatch.setitem(DISPLAYS, "runs_per_size", Display("pretraining", 1, runs_per_size_display))
    tree = write_fake_results(tmp_path)
    with SCHEMAS.extra(table.name, table), BUILDS.extra(table.name, runs_per_size):
        assert main(tree.aggregate_argv(tmp_path / "tables")) == 0
        written = pd.read_csv(tmp_path / "tables/runs_per_size.csv")
        assert list(written.columns) == ["size", "runs"] and written["runs"].sum() == len(tree.summaries)
        assert main(tree.report_argv(tmp_path / "tables", tmp_path / "reports")) == 0
    html = (tmp_path / "reports/replication.html").read_text()
    section = html[html.index('<section id="pretraining">') : html.index('<section id="finetuning">')]
    assert "Pretrained runs per size (a table registered by the test)" in section
    assert f"{written['runs'].iloc[0]} runs" in section


def test_a_table_built_with_other_columns_than_declared_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wrong = TableSchema("runs_per_size", "per size", ("size", "count"), ("pretraining",))
    tree = write_fake_results(tmp_path)
    with SCHEMAS.extra(wrong.name, wrong), BUILDS.extra(wrong.name, runs_per_size):
        assert main(tree.aggregate_argv(tmp_path / "tables")) != 0
    assert "'runs_per_size': built with columns ['size', 'runs'], declared with ['size', 'count']" in capsys.readouterr().err
    assert not (tmp_path / "tables").exists()
