"""The rerun contract: a stage's code hash covers every file it can run, found from its imports,
so a change reruns exactly the stages that run the changed file (milliseconds, no Snakemake)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.__main__ import STAGES
from pipeline.code_graph import PACKAGE_ROOT, closure, closure_files, import_graph, package_modules, reachable, stage_code

GRAPH = import_graph()


def entry(stage: str) -> str:
    return STAGES[stage][0]


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_stage_s_hash_covers_every_module_it_imports(stage):
    files = set(closure_files(entry(stage)))
    covered = {module for module, path in package_modules().items() if path in files}
    assert reachable(GRAPH, entry(stage)) <= covered


def test_registries_that_load_their_package_by_name_depend_on_all_of_it():
    modules = package_modules()
    for stage, package in [("pretrain", "pipeline.objectives"), ("pretrain", "pipeline.pretrain.losses"),
                           ("finetune", "pipeline.finetune.task_types"), ("prepare-task", "pipeline.data.sources")]:  # fmt: skip
        members = {module for module in modules if module.startswith(package + ".")}
        assert members and members <= closure(GRAPH, entry(stage)), (stage, package)


def test_the_report_s_template_is_part_of_its_code():
    assert PACKAGE_ROOT / "report" / "templates" / "replication.html.j2" in closure_files(entry("report"))


def copy_of_the_package(tmp_path: Path) -> Path:
    root = tmp_path / "pipeline"
    shutil.copytree(PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def changed_stages(root: Path, relative: str) -> set[str]:
    """The stages whose hash changes when ``relative`` (a file under the package) changes."""
    before = {stage: stage_code(entry(stage), root) for stage in STAGES}
    with open(root / relative, "a") as handle:
        handle.write("\n# changed\n")
    return {stage for stage in STAGES if stage_code(entry(stage), root) != before[stage]}


def test_a_change_in_fine_tuning_s_framing_reruns_the_bag_of_words(tmp_path):
    """The bag of words builds its features through finetune/framing.py (the hand-kept map
    left it out, so a framing change left its results stale)."""
    changed = changed_stages(copy_of_the_package(tmp_path), "finetune/framing.py")
    assert {"finetune", "bag-of-words"} <= changed
    assert not changed & {"fetch", "pretrain", "pack", "report", "aggregate"}


def test_a_change_in_one_objective_reruns_pretraining_not_the_data(tmp_path):
    changed = changed_stages(copy_of_the_package(tmp_path), "objectives/ul2.py")
    assert "pretrain" in changed and not changed & {"fetch", "prepare-task", "prepare-corpus", "pack", "train-tokenizer"}
