"""Every task file of config/tasks/paper (the study's 12 datasets) prepared offline from local
files in the format and schema its hub repository serves: Parquet with ClassLabel features for
the GLUE, CoNLL, OntoNotes, Universal NER, SQuAD and ReCoRD copies; BEIR's JSON Lines corpus and
queries with tab-separated qrels; MLDR's judgements nested in its query rows. Only the
location changes (``path``/``data_files``); splits, fields, templates and judgements are the
task file's own. Values are made up; columns and nesting are the hub's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pipeline.__main__ import main
from pipeline.external.hub_records import datasets_features, hub_records
from pipeline.workflow.record_lengths import part_of
from tests.conftest import REPO
from tests.paper_hub import filler, jsonl_gz, parquet, tsv

TASK_DIR = REPO / "config" / "tasks" / "paper"


def local(hub: dict, path: str, files: dict[str, str], extra: dict | None = None) -> dict:
    """The task file's hub entry read from local files instead: its splits and fields kept."""
    return {**hub, "path": path, "name": None, "data_files": files, **(extra or {})}


def task_file(name: str) -> dict:
    return yaml.safe_load((TASK_DIR / f"{name}.yaml").read_text())


def prepare(tmp_path: Path, name: str, task: dict) -> tuple[dict, dict[str, list[dict]]]:
    arguments = ["prepare-task", "--name", name, "--spec", json.dumps(task), "--sources", str(tmp_path), "--out", str(tmp_path / name)]
    assert main(arguments) == 0
    out = tmp_path / name
    rows = {
        split: [json.loads(line) for line in (out / f"{split}.jsonl").read_text().splitlines()]
        for split in ("train", "validation", "test", "documents")
    }
    return json.loads((out / "stats.json").read_text()), rows


# ---------------------------------------------------------------- SC: GLUE's Parquet

GLUE = {
    "sst2": ({"sentence": "string"}, ["negative", "positive"], "validation"),
    "mnli": ({"premise": "string", "hypothesis": "string"}, ["entailment", "neutral", "contradiction"], "validation_matched"),
    "qqp": ({"question1": "string", "question2": "string"}, ["not_duplicate", "duplicate"], "validation"),
}


@pytest.mark.parametrize("name", sorted(GLUE))
def test_glue_tasks_keep_the_official_validation_as_test_and_format_pairs_with_the_study_s_template(tmp_path, name):
    import datasets

    columns, labels, test_split = GLUE[name]
    features = {column: datasets.Value("string") for column in columns} | {
        "label": datasets.ClassLabel(names=labels),
        "idx": datasets.Value("int32"),
    }
    files = {}
    for split, count in (("train", 40), (test_split, 3)):
        table = {column: [f"{column} {split} {i}." for i in range(count)] for column in columns}
        table |= {"label": [i % 2 for i in range(count)], "idx": list(range(count))}
        files[split] = parquet(tmp_path / f"{split}.parquet", table, features)
    task = task_file(name)
    task["data"]["hub"] = local(task["data"]["hub"], "parquet", files)
    stats, rows = prepare(tmp_path, name, task)
    assert [row["text"] for row in rows["test"]][:1] == [
        {
            "sst2": "sentence validation 0.",
            "mnli": "Premise: premise validation_matched 0.\nHypothesis: hypothesis validation_matched 0.",
            "qqp": "Question 1: question1 validation 0.\nQuestion 2: question2 validation 0.",
        }[name]
    ]
    assert "text_pair" not in rows["test"][0]  # the study joins a pair into one text
    assert stats["num_rows"]["test"] == 3 and stats["num_rows"]["validation"] + stats["num_rows"]["train"] == 40
    assert stats["labels"] == sorted(labels[:2])


# ---------------------------------------------------------------- TC: tags as ClassLabel sequences


@pytest.mark.parametrize("name", ["conll2003", "ontonotes", "uner_en"])
def test_token_classification_tasks_read_their_own_three_splits(tmp_path, name):
    """Files typed as each dataset's record says (OntoNotes' tags bare ids, the others' ClassLabels),
    tags over its own names: the source's ids kept, every declared name numbered in its order."""

    part = hub_records().for_task(name).parts[0]
    fields = task_file(name)["data"]["hub"]["fields"]
    names = part.label_names[fields["tags"]]
    first, second, third = list(dict.fromkeys(name[2:] for name in names if name != "O"))[:3]
    sentences = {
        "train": (["Bush", "spoke"], [f"B-{first}", "O"]),
        "validation": (["in", "Iraq"], ["O", f"B-{third}"]),
        "test": (["Al", "Jazeera", "said"], [f"B-{second}", f"I-{second}", "O"]),
    }
    features = {column: datasets_features(kind, part.label_names.get(column, ())) for column, kind in part.features.items()}
    files = {}
    for split, (tokens, tags) in sentences.items():
        table = {column: [filler(kind, column, split, 0, part.label_names.get(column, ()))] for column, kind in part.features.items()}
        table |= {fields["tokens"]: [tokens], fields["tags"]: [[names.index(tag) for tag in tags]]}
        files[split] = parquet(tmp_path / f"{split}.parquet", table, features)
    task = task_file(name)
    task["data"]["hub"] = local(task["data"]["hub"], "parquet", files)
    stats, rows = prepare(tmp_path, name, task)
    assert stats["labels"] == list(names)
    assert rows["test"][0]["tokens"] == ["Al", "Jazeera", "said"]
    assert [names[i] for i in rows["test"][0]["tags"]] == [f"B-{second}", f"I-{second}", "O"]
    assert [names[i] for i in rows["validation"][0]["tags"]] == ["O", f"B-{third}"]


# ---------------------------------------------------------------- QA: SQuAD's layout


@pytest.mark.parametrize("name", ["squad", "squad_v2", "record"])
def test_qa_tasks_keep_the_answers_and_test_on_the_validation_split(tmp_path, name):
    import datasets

    features = {
        "id": datasets.Value("string"),
        "title": datasets.Value("string"),
        "context": datasets.Value("string"),
        "question": datasets.Value("string"),
        "answers": datasets.Sequence({"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}),
    }
    context = "The Normans were in Normandy, a region in France."
    files = {}
    for split, count in (("train", 20), ("validation", 2)):
        table = {
            "id": [f"{split}-{i}" for i in range(count)],
            "title": ["Normans"] * count,
            "context": [f"{context} ({split} {i})" for i in range(count)],
            "question": [f"Where is Normandy? ({i})" for i in range(count)],
            "answers": [{"text": ["France"], "answer_start": [42]}] * count,
        }
        files[split] = parquet(tmp_path / f"{split}.parquet", table, features)
    task = task_file(name)
    task["data"]["hub"] = local(task["data"]["hub"], "parquet", files)
    stats, rows = prepare(tmp_path, name, task)
    assert stats["num_rows"]["test"] == 2
    answers = rows["test"][0]["answers"]
    assert answers["text"] == ["France"] and rows["test"][0]["context"][answers["answer_start"][0] :].startswith("France")


# ---------------------------------------------------------------- IR: BEIR's corpus, queries and qrels; MLDR's nesting

PAIRS = {"query": [f"what is thing {i}" for i in range(30)], "positive": [f"Thing {i} is a thing." for i in range(30)]}


def ir_task(tmp_path: Path, name: str, judgements: dict, pairs: dict | None = None) -> dict:
    task = task_file(name)
    task["data"]["hub"] = local(task["data"]["hub"], "parquet", {"train": parquet(tmp_path / "pairs.parquet", pairs or PAIRS)})
    for source, replacement in judgements.items():
        task["judgements"][source] = local(task["judgements"][source], *replacement)
    return task


def beir_files(tmp_path: Path, corpus: list[dict], queries: list[dict]) -> dict[str, tuple]:
    return {
        "queries": ("json", {"queries": jsonl_gz(tmp_path / "queries.jsonl.gz", queries)}),
        "corpus": ("json", {"corpus": jsonl_gz(tmp_path / "corpus.jsonl.gz", corpus)}),
    }


def test_msmarco_ranks_every_judged_passage_and_binarises_trec_dl_s_graded_qrels(tmp_path):
    corpus = [{"_id": str(d), "title": "", "text": f"Passage {d}."} for d in range(100, 106)] + [
        {"_id": "999", "title": "", "text": "Unjudged."}
    ]
    queries = [{"_id": str(q), "text": f"question {q}"} for q in (1, 2, 3, 4)]
    validation = tsv(tmp_path / "dev.tsv", [(1, 100, 1)])
    test = tsv(tmp_path / "test.tsv", [(2, 101, 3), (2, 102, 0), (2, 103, 1), (3, 104, 0), (4, 105, 2)])  # TREC-DL's grades 0-3
    task = ir_task(
        tmp_path,
        "msmarco",
        {**beir_files(tmp_path, corpus, queries), "qrels": ("csv", {"validation": validation, "test": test}, {"delimiter": "\t"})},
    )
    stats, rows = prepare(tmp_path, "msmarco", task)
    assert rows["validation"] == [{"id": "1", "query": "Query: question 1", "relevant": ["100"]}]
    assert rows["test"] == [
        {"id": "2", "query": "Query: question 2", "relevant": ["101", "103"]},  # 102 judged 0: in the corpus, not relevant
        {"id": "4", "query": "Query: question 4", "relevant": ["105"]},
    ]  # query 3 has no relevant passage: EncodEval scores none for it
    assert rows["documents"] == [{"id": str(d), "document": f"Document: Passage {d}."} for d in range(100, 106)]  # not 999
    assert rows["train"][0] == {"id": "train/0", "query": "Query: what is thing 0", "document": "Document: Thing 0 is a thing."}
    assert stats["num_documents"] == 6 and stats["num_rows"] == {"train": 30, "validation": 1, "test": 2}


def test_nq_carves_validation_from_its_test_queries_by_a_seeded_hash_and_titles_its_passages(tmp_path):
    corpus = [{"_id": f"doc{q}", "title": f"Title {q}", "text": f"Text {q}."} for q in range(40)]
    queries = [{"_id": f"test{q}", "text": f"who is {q}"} for q in range(40)]
    test = tsv(tmp_path / "test.tsv", [(f"test{q}", f"doc{q}", 1) for q in range(40)])
    task = ir_task(tmp_path, "nq", {**beir_files(tmp_path, corpus, queries), "qrels": ("csv", {"test": test}, {"delimiter": "\t"})})
    _, rows = prepare(tmp_path, "nq", task)
    validation, test_ids = {row["id"] for row in rows["validation"]}, {row["id"] for row in rows["test"]}
    assert validation.isdisjoint(test_ids) and len(validation | test_ids) == 40 and 10 < len(validation) < 30
    assert rows["documents"][3] == {"id": "doc3", "document": "Document: Title 3. Text 3."}
    _, again = prepare(tmp_path / "again", "nq", task)
    assert again["validation"] == rows["validation"]  # the same half every time (EncodEval's differs run to run)


def test_mldr_takes_its_judgements_and_queries_from_the_nested_positive_passages(tmp_path):
    import datasets

    passage = datasets.Features({"docid": datasets.Value("string"), "text": datasets.Value("string")})
    features = {
        "query_id": datasets.Value("string"),
        "query": datasets.Value("string"),
        "positive_passages": [passage],
        "negative_passages": [passage],
    }

    def split(name: str, numbers: range) -> str:
        table = {
            "query_id": [f"q{n}" for n in numbers],
            "query": [f"long question {n}" for n in numbers],
            "positive_passages": [[{"docid": f"d{n}", "text": f"Long document {n}."}] for n in numbers],
            "negative_passages": [[{"docid": "dx", "text": "Unrelated."}] for _ in numbers],
        }
        return parquet(tmp_path / f"{name}.parquet", table, features)

    corpus = parquet(
        tmp_path / "corpus.parquet",
        {"docid": [f"d{n}" for n in range(5)] + ["dx"], "text": [f"Long document {n}." for n in range(5)] + ["Unrelated."]},
    )
    judgements = {
        "qrels": ("parquet", {"dev": split("dev", range(2)), "test": split("test", range(2, 5))}),
        "corpus": ("parquet", {"corpus": corpus}),
    }
    stats, rows = prepare(tmp_path, "mldr_en", ir_task(tmp_path, "mldr_en", judgements))
    assert rows["validation"] == [{"id": f"q{n}", "query": f"Query: long question {n}", "relevant": [f"d{n}"]} for n in range(2)]
    assert [row["relevant"] for row in rows["test"]] == [["d2"], ["d3"], ["d4"]]
    assert [document["id"] for document in rows["documents"]] == ["d0", "d1", "d2", "d3", "d4"]  # positives only, as EncodEval keeps
    # 5 documents, 1 relevant each, at each rank with probability 1/5: (1 + 1/log2 3 + 1/2 + 1/log2 5 + 1/log2 6) / 5
    assert stats["majority_test_score"] == 58.9692


def test_every_training_pair_stays_as_in_encodeval_and_deduplicating_drops_those_repeating_a_judged_one(tmp_path):
    """The paper's msmarco trains on every pair, as EncodEval's msmarco-pairs loader does; with
    deduplicate: true, pairs repeating a judged query or passage go. Judged queries all stay."""
    corpus = [{"_id": "100", "title": "", "text": "Passage 100."}, {"_id": "101", "title": "", "text": "Passage 101."}]
    queries = [{"_id": "1", "text": "question one"}, {"_id": "2", "text": "question one"}]  # two judged queries, one text
    qrels = {"validation": tsv(tmp_path / "dev.tsv", [(1, 100, 1)]), "test": tsv(tmp_path / "test.tsv", [(2, 101, 1)])}
    pairs = {"query": ["question one", "another question", "a third one"], "positive": ["Unrelated.", "Passage 101.", "Kept."]}
    task = ir_task(tmp_path, "msmarco", {**beir_files(tmp_path, corpus, queries), "qrels": ("csv", qrels, {"delimiter": "\t"})}, pairs)
    stats, rows = prepare(tmp_path, "msmarco", task)
    assert [row["query"] for row in rows["train"]] == ["Query: question one", "Query: another question", "Query: a third one"]
    assert [row["id"] for row in rows["validation"] + rows["test"]] == ["1", "2"] and stats["duplicates_removed"] == 0
    stats, rows = prepare(tmp_path / "deduplicated", "msmarco", {**task, "deduplicate": True})
    assert [row["query"] for row in rows["train"]] == ["Query: a third one"]
    assert [row["id"] for row in rows["validation"] + rows["test"]] == ["1", "2"] and stats["duplicates_removed"] == 2


def prepare_judged_msmarco(tmp_path: Path, corpus: list[dict], test_judgements: list[tuple]) -> int:
    """prepare-task on a one-query MS MARCO whose validation judges passage 100 and whose test
    judges ``test_judgements``, in ``tmp_path/out``; its exit code."""
    qrels = {"validation": tsv(tmp_path / "dev.tsv", [(1, 100, 1)]), "test": tsv(tmp_path / "test.tsv", test_judgements)}
    beir = beir_files(tmp_path, corpus, [{"_id": "1", "text": "question"}])
    task = ir_task(tmp_path, "msmarco", {**beir, "qrels": ("csv", qrels, {"delimiter": "\t"})})
    return main(
        ["prepare-task", "--name", "msmarco", "--spec", json.dumps(task), "--sources", str(tmp_path), "--out", str(tmp_path / "out")]
    )


def test_a_judged_passage_missing_from_the_corpus_is_one_line_naming_it(tmp_path, capsys):
    assert prepare_judged_msmarco(tmp_path, [{"_id": "100", "title": "", "text": "Passage."}], [(1, 404, 1)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]  # after the fixture's own progress bars
    assert error == "error: tasks.msmarco.judgements.corpus: 1 judged document(s) not in the corpus, e.g. '404'"
    assert not (tmp_path / "out").exists()


def test_every_dataset_of_the_study_has_a_task_file_and_runs_in_the_paper_config():
    study = {"sst2", "mnli", "qqp", "conll2003", "ontonotes", "uner_en", "squad", "squad_v2", "record", "msmarco", "nq", "mldr_en"}
    assert {path.stem for path in TASK_DIR.glob("*.yaml")} == study
    assert set(yaml.safe_load((REPO / "config" / "paper.yaml").read_text())["finetuning"]["tasks"]) == study


def test_each_task_file_tests_on_the_study_s_split_so_its_examples_can_pair_with_the_study_s():
    from pipeline import strict
    from pipeline.config import TaskSpec
    from pipeline.external.encodeval import STUDY_TEST_SOURCES, UNSEEDED_TEST_SPLITS

    dataset_of = {"mnli": "mnli_m", "conll2003": "conll2003_en"}  # EncodEval's names where they differ
    for path in sorted(TASK_DIR.glob("*.yaml")):
        spec = strict.parse_json(TaskSpec, json.dumps(task_file(path.stem)), path.stem)
        dataset = dataset_of.get(path.stem, path.stem)
        if dataset in UNSEEDED_TEST_SPLITS:
            assert spec.test_source == "BeIR/nq-qrels test, a seeded half of its queries"
        else:
            assert spec.test_source in STUDY_TEST_SOURCES[dataset], path.stem


def test_each_task_file_reads_its_dataset_as_its_record_has_it(paper):
    """The task files and config/paper.yaml against pipeline/external/published/hub_records.yaml: the
    columns each reads exist there, a tagging task's scheme and names are its record's, and the
    outside models are the released checkpoints recorded."""
    records = hub_records()
    for path in sorted(TASK_DIR.glob("*.yaml")):
        task = task_file(path.stem)
        record, hub = records.for_task(path.stem), task["data"]["hub"]
        assert record is not None, path.stem
        part = part_of(paper, path.stem, record)  # the part its training data is read from, as the cost estimate finds it
        parts = [part] if part is not None else []
        assert parts or path.stem in ("nq", "mldr_en"), path.stem  # both train on msmarco's pairs, recorded under msmarco
        columns = {column for part in parts for features in part.split_features().values() for column in features}
        assert set(hub["fields"].values()) <= columns or not parts, path.stem
        if record.tagging_scheme is not None:
            assert task["tagging_scheme"] == record.tagging_scheme, path.stem
            assert tuple(hub["class_names"]["tags"]) == parts[0].label_names[hub["fields"]["tags"]], path.stem
    assert {model.path for model in paper.outside_models} == set(records.released_checkpoints.models)
