"""Cleaning, dedup keys, word n-grams and the contamination index, on hand-checked cases."""

from __future__ import annotations

from pipeline.data.decontaminate import ContaminationIndex
from pipeline.data.text import clean_text, count_words, dedup_key, word_ngrams, words


def test_clean_text_normalises_unicode_and_spacing_but_keeps_lines():
    raw = "  Cafe\u0301\tau\u00a0lait \r\n\r\n\n  second\u200b line  \x0c\r\nthird"
    assert clean_text(raw) == "Caf\u00e9 au lait\nsecond line\nthird"
    assert clean_text(" \n\t \r\n") == ""


def test_dedup_key_ignores_case_and_spacing_only():
    assert dedup_key("City WIN\n the  cup.") == dedup_key("city win the cup.")
    assert dedup_key("city win the cup.") != dedup_key("city win the cup!")


def test_words_and_ngrams():
    tokens = words("Don't panic: it's 42, O.K.?")
    assert tokens == ["don", "t", "panic", "it", "s", "42", "o", "k"]
    assert list(word_ngrams(["a", "b", "c", "d"], 3)) == ["a b c", "b c d"]
    assert list(word_ngrams(["a", "b"], 3)) == []
    assert count_words("one two\nthree") == 3


def make_index() -> ContaminationIndex:
    index = ContaminationIndex(4)
    index.add_task("sentiment", ["A dull, lifeless script sinks it.", "Horrible."])
    index.add_task("topic", ["City won the cup final on Saturday."])
    return index


def test_a_shared_ngram_contaminates_across_case_punctuation_and_lines():
    index = make_index()
    assert index.tasks_in("Critics agreed: a DULL lifeless\nscript ruined the evening.") == ["sentiment"]
    assert index.tasks_in("Report: city won the cup, final whistle at six.") == ["topic"]
    both = "A dull lifeless script. City won the cup final."
    assert index.tasks_in(both) == ["sentiment", "topic"]


def test_a_clean_document_is_kept():
    index = make_index()
    assert index.tasks_in("A lively script about a cup final that nobody won.") == []


def test_a_short_text_matches_only_a_whole_line():
    index = make_index()
    assert index.tasks_in("The reviews were in.\nHORRIBLE!\nSaid one critic.") == ["sentiment"]
    # the word alone inside a sentence is not a copy of the one-word review
    assert index.tasks_in("The weather was horrible all week.") == []
