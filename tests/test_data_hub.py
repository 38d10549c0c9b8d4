"""The hub loader on local files with the hub's schemas (SST-2, FineWeb-Edu); no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import HubSpec
from pipeline.data.hub import load_rows
from pipeline.errors import PipelineError

FIXTURES = Path(__file__).parent / "fixtures" / "data"
SST2_FIELDS = {"text": "sentence", "label": "label"}


def sst2_spec(**overrides) -> HubSpec:
    values = {
        "path": "json",
        "data_files": {
            "train": str(FIXTURES / "sst2_train.jsonl"),
            "validation": str(FIXTURES / "sst2_validation.jsonl"),
        },
        "splits": {"train": "train", "test": "validation"},
        "fields": SST2_FIELDS,
    }
    return HubSpec(**{**values, **overrides})


def test_sst2_schema_maps_columns_and_splits():
    rows = list(load_rows(sst2_spec(), "tasks.sst2.data"))
    assert len(rows) == 9
    assert rows[0] == {
        "split": "train",
        "id": "train/0",
        "text": "hide new secretions from the parental units ",
        "label": "0",
    }
    assert rows[-1] == {"split": "test", "id": "validation/2", "text": "the greatest musicians ", "label": "1"}


def test_max_rows_is_per_split_from_the_start():
    rows = list(load_rows(sst2_spec(max_rows=2), "x"))
    assert [r["id"] for r in rows] == ["train/0", "train/1", "validation/0", "validation/1"]


def test_class_labels_become_their_names(tmp_path):
    import datasets

    features = datasets.Features(
        {
            "idx": datasets.Value("int32"),
            "sentence": datasets.Value("string"),
            "label": datasets.ClassLabel(names=["negative", "positive"]),
        }
    )
    table = {"idx": [0, 1], "sentence": ["a gem", "a dud"], "label": [1, 0]}
    datasets.Dataset.from_dict(table, features=features).to_parquet(tmp_path / "validation.parquet")
    spec = HubSpec(
        path="parquet",
        data_files={"validation": str(tmp_path / "validation.parquet")},
        splits={"test": "validation"},
        fields=SST2_FIELDS,
    )
    assert [r["label"] for r in load_rows(spec, "x")] == ["positive", "negative"]


def test_fineweb_edu_schema_with_its_id_column():
    spec = HubSpec(
        path="json", data_files={"train": str(FIXTURES / "fineweb_edu.jsonl")}, fields={"text": "text", "id": "id"}
    )
    rows = list(load_rows(spec, "corpus.documents[0]"))
    assert [r["id"] for r in rows] == ["train/<urn:uuid:0001>", "train/<urn:uuid:0002>", "train/<urn:uuid:0003>"]
    assert rows[1]["text"].startswith("Photosynthesis lets plants")
    assert set(rows[0]) == {"split", "id", "text"}


def test_a_missing_column_names_the_columns_there_are():
    spec = HubSpec(path="json", data_files={"train": str(FIXTURES / "fineweb_edu.jsonl")}, fields={"text": "content"})
    with pytest.raises(PipelineError, match=r"corpus.hub.fields: no column 'content' \(columns: dump, file_path, id, "):
        list(load_rows(spec, "corpus"))


def test_a_missing_split_or_file_is_one_line_error(tmp_path):
    with pytest.raises(PipelineError, match=r"x.hub: cannot read 'json' split 'test': Bad split: test"):
        list(load_rows(sst2_spec(splits={"test": "test"}), "x"))
    spec = HubSpec(path="json", data_files={"train": str(tmp_path / "absent.jsonl")})
    with pytest.raises(PipelineError, match=r"x.hub: cannot read 'json' split 'train': .*absent.jsonl"):
        list(load_rows(spec, "x"))
