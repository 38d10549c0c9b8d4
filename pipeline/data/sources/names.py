"""Proper names in edited English prose, found from capitalisation alone.

The rule behind the proper-noun and cloze tasks' labels: a word is part of a name when
the text capitalises it where no sentence starts; a word that starts a sentence or a
quotation, where everything is capitalised, is a name only when the corpus capitalises
it mid-sentence more often than not ("Labour said" yes, "The firm said" no). The
pronoun "I" is never a name. Maximal runs of name words are the names: "Tony Blair",
"Time Warner" (or just "Warner" when "Time" starts the sentence, as the rule says).

Tokens are words (letters or digits, joined through ``-``, ``.``, ``&`` and inner
apostrophes: "Marks-and-Spencer", "U.S", "O'Neill"), the possessive ``'s``, and single
punctuation marks, as CoNLL-2003 tokenizes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

TOKEN = re.compile(r"\w+(?:(?:[-.&]|['\u2019](?![sS]\b))\w+)*|['\u2019][sS]\b|[^\w\s]")
_OPENING_QUOTES = frozenset("\"'\u201c\u2018")
_PRONOUN_I = re.compile(r"I(?:['\u2019]\w+)?")
NAME = "NAME"


def tokenize(sentence: str) -> list[re.Match[str]]:
    """The sentence's tokens as matches, so names can be cut from the original text."""
    return list(TOKEN.finditer(sentence))


class NameFinder:
    """Names in sentences, judged against one corpus's mid-sentence capitalisation counts."""

    def __init__(self, sentences: Iterable[str]) -> None:
        self.capitalised: Counter[str] = Counter()  # lower-cased word -> mid-sentence capitalised uses
        self.lower: Counter[str] = Counter()  # lower-cased word -> mid-sentence lower-case uses
        for sentence in sentences:
            tokens = tokenize(sentence)
            initial = _initial_positions(sentence, tokens)
            for i, token in enumerate(tokens):
                word = token.group()
                if i not in initial and word[0].isalpha():
                    (self.capitalised if word[0].isupper() else self.lower)[word.lower()] += 1

    def spans(self, sentence: str, tokens: list[re.Match[str]]) -> list[tuple[int, int]]:
        """Token index ranges ``[start, end)`` of the names in ``sentence``, in order."""
        initial = _initial_positions(sentence, tokens)
        spans: list[tuple[int, int]] = []
        for i, token in enumerate(tokens):
            if self._is_name_word(token.group(), i in initial):
                if spans and spans[-1][1] == i:
                    spans[-1] = (spans[-1][0], i + 1)
                else:
                    spans.append((i, i + 1))
        return spans

    def _is_name_word(self, word: str, initial: bool) -> bool:
        if not word[0].isupper() or _PRONOUN_I.fullmatch(word):
            return False
        key = word.lower()
        return not initial or self.capitalised[key] > self.lower[key]


def iob2_tags(num_tokens: int, spans: list[tuple[int, int]]) -> list[str]:
    """One tag per token: B-NAME opens a name, I-NAME continues it, O is outside."""
    tags = ["O"] * num_tokens
    for start, end in spans:
        tags[start:end] = [f"B-{NAME}"] + [f"I-{NAME}"] * (end - start - 1)
    return tags


def _initial_positions(sentence: str, tokens: list[re.Match[str]]) -> set[int]:
    """Indices of the words where capitals say nothing: the sentence's first word and the
    first word of each quotation (after an opening quote, one that follows a space)."""
    initial: set[int] = set()
    at_start = True
    for i, token in enumerate(tokens):
        word = token.group()
        if word[0].isalnum():
            if at_start:
                initial.add(i)
            at_start = False
        elif word in _OPENING_QUOTES and (token.start() == 0 or sentence[token.start() - 1].isspace()):
            at_start = True
    return initial
