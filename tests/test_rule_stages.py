"""Each rule runs the stage its params are hashed for: the stage named in its shell command
(``python -m pipeline <stage>``) is the one ``rule_params`` registers it with, whose code hash
decides when its jobs rerun. Mapping a rule to another stage's code once passed every rerun test."""

from __future__ import annotations

import re

import pytest

from pipeline.__main__ import STAGES
from pipeline.workflow.rule_params import RULES
from tests.conftest import REPO, run_snakemake


def stages_run(stdout: str) -> dict[str, set[str]]:
    """rule -> the stages its jobs' shell commands run, from a dry run with -p."""
    found: dict[str, set[str]] = {}
    rule = None
    for line in stdout.splitlines():
        if line.startswith(("rule ", "localrule ")) and line.endswith(":"):
            rule = line.split(" ", 1)[1][:-1]
        elif line.startswith("Shell command: ") and rule is not None:
            stages = [stage for stage in re.findall(r"-m pipeline ([a-z-]+)", line) if stage in STAGES]
            if stages:  # `all` has no command
                found.setdefault(rule, set()).update(stages)
    return found


@pytest.mark.parametrize("configs", [(REPO / "config" / "default.yaml",), (REPO / "config" / "paper.yaml",)], ids=["default", "paper"])
def test_every_rule_runs_the_stage_its_code_hash_is_of(configs, tmp_path):
    planned = run_snakemake(tmp_path, configs, "-n", "-p")
    assert planned.returncode == 0, planned.stderr[-2000:]
    found = stages_run(planned.stdout)
    assert found, "no shell command in the dry run"
    for rule, stages in sorted(found.items()):
        assert stages == {RULES[rule].stage}, f"rule {rule} runs {sorted(stages)}, its params hash stage {RULES[rule].stage!r}"
