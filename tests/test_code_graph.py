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
    for stage, package in [
        ("pretrain", "pipeline.objectives"),
        ("pretrain", "pipeline.pretrain.losses"),
        ("finetune", "pipeline.finetune.task_types"),
        ("prepare-task", "pipeline.data.sources"),
    ]:
        members = {module for module in modules if module.startswith(package + ".")}
        assert members and members <= closure(GRAPH, entry(stage)), (stage, package)


def test_the_report_s_template_is_part_of_its_code():
    assert PACKAGE_ROOT / "report" / "templates" / "replication.html.j2" in closure_files(entry("report"))


def copy_of_the_package(tmp_path: Path) -> Path:
    root = tmp_path / "pipeline"
    shutil.copytree(PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def changed_stages(root: Path, relative: str, edit=lambda text: text + "\nCHANGED_BY_THE_TEST = 1\n") -> set[str]:
    """The stages whose hash changes when ``edit`` (old text -> new) is made to ``relative`` (a file under the package)."""
    before = {stage: stage_code(entry(stage), root) for stage in STAGES}
    path = root / relative
    path.write_text(edit(path.read_text()))
    return {stage for stage in STAGES if stage_code(entry(stage), root) != before[stage]}


def test_prose_reruns_nothing_and_a_changed_constant_reruns_what_uses_it(tmp_path):
    """The hash is over each module's syntax tree without docstrings: a comment, a blank line or a
    docstring edit anywhere reruns no stage; a changed constant reruns every stage that imports it."""
    root = copy_of_the_package(tmp_path)
    assert changed_stages(root, "config/__init__.py", lambda text: text + "\n# a comment\n\n") == set()
    assert changed_stages(root, "finetune/framing.py", lambda text: text.replace('"""', '"""Reworded: ', 1)) == set()
    retrieval = changed_stages(
        root, "finetune/task_types/retrieval.py", lambda text: text.replace("TEMPERATURE = 0.05", "TEMPERATURE = 0.07")
    )
    assert "finetune" in retrieval and not retrieval & {"fetch", "prepare-corpus", "pack"}


def test_a_change_in_fine_tuning_s_framing_reruns_the_bag_of_words(tmp_path):
    """The bag of words builds its features through finetune/framing.py (the hand-kept map
    left it out, so a framing change left its results stale)."""
    changed = changed_stages(copy_of_the_package(tmp_path), "finetune/framing.py")
    assert {"finetune", "bag-of-words"} <= changed
    assert not changed & {"fetch", "pretrain", "pack", "report", "aggregate"}


def test_a_change_in_one_objective_reruns_pretraining_not_the_data(tmp_path):
    changed = changed_stages(copy_of_the_package(tmp_path), "objectives/ul2.py")
    assert "pretrain" in changed and not changed & {"fetch", "prepare-task", "prepare-corpus", "pack", "train-tokenizer"}
    # the shared example types live in a leaf (pipeline/example.py): the initial weights depend on no objective
    assert "initialize" not in changed
