"""The kinds of claim check: each a strict parameter dataclass and the function that judges it.

A claim in ``config/claims.yaml`` names its kind and gives the parameters beside its sentence:

    check: {kind: objective_gap, families: [SC, QA], leader: mlm, claimed_gap: [2.3, 5.7]}

The parameters are parsed with :func:`pipeline.strict.parse` when the workflow is planned,
so a typo in a key or a kind fails ``snakemake -n`` with one line. Parameters named
``claimed_*`` are the numbers the claim states; a test finds each in the claim's sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.analysis.claims.verdicts import Verdict
from pipeline.analysis.contract import Results
from pipeline.registry import Registry

Check = Callable[[Results, Any], Verdict]


@dataclass(frozen=True)
class CheckKind:
    params: type  # a frozen dataclass, parsed strictly from the claim's check block
    check: Check  # (results, params) -> verdict
    reads: str  # the table(s) it judges from, for the README and error messages


KINDS: Registry[CheckKind] = Registry("claim-check kind")


def register(name: str, params: type, reads: str) -> Callable[[Check], Check]:
    """Register ``check`` as the claim-check kind ``name`` with its parameter dataclass."""

    def add(check: Check) -> Check:
        KINDS.add(name, CheckKind(params, check, reads), check.__module__)
        return check

    return add


@dataclass(frozen=True)
class NotMeasured:
    """A claim whose measure needs runs or evaluations this harness does not produce."""

    needed: str  # what would be needed, for the report


@register("not_measured", NotMeasured, reads="nothing")
def check_not_measured(results: Results, params: NotMeasured) -> Verdict:
    return Verdict("not measured", "this harness does not produce the runs it needs", params.needed)
