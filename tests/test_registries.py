"""Every registry's entries are complete and agree with the registries they name: an entry
that a config can reach but that something downstream cannot place fails here, not mid-run."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import pytest

from pipeline.data.sources import READERS, reader_function
from pipeline.metrics import METRICS
from pipeline.objectives import kind_of, registered_kinds
from pipeline.pretrain.losses import LOSSES
from pipeline.report.claims.registry import KINDS
from pipeline.report.runs import SECTIONS


@pytest.mark.parametrize("kind", registered_kinds())
def test_every_objective_kind_is_labelled_placed_and_trainable(kind: str) -> None:
    registered = kind_of(kind)
    assert registered.kind == kind and registered.label and registered.section in SECTIONS
    assert registered.loss in LOSSES, f"{kind}: loss {registered.loss!r} is not registered"
    params = registered.params_type
    assert dataclasses.is_dataclass(params) and params.__dataclass_params__.frozen
    defaults = params()  # every field defaulted: the canonical setting
    assert 0 < defaults.expected_loss_fraction(128) <= 1


def test_objective_labels_are_distinct() -> None:
    labels = [kind_of(kind).label for kind in registered_kinds()]
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_is_named_as_registered_and_scores_in_points(name: str) -> None:
    metric = METRICS[name]
    assert metric.name == name and metric.headline and len(metric.inputs) == 2


@pytest.mark.parametrize("name", sorted(READERS))
def test_every_data_reader_resolves_to_a_function(name: str) -> None:
    assert callable(reader_function(name))
    assert importlib.import_module(f"pipeline.data.sources.{READERS[name].module}")


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_claim_check_kind_has_a_parameter_dataclass_and_a_check(name: str) -> None:
    kind = KINDS[name]
    assert dataclasses.is_dataclass(kind.params) and kind.reads
    assert list(inspect.signature(kind.check).parameters) == ["results", "params"]
