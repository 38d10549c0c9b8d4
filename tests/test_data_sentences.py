"""The rule-based sentence splitter and the capitalisation rule for proper names."""

from __future__ import annotations

import pytest

from pipeline.data.sentences import split_sentences
from pipeline.data.sources.names import NameFinder, iob2_tags, tokenize


@pytest.mark.parametrize(
    ("paragraph", "sentences"),
    [
        ("Shares rose 5%. 2005 will be better! Will it?", ["Shares rose 5%.", "2005 will be better!", "Will it?"]),
        ('He said: "We won." Then he left.', ['He said: "We won."', "Then he left."]),
        ('"Will we win?" he asked. "Yes."', ['"Will we win?" he asked.', '"Yes."']),  # lower case goes on
        (
            "Mr. Brown and Dr. Grey met J. K. Rowling at Apple Inc. Friday.",
            ["Mr. Brown and Dr. Grey met J. K. Rowling at Apple Inc. Friday."],
        ),
        (
            "It cost $1.5bn. (The firm said so.) Wait... Then it fell.",
            ["It cost $1.5bn.", "(The firm said so.)", "Wait...", "Then it fell."],
        ),
        ("Sales, fees etc. and more. The end", ["Sales, fees etc. and more.", "The end"]),
        ("", []),
    ],
)
def test_sentences_end_at_stops_before_a_capital(paragraph, sentences):
    assert split_sentences(paragraph) == sentences


def names(finder: NameFinder, sentence: str) -> list[str]:
    tokens = tokenize(sentence)
    return [sentence[tokens[i].start() : tokens[j - 1].end()] for i, j in finder.spans(sentence, tokens)]


CORPUS = [
    "Analysts say Labour will win.",
    "The vote backed Labour again.",
    "Voters like the party.",
    "Time Warner said the time was right.",
    'I think "We can win," said Anna Berg of Halden Bank.',
]


def test_names_are_runs_of_words_capitalised_mid_sentence():
    finder = NameFinder(CORPUS)
    assert names(finder, "Analysts say Labour will win.") == ["Labour"]
    # sentence-initial words count as names only when capitalised mid-sentence more often:
    # "Labour" is (twice), "The" and "Time" are not ("the", "time" lower-case)
    assert names(finder, "Labour won in Leeds.") == ["Labour", "Leeds"]
    assert names(finder, "The vote backed Labour again.") == ["Labour"]
    assert names(finder, "Time Warner said the time was right.") == ["Warner"]
    # "I" is never a name; the first word of a quotation is like a sentence's first word
    assert names(finder, 'I think "We can win," said Anna Berg of Halden Bank.') == ["Anna Berg", "Halden Bank"]


def test_tokens_split_punctuation_and_possessives_like_conll():
    sentence = "Time Warner's U.S. arm (AOL) didn't pay O'Neill $1.5bn."
    assert [t.group() for t in tokenize(sentence)] == [
        "Time",
        "Warner",
        "'s",
        "U.S",
        ".",
        "arm",
        "(",
        "AOL",
        ")",
        "didn't",
        "pay",
        "O'Neill",
        "$",
        "1.5bn",
        ".",
    ]
    finder = NameFinder(CORPUS)
    assert names(finder, sentence) == ["Warner", "U.S", "AOL", "O'Neill"]


def test_iob2_tags_open_and_continue_spans():
    assert iob2_tags(6, [(0, 2), (3, 4)]) == ["B-NAME", "I-NAME", "O", "B-NAME", "O", "O"]
