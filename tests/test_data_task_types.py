"""prepare-task per task type: the paper datasets' hub schemas end to end, row checks
that name the task, row and field, duplicates, baselines and the needle assembly."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pipeline.__main__ import main
from pipeline.data.needle import needle_rows
from pipeline.data.task_rows import TASK_TYPES
from pipeline.errors import PipelineError

FIXTURES = Path(__file__).parent / "fixtures" / "data"
CONLL_TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


def write_jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def fixture_rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines()]


def prepare(tmp_path: Path, task_type: str, hub: dict, name: str = "t") -> int:
    spec = {
        "family": "SC",
        "type": task_type,
        "metric": "accuracy",
        "description": "A test task.",
        "data": {"reader": "hf", "hub": hub},
    }
    arguments = ["prepare-task", "--name", name, "--spec", json.dumps(spec), "--sources", str(tmp_path)]
    return main([*arguments, "--out", str(tmp_path / name)])


def read_split(tmp_path: Path, split: str, name: str = "t") -> list[dict]:
    return [json.loads(line) for line in (tmp_path / name / f"{split}.jsonl").read_text().splitlines()]


def stats_of(tmp_path: Path, name: str = "t") -> dict:
    return json.loads((tmp_path / name / "stats.json").read_text())


def one_file_per_split(tmp_path: Path, rows: list[dict]) -> dict[str, str]:
    """Hub data files giving row i to our split i (train, validation, test), so tiny tests need no hashing."""
    return {split: write_jsonl(tmp_path / f"{split}.jsonl", [row]) for split, row in zip(("train", "validation", "test"), rows)}


def hub_spec(files: dict[str, str], fields: dict[str, str], **extra) -> dict:
    return {"path": "json", "data_files": files, "splits": {s: s for s in files}, "fields": fields, **extra}


def test_token_classification_from_the_conll2003_schema(tmp_path):
    files = one_file_per_split(tmp_path, fixture_rows("conll2003_train.jsonl"))
    hub = hub_spec(files, {"id": "id", "tokens": "tokens", "tags": "ner_tags"}, class_names={"tags": CONLL_TAGS})
    assert prepare(tmp_path, "token_classification", hub) == 0
    stats = stats_of(tmp_path)
    assert stats["labels"] == list(CONLL_TAGS)  # every declared name, in the source's id order
    assert read_split(tmp_path, "train") == [
        {
            "id": "train/0",
            "tokens": ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."],
            "tags": [3, 0, 7, 0, 0, 0, 7, 0, 0],  # the source's own ids
        }
    ]
    assert read_split(tmp_path, "test") == [{"id": "test/2", "tokens": ["BRUSSELS", "1996-08-22"], "tags": [5, 0]}]
    assert stats["label_counts"]["validation"] == {name: int(name in ("B-PER", "I-PER")) for name in CONLL_TAGS}
    assert (stats["majority_label"], stats["majority_test_score"]) == ("O", 0.0)


def test_extractive_qa_from_the_squad_v2_schema_moves_answers_with_the_cleaning(tmp_path):
    squad = fixture_rows("squad_v2_validation.jsonl")
    train = [{**squad[0], "id": "a", "question": "Which region is in France?", "answers": {"text": ["Normandy"], "answer_start": [137]}}]
    files = {
        "train": write_jsonl(tmp_path / "train.jsonl", train),
        "validation": write_jsonl(tmp_path / "validation.jsonl", [{**squad[1], "id": "b", "question": "Who?"}]),
        "test": str(FIXTURES / "squad_v2_validation.jsonl"),
    }
    hub = hub_spec(files, {"id": "id", "question": "question", "context": "context", "answers": "answers"})
    assert prepare(tmp_path, "extractive_qa", hub) == 0
    test = read_split(tmp_path, "test")
    assert [r["answers"] for r in test[:2]] == [
        {"text": ["France", "France"], "answer_start": [159, 159]},
        {"text": [], "answer_start": []},
    ]
    # double spaces collapse: "Rollo" moves from 27 to 24; " Rollo" loses its space
    assert test[2] == {
        "id": "test/56ddde6b9a695914005b9629",
        "question": "Who led the Normans?",
        "context": "The Normans were led by Rollo, who agreed to defend Rouen.",
        "answers": {"text": ["Rollo", "Rollo"], "answer_start": [24, 24]},
    }
    assert read_split(tmp_path, "train")[0]["answers"] == {"text": ["Normandy"], "answer_start": [137]}
    stats = stats_of(tmp_path)
    assert stats["labels"] == []
    assert stats["label_counts"]["test"] == {"answerable": 2, "unanswerable": 1}
    assert (stats["majority_label"], stats["majority_test_score"]) == ("no answer", 33.3333)  # abstaining scores 1 of 3


def test_a_sentence_pair_task_from_the_mnli_schema(tmp_path):
    files = one_file_per_split(tmp_path, fixture_rows("mnli_validation_matched.jsonl"))
    fields = {"text": "premise", "text_pair": "hypothesis", "label": "label"}
    hub = hub_spec(files, fields, class_names={"label": ["entailment", "neutral", "contradiction"]})
    assert prepare(tmp_path, "sequence_classification", hub) == 0
    assert read_split(tmp_path, "train") == [
        {"id": "train/0", "text": "The new rights are nice enough", "text_pair": "Everyone really likes the newest benefits", "label": 1}
    ]
    assert stats_of(tmp_path)["labels"] == ["entailment", "neutral", "contradiction"]  # the declared order: GLUE's ids


def test_retrieval_from_query_positive_pairs_and_its_random_ranking_baseline(tmp_path):
    rows = fixture_rows("msmarco_train.jsonl")
    files = one_file_per_split(tmp_path, rows)
    assert prepare(tmp_path, "retrieval", hub_spec(files, {"query": "query", "document": "positive"})) == 0
    assert read_split(tmp_path, "validation") == [
        {"id": "validation/0", "query": "how long to boil an egg", "document": rows[1]["positive"]}
    ]
    stats = stats_of(tmp_path)
    assert stats["label_counts"] == {"train": {}, "validation": {}, "test": {}}
    assert (stats["majority_label"], stats["majority_test_score"]) == (None, 100.0)  # one test document: rank 1


def test_retrieval_rows_sharing_a_query_or_a_document_are_duplicates():
    retrieval = TASK_TYPES["retrieval"]
    first = retrieval.prepare({"query": "Q one", "document": "D one"}, "w")
    same_document = retrieval.prepare({"query": "Q two", "document": "d  ONE"}, "w")
    assert set(retrieval.dedup_keys(first)) & set(retrieval.dedup_keys(same_document))
    two = [{"query": "a", "document": "b"}, {"query": "c", "document": "d"}]
    score = retrieval.baseline([], two, []).score
    assert score == pytest.approx(100 * (1 + 1 / 1.5849625) / 2, abs=1e-4)  # rank 1 or 2, equally likely


@pytest.mark.parametrize(
    ("task_type", "row", "message"),
    [
        ("token_classification", {"tokens": ["a", "b"], "tags": ["O"]}, "field 'tags': 1 tags for 2 tokens"),
        ("token_classification", {"tokens": ["a"], "tags": ["PER"]}, "field 'tags': tag 0 is 'PER'; tags are IOB2 names"),
        ("token_classification", {"tokens": ["a", "b"], "tags": ["O", "I-PER"]}, "field 'tags': tag 1 'I-PER' does not continue"),
        ("token_classification", {"tokens": ["a", "b"], "tags": ["B-ORG", "I-PER"]}, "field 'tags': tag 1 'I-PER' does not continue"),
        ("token_classification", {"tokens": ["a", " "], "tags": ["O", "O"]}, "field 'tokens': token 1 is ''"),
        ("token_classification", {"tokens": "a b", "tags": ["O", "O"]}, "field 'tokens': expected a list of strings"),
        (
            "extractive_qa",
            {"question": "q", "context": "Paris is big.", "answers": {"text": ["Rome"], "answer_start": [0]}},
            "field 'answers': 'Rome' is not the context's text at 0",
        ),
        (  # a negative offset slices from the end: "big." is there, read backwards; it became "no answer" silently
            "extractive_qa",
            {"question": "q", "context": "Paris is big.", "answers": {"text": ["big."], "answer_start": [-4]}},
            "field 'answers': 'big.' is not the context's text at -4",
        ),
        (
            "extractive_qa",
            {"question": "q", "context": "Paris is big.", "answers": {"text": ["a"], "answer_start": [True]}},
            "field 'answers': 'a' is not the context's text at True",
        ),
        (
            "extractive_qa",
            {"question": "q", "context": "c", "answers": [{"text": "c"}]},
            "field 'answers': expected {'text': [...], 'answer_start': [...]}",
        ),
        (
            "extractive_qa",
            {"question": "q", "context": "c", "answers": {"text": ["c"], "answer_start": []}},
            "field 'answers': 'text' and 'answer_start' must be lists of one length",
        ),
        ("sequence_classification", {"text": "t", "label": 3}, "field 'label': expected a string, got 3"),
        ("retrieval", {"query": "q", "document": None}, "field 'document': expected a string, got None"),
    ],
)
def test_a_bad_row_names_its_row_and_field(task_type, row, message):
    with pytest.raises(PipelineError) as error:
        TASK_TYPES[task_type].prepare(row, "tasks.t.data: row 'r7'")
    assert str(error.value).startswith(f"tasks.t.data: row 'r7' {message}")
    assert "\n" not in str(error.value)


def test_a_bad_row_stops_prepare_task_with_a_one_line_error(tmp_path, capsys):
    rows = [{"tokens": ["EU", "rejects"], "ner_tags": ["B-ORG"]}]
    hub = hub_spec({"train": write_jsonl(tmp_path / "train.jsonl", rows)}, {"tokens": "tokens", "tags": "ner_tags"})
    assert prepare(tmp_path, "token_classification", hub, name="ner") == 2
    assert capsys.readouterr().err == "error: tasks.ner.data: row 'train/0' field 'tags': 1 tags for 2 tokens\n"


def test_empty_texts_drop_the_row_instead_of_failing():
    assert TASK_TYPES["sequence_classification"].prepare({"text": "a", "text_pair": " \u200b ", "label": "x"}, "w") is None
    assert TASK_TYPES["token_classification"].prepare({"tokens": [], "tags": []}, "w") is None
    assert TASK_TYPES["extractive_qa"].prepare({"question": " ", "context": "c", "answers": {"text": [], "answer_start": []}}, "w") is None


def test_needle_rows_hide_the_number_between_sentences_at_the_depth():
    articles = [["One two three.", "Four five six seven."], ["Eight nine."]]
    cells = [(4, 0.5), (4, 0.0), (4, 1.0), (5, 0.25)]
    rows = list(needle_rows(articles, cells, random.Random(0)))
    # Random(0) starts at the second article, the first, the second, the second; the
    # words before the needle are trimmed at their start, those after at their end
    assert [r["context"] for r in rows] == [
        "Eight nine. The special magic number is 7890. One two",
        "The special magic number is 5242. One two three. Four",
        "nine. One two three. The special magic number is 7634.",
        "nine. The special magic number is 8808. One two three. Four",
    ]
    assert rows[0] == {
        "context": rows[0]["context"],
        "question": "What is the special magic number?",
        "answer": "7890",
        "length": 4,
        "depth": 0.5,
    }


def test_the_needle_number_never_occurs_in_its_haystack():
    articles = [[f"In {year} sales rose." for year in range(1000, 10000)]]
    for row in needle_rows(articles, [(40, 0.5)] * 50, random.Random(1)):
        haystack = row["context"].replace(f"The special magic number is {row['answer']}.", "")
        assert row["answer"] not in haystack


def test_iob1_rows_prepare_under_their_scheme_and_iob2_refuses_them_naming_the_fix():
    from pipeline.config import DataSourceSpec, TaskSpec
    from pipeline.data.task_rows import task_rows

    row = {"tokens": ["EU", "rejects", "German", "call"], "tags": ["I-ORG", "O", "I-MISC", "O"]}  # CoNLL-2003 as published

    def spec(scheme):
        return TaskSpec("TC", "token_classification", "span_f1", DataSourceSpec("hf"), "d", tagging_scheme=scheme)

    assert task_rows(spec("IOB1")).prepare(row, "w") == row
    with pytest.raises(PipelineError) as error:
        task_rows(spec(None)).prepare(row, "w")
    assert str(error.value) == (
        "w field 'tags': tag 0 'I-ORG' does not continue a span of its type (IOB2; a source tagged IOB1 says tagging_scheme: IOB1)"
    )


def test_a_label_id_outside_the_declared_names_is_refused_naming_its_row(tmp_path, capsys):
    """class_names [neg, pos] and rows labelled 7 and -1 in train, 9 in test: once a 5-class task with
    a test row no model could get right; now refused at the first, naming the file and the row."""
    rows = [{"text": "fine", "label": 1}, {"text": "odd", "label": 7}, {"text": "odder", "label": -1}]
    files = {
        "train": write_jsonl(tmp_path / "train.jsonl", rows),
        "test": write_jsonl(tmp_path / "test.jsonl", [{"text": "t", "label": 9}]),
    }
    hub = hub_spec(files, {"text": "text", "label": "label"}, class_names={"label": ["neg", "pos"]})
    assert prepare(tmp_path, "sequence_classification", hub) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == f"error: tasks.t.data.hub: {tmp_path / 'train.jsonl'}:2: column 'label': class id 7 is outside its 2 names (0-1)"
    assert not (tmp_path / "t").exists()  # nothing half-written


def test_label_names_are_cleaned_as_texts_and_an_empty_one_is_refused(tmp_path, capsys):
    rows = [{"text": f"row {i}", "label": ["pos ", "pos\u200b", "neg"][i % 3]} for i in range(60)]
    files = {
        "train": write_jsonl(tmp_path / "train.jsonl", rows),
        "test": write_jsonl(tmp_path / "test.jsonl", [{"text": "t", "label": "pos"}]),
    }
    assert prepare(tmp_path, "sequence_classification", hub_spec(files, {"text": "text", "label": "label"})) == 0
    assert stats_of(tmp_path)["labels"] == ["neg", "pos"]  # not "pos ", "pos\u200b" and "pos" as three classes
    empty = tmp_path / "empty"
    empty.mkdir()
    files = {"train": write_jsonl(empty / "train.jsonl", [{"text": "a", "label": " "}]), "test": files["test"]}
    assert prepare(empty, "sequence_classification", hub_spec(files, {"text": "text", "label": "label"})) == 2
    assert "field 'label': ' ' is empty once cleaned; a label names its class" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("names", "problem"), [(["pos", "pos "], "name 1 'pos ' is the same as name 0 ('pos')"), (["neg", ""], "name 1 '' is empty")]
)
def test_declared_names_that_clean_to_one_or_to_nothing_are_refused(tmp_path, capsys, names, problem):
    files = {
        "train": write_jsonl(tmp_path / "train.jsonl", [{"text": "a", "label": 0}]),
        "test": write_jsonl(tmp_path / "test.jsonl", [{"text": "t", "label": 0}]),
    }
    assert (
        prepare(tmp_path, "sequence_classification", hub_spec(files, {"text": "text", "label": "label"}, class_names={"label": names})) == 2
    )
    assert f"tasks.t.data.hub.class_names.label: {problem}" in capsys.readouterr().err


def test_an_answer_ending_inside_a_combined_character_is_refused_as_such():
    """'Jose' of 'Jose\\u0301' (a combining acute): NFC makes the context 'José', where 'Jose' is no longer found."""
    row = {"question": "Who?", "context": "Jose\u0301 came.", "answers": {"text": ["Jose"], "answer_start": [0]}}
    with pytest.raises(PipelineError) as error:
        TASK_TYPES["extractive_qa"].prepare(row, "w")
    assert str(error.value) == (
        "w field 'answers': 'Jose' ends inside a character of the context (a combining mark follows); answers end on whole characters"
    )
    assert TASK_TYPES["extractive_qa"].prepare(row, "w", raw=True)["answers"]["text"] == ["Jose"]  # raw text: as the source gives it
