"""A new rule touches at most four places, the ones docs/extending.md's "A rule" names: its
outputs and jobs (pipeline/workflow/targets.py), its registration (pipeline/workflow/rule_params.py:
stage, params, the registry members its jobs use, its kind of GPU job), its stage
(pipeline/__main__.py) and the rule itself (rules/<stage>.smk). What used to be a list per rule
elsewhere (the GPU rules, the registry members a job uses) is derived from the registration."""

from __future__ import annotations

import re

from pipeline.workflow import job_code, job_resources, result_manifest
from pipeline.workflow.rule_params import RULES
from tests.conftest import REPO

PLACES = {"pipeline/workflow/targets.py", "pipeline/workflow/rule_params.py", "pipeline/__main__.py", "rules/<stage>.smk"}


def rule_section() -> str:
    text = (REPO / "docs" / "extending.md").read_text()
    return text[text.index("## A rule") :].split("\n## ", 1)[0]


def test_the_docs_name_the_four_places_a_rule_touches_and_each_exists() -> None:
    named = set(re.findall(r"`((?:pipeline|rules)/[\w/<>.]+\.(?:py|smk))`", rule_section()))
    assert named == PLACES
    assert all((REPO / place).exists() for place in PLACES - {"rules/<stage>.smk"})


def test_no_module_beside_the_registration_lists_rules() -> None:
    """job_code, job_resources and the result manifest name no rule: a rule declares what they need."""
    for module in (job_code, job_resources, result_manifest):
        source = open(module.__file__).read()
        named = [rule for rule in RULES if re.search(rf"""["']{rule}["']""", source)]
        assert named == [], f"{module.__name__} names rules {named}"
