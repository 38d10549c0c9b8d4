"""The hub loader on local files with the hub's schemas (SST-2, MNLI, CoNLL-2003, SQuAD v2, MS MARCO,
FineWeb-Edu); no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import HubSpec
from pipeline.data.sources.hub import load_rows
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
    spec = HubSpec(path="json", data_files={"train": str(FIXTURES / "fineweb_edu.jsonl")}, fields={"text": "text", "id": "id"})
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
    (tmp_path / "empty.jsonl").write_text("")  # datasets' own error: a bare StopIteration
    spec = HubSpec(path="json", data_files={"train": str(tmp_path / "empty.jsonl")})
    with pytest.raises(PipelineError) as error:
        list(load_rows(spec, "x"))
    assert str(error.value) == f"x.hub: {tmp_path / 'empty.jsonl'}: file is empty (data of split 'train')"


# ---------------------------------------------------- the paper datasets' schemas

CONLL_TAGS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")


def test_mnli_schema_gives_a_sentence_pair_with_named_labels():
    spec = HubSpec(
        path="json",
        data_files={"validation_matched": str(FIXTURES / "mnli_validation_matched.jsonl")},
        splits={"test": "validation_matched"},
        fields={"text": "premise", "text_pair": "hypothesis", "label": "label"},
        class_names={"label": ("entailment", "neutral", "contradiction")},
    )
    rows = list(load_rows(spec, "x"))
    assert rows[1] == {
        "split": "test",
        "id": "validation_matched/1",
        "text": "This site includes a list of all award winners and a searchable database of Government Executive articles.",
        "text_pair": "The Government Executive articles housed on the website are not able to be searched.",
        "label": "contradiction",
    }
    assert [r["label"] for r in rows] == ["neutral", "contradiction", "entailment"]


def test_conll2003_schema_keeps_tokens_as_a_list_and_names_the_tags():
    spec = HubSpec(
        path="json",
        data_files={"train": str(FIXTURES / "conll2003_train.jsonl")},
        fields={"id": "id", "tokens": "tokens", "tags": "ner_tags"},
        class_names={"tags": CONLL_TAGS},
    )
    rows = list(load_rows(spec, "x"))
    assert rows[0] == {
        "split": "train",
        "id": "train/0",
        "tokens": ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."],
        "tags": ["B-ORG", "O", "B-MISC", "O", "O", "O", "B-MISC", "O", "O"],
    }
    assert [r["tags"] for r in rows[1:]] == [["B-PER", "I-PER"], ["B-LOC", "O"]]


def test_a_sequence_of_class_labels_becomes_names_without_class_names(tmp_path):
    """The hub's CoNLL-2003 carries Sequence(ClassLabel) features; so does parquet."""
    import datasets

    features = datasets.Features(
        {"tokens": datasets.Sequence(datasets.Value("string")), "ner_tags": datasets.Sequence(datasets.ClassLabel(names=list(CONLL_TAGS)))}
    )
    table = {"tokens": [["Peter", "Blackburn"]], "ner_tags": [[1, 2]]}
    datasets.Dataset.from_dict(table, features=features).to_parquet(tmp_path / "train.parquet")
    spec = HubSpec(path="parquet", data_files={"train": str(tmp_path / "train.parquet")}, fields={"tokens": "tokens", "tags": "ner_tags"})
    assert list(load_rows(spec, "x")) == [{"split": "train", "id": "train/0", "tokens": ["Peter", "Blackburn"], "tags": ["B-PER", "I-PER"]}]


def test_squad_v2_schema_keeps_the_answers_mapping():
    spec = HubSpec(
        path="json",
        data_files={"validation": str(FIXTURES / "squad_v2_validation.jsonl")},
        splits={"test": "validation"},
        fields={"id": "id", "question": "question", "context": "context", "answers": "answers"},
    )
    rows = list(load_rows(spec, "x"))
    assert rows[0]["id"] == "validation/56ddde6b9a695914005b9628"
    assert rows[0]["answers"] == {"text": ["France", "France"], "answer_start": [159, 159]}
    assert rows[1]["answers"] == {"text": [], "answer_start": []}  # unanswerable
    assert rows[1]["question"] == "Who gave their name to Normandy in the 1000's and 1100's"


def test_ms_marco_style_query_positive_pairs():
    spec = HubSpec(
        path="json", data_files={"train": str(FIXTURES / "msmarco_train.jsonl")}, fields={"query": "query", "document": "positive"}
    )
    rows = list(load_rows(spec, "x"))
    assert rows[1] == {
        "split": "train",
        "id": "train/1",
        "query": "how long to boil an egg",
        "document": "Boil the eggs for six minutes for a soft yolk and ten minutes for a hard one.",
    }


def test_a_dataset_repository_s_loading_script_never_runs(tmp_path):
    """A hub source is untrusted: a local (or hub) dataset that ships a loading script is
    refused in one line, and the script does not run (datasets no longer runs them)."""
    marker = tmp_path / "ran"
    repository = tmp_path / "planted"
    repository.mkdir()
    (repository / "planted.py").write_text(f"from pathlib import Path\n\nPath({str(marker)!r}).touch()\n")
    with pytest.raises(PipelineError) as error:
        list(load_rows(HubSpec(path=str(repository)), "x"))
    assert (
        str(error.value)
        == "x.hub: cannot read '" + str(repository) + "' split 'train': Dataset scripts are no longer supported, but found planted.py"
    )
    assert not marker.exists()


def test_local_parquet_is_read_a_batch_at_a_time_with_the_rows_and_ids_datasets_gives(tmp_path):
    """FineWeb-Edu's shape: several Parquet files of many row groups. Listed files are read with
    pyarrow's batch reader (flat memory, bench/data_stage.py); the same files named by a glob go
    through datasets' streaming: both give the same rows and ids, ClassLabel names included, and
    shard by file the same way."""
    import datasets

    features = datasets.Features(
        {"id": datasets.Value("string"), "text": datasets.Value("string"), "label": datasets.ClassLabel(names=["a", "b"])}
    )
    files = []
    for number in range(3):
        table = {
            "id": [f"d{number}-{i}" for i in range(2500)],
            "text": [f"text {number} {i}" for i in range(2500)],
            "label": [i % 2 for i in range(2500)],
        }
        path = tmp_path / f"{number:05d}.parquet"
        datasets.Dataset.from_dict(table, features=features).to_parquet(path, batch_size=700)  # 4 row groups a file
        files.append(str(path))
    fields = {"text": "text", "label": "label"}
    listed = HubSpec(path="parquet", data_files={"train": files}, fields=fields)
    globbed = HubSpec(path="parquet", data_files={"train": str(tmp_path / "*.parquet")}, fields=fields)
    for shard in (None, (2, 0), (2, 1)):
        ours = list(load_rows(listed, "x", shard=shard))
        assert ours == list(load_rows(globbed, "x", shard=shard))
        assert len(ours) == {None: 7500, (2, 0): 5000, (2, 1): 2500}[shard]
    assert ours[0] == {"split": "train", "id": "train/2-0", "text": "text 2 0", "label": "a"}


def test_bare_class_ids_take_the_declared_names_and_one_outside_them_is_refused_naming_the_row(tmp_path):
    """OntoNotes' tags as the hub's Parquet conversion gives them: int32 ids, names only in its label map."""
    import datasets

    features = datasets.Features({"tokens": datasets.List(datasets.Value("string")), "tags": datasets.List(datasets.Value("int32"))})
    table = {"tokens": [["Phil", "Rosen"], ["Boston"]], "tags": [[1, 2], [3]]}
    datasets.Dataset.from_dict(table, features=features).to_parquet(tmp_path / "train.parquet")
    fields = {"tokens": "tokens", "tags": "tags"}
    spec = HubSpec(
        path="parquet", data_files={"train": str(tmp_path / "train.parquet")}, fields=fields, class_names={"tags": ("O", "B-P", "I-P")}
    )
    rows = load_rows(spec, "x")
    assert next(rows)["tags"] == ["B-P", "I-P"]
    with pytest.raises(PipelineError) as error:
        next(rows)
    assert str(error.value) == f"x.hub: {tmp_path / 'train.parquet'}:2: column 'tags': class id 3 is outside its 3 names (0-2)"


def test_class_names_that_differ_from_the_data_s_own_are_refused(tmp_path):
    import datasets

    features = datasets.Features(
        {"tokens": datasets.List(datasets.Value("string")), "ner": datasets.List(datasets.ClassLabel(names=list(CONLL_TAGS)))}
    )
    datasets.Dataset.from_dict({"tokens": [["EU"]], "ner": [[4]]}, features=features).to_parquet(tmp_path / "train.parquet")
    fields = {"tokens": "tokens", "tags": "ner"}
    spec = HubSpec(
        path="parquet",
        data_files={"train": str(tmp_path / "train.parquet")},
        fields=fields,
        class_names={"tags": tuple(sorted(CONLL_TAGS))},
    )
    with pytest.raises(
        PipelineError, match=r"^x\.hub\.class_names\.tags: \['B-LOC', .*\] differ from the data's ClassLabel names \['O', 'B-PER'"
    ):
        list(load_rows(spec, "x"))
