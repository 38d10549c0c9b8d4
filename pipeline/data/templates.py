"""A task's ``templates``: fields built from a row's other fields with a format string, as
EncodEval builds its inputs (MNLI's ``"Premise: {premise}\\nHypothesis: {hypothesis}"`` as one
text, MS MARCO's ``"Query: {query}"``).

A placeholder is a bare field name (:func:`pipeline.config.data.placeholders` checks it when
the config is read). Templates run after the hub's columns are renamed (``fields``) and
before the task type checks the row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.config.data import placeholders
from pipeline.errors import PipelineError


def apply_templates(row: Mapping[str, Any], templates: Mapping[str, str], where: str) -> dict[str, Any]:
    """The row with each templated field (re)built from the row's fields as they were read."""
    built = dict(row)
    for field, template in templates.items():
        values = {}
        for name in placeholders(template):
            value = row.get(name)
            if not isinstance(value, str):
                raise PipelineError(f"{where}: template of {field!r} reads {name!r}, which the row has no text in")
            values[name] = value
        built[field] = template.format_map(values)
    return built
