"""Every registry's entries are complete and agree with the registries they name: an entry
that a config can reach but that something downstream cannot place fails here, not mid-run."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import pytest

from pipeline.analysis.claims.registry import KINDS
from pipeline.analysis.runs import SECTIONS
from pipeline.data.sources import READERS, reader_function
from pipeline.metrics import METRICS
from pipeline.objectives import kind_of, registered_kinds
from pipeline.pretrain.losses import LOSSES


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


def test_a_registry_refuses_a_name_twice_naming_both_modules_and_an_unknown_name_listing_the_known() -> None:
    from pipeline.errors import PipelineError
    from pipeline.metrics import register
    from pipeline.registry import Registry

    twice = r"metric .accuracy. registered twice: in pipeline.metrics.accuracy and in (tests\.)?test_registries"
    with pytest.raises(ValueError, match=twice):
        register(METRICS["accuracy"])  # from this module, as a metric module registers its own
    with pytest.raises(PipelineError, match=r"unknown loss 'l2' \(registered: language_model, masked_lm_next_sentence, replaced_token"):
        LOSSES["l2"]
    families = Registry("family")
    with families.extra("one", 1):
        assert dict(families) == {"one": 1} and "one" in families and families.site("one") == "a test"
    assert "one" not in families and families.get("one") is None


def test_every_family_is_loaded_by_the_one_loader_and_each_member_registers_from_its_own_module() -> None:
    """No package keeps a list of its members: each family's __init__ calls load_members, and each
    entry names the module it came from."""
    from pipeline.finetune.task_types import TASK_TYPES
    from pipeline.objectives import OBJECTIVES

    families = {
        "objectives": OBJECTIVES,
        "pretrain.losses": LOSSES,
        "finetune.task_types": TASK_TYPES,
        "metrics": METRICS,
        "analysis.claims": KINDS,
    }
    for package, registry in families.items():
        init = importlib.import_module(f"pipeline.{package}").__file__
        assert "load_members(__name__, __path__)" in open(init).read(), package
        for name in registry:
            assert registry.site(name).startswith(f"pipeline.{package}."), (package, name, registry.site(name))
