"""The claims file (``config/claims.yaml``): each claim's sentence and where it comes from,
and its check, a registered kind with strict parameters.

Read when the workflow is planned (:mod:`pipeline.workflow.configure`) and again by the aggregate
stage, so a typo in a claim's check stops ``snakemake -n`` with one line naming the
file, the claim and the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline import strict
from pipeline.analysis.claims.registry import KINDS
from pipeline.errors import PipelineError
from pipeline.files import read_yaml


@dataclass(frozen=True)
class ClaimEntry:
    """A claim as the YAML writes it; ``check`` is parsed by its kind."""

    id: str
    source: str  # a write-up in shared/seeds/, or "paper"
    claim: str  # the sentence
    measure: str  # what the harness must compute to check it
    status: str  # what the public record shows about the claim
    check: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    claim: str
    measure: str
    status: str
    kind: str  # a name in KINDS
    params: Any  # KINDS[kind].params, parsed


def parse_check(entry: ClaimEntry, where: str) -> tuple[str, Any]:
    """(kind, its parameters) of a claim's check block."""
    if "kind" not in entry.check:
        raise PipelineError(f"{where}.check.kind: missing required key (kinds: {', '.join(sorted(KINDS))})")
    kind = entry.check["kind"]
    if kind not in KINDS:
        raise PipelineError(f"{where}.check.kind: unknown kind {kind!r} (kinds: {', '.join(sorted(KINDS))})")
    params = {key: value for key, value in entry.check.items() if key != "kind"}
    return kind, strict.parse(KINDS[kind].params, params, f"{where}.check")


def read_claims(path: str | Path) -> list[Claim]:
    """Every claim of the file, its check parsed; a duplicate id is an error."""
    data = read_yaml(path, "claims file")
    if not isinstance(data, list):
        raise PipelineError(f"{path}: expected a list of claims")
    claims: list[Claim] = []
    for index, item in enumerate(data):
        name = item.get("id") if isinstance(item, dict) else None
        where = f"{path}: claim {name}" if isinstance(name, str) else f"{path}: claim [{index}]"
        entry = strict.parse(ClaimEntry, item, where)
        if any(claim.id == entry.id for claim in claims):
            raise PipelineError(f"{where}: id {entry.id!r} is used twice")
        kind, params = parse_check(entry, where)
        claims.append(Claim(entry.id, entry.source, entry.claim, entry.measure, entry.status, kind, params))
    return claims
