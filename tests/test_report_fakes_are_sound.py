"""The fake result trees of tests/report_fakes.py hold what the report tests assume of them."""

from __future__ import annotations

import json
from pathlib import Path

from report_fakes import write_fake_results


def test_fake_tree_has_every_input(tmp_path: Path) -> None:
    tree = write_fake_results(tmp_path)
    assert len(tree.scores) == 2 * 3 * 2 and len(tree.summaries) == 4 and len(tree.logs) == 4


def test_fake_curves_are_written_inside_each_budget(tmp_path: Path) -> None:
    tree = write_fake_results(
        tmp_path,
        tasks=("sentiment",),
        sizes=("tiny",),
        zoo_sizes=("tiny",),
        curve_sizes=("tiny",),
        curve_runs=("clm", "clm50_mlm"),
        curve_steps=(150, 450),
    )
    steps = sorted((path.parts[-3], json.loads(path.read_text())["pretraining_step"]) for path in tree.curve_scores)
    assert steps == [("clm-tiny", 150), ("clm-tiny", 450), ("clm50_mlm-tiny", 450)]  # the second stage starts at 300


def test_fake_zoo_has_every_run_of_the_config(tmp_path: Path) -> None:
    tree = write_fake_results(tmp_path, sizes=("tiny",), zoo_sizes=("tiny",))
    assert len(tree.summaries) == 2 + 10 + 3 + 2 and len(tree.scores) == 2 * (len(tree.summaries) + 1)
    electra = json.loads((tmp_path / "results/pretrain/electra-tiny/summary.json").read_text())
    two_stage = json.loads((tmp_path / "results/pretrain/clm25_mlm-tiny/summary.json").read_text())
    assert electra["heldout_metric"]["name"] == "replaced_token_detection_gain"  # its own: its LM head never trains
    assert (two_stage["objective"], two_stage["first_step"], two_stage["started_from"]["run"]) == ("mlm", 150, "clm-tiny")
