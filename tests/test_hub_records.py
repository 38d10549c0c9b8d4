"""pipeline/external/published/hub_records.yaml: every record loads, its types mean what datasets
means by them (both ways), and a record that breaks its schema is one line naming the key."""

from __future__ import annotations

import pytest
import yaml

from pipeline.errors import PipelineError
from pipeline.external.hub_records import RECORDS, datasets_features, described, hub_records


def test_every_study_dataset_has_a_record_with_its_sources():
    records = hub_records()
    tasks = {record.task for record in records.datasets.values()} - {None}
    assert len(tasks) == 12
    for name, record in records.datasets.items():
        assert record.sources, name
        for part in record.parts:
            assert part.splits, name


def test_a_recorded_type_is_the_datasets_feature_it_names_and_back():
    for record in hub_records().datasets.values():
        for part in record.parts:
            for features in part.split_features().values():
                for column, kind in features.items():
                    names = part.label_names.get(column, ())
                    served = described(datasets_features(kind, names))
                    # a class label carries its names; bare ids (OntoNotes' int32 tags) name none of their own
                    assert served == (kind, names if "class_label" in str(kind) else ()), column


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["datasets"]["sst2"]["parts"][0]["label_names"].clear(),
            "features.label: a class_label needs its names under label_names",
        ),
        (lambda d: d["datasets"]["sst2"]["parts"][0]["features"].update(idx="integer"), "features.idx: 'integer' is not a feature type"),
        (lambda d: d["datasets"]["sst2"]["parts"][0]["first_row"]["row"].pop("idx"), "first_row: columns ['label', 'sentence'] are not"),
    ],
)
def test_a_broken_record_is_refused_naming_its_key(tmp_path, edit, message):
    data = yaml.safe_load(RECORDS.read_text())
    edit(data)
    broken = tmp_path / "hub_records.yaml"
    broken.write_text(yaml.safe_dump(data))
    with pytest.raises(
        PipelineError, match=r"^hub_records\.yaml\.datasets\.sst2\.parts\[0\]: " + message.replace("[", r"\[").replace("]", r"\]")
    ):
        hub_records(broken)
